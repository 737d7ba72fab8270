package npy

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The header is the magic string, version 1.0, a little-endian length and
// the dict literal padded to a multiple of 64 bytes with a final newline,
// and it parses back to the shape and type written.
func TestHeader(t *testing.T) {
	for _, shape := range [][]int{{}, {0}, {5}, {3, 4}, {4, 1000, 100}, {2, 3, 4, 5, 6, 7, 8}, {1 << 40, 3}} {
		h, err := Header("<f8", shape)
		if err != nil {
			t.Fatal(err)
		}
		if len(h)%64 != 0 {
			t.Errorf("%v: header of %d bytes, not a multiple of 64", shape, len(h))
		}
		if !bytes.HasPrefix(h, []byte("\x93NUMPY\x01\x00")) {
			t.Errorf("%v: header starts %q", shape, h[:8])
		}
		if n := int(binary.LittleEndian.Uint16(h[8:10])); n != len(h)-10 {
			t.Errorf("%v: HEADER_LEN %d, want %d", shape, n, len(h)-10)
		}
		if h[len(h)-1] != '\n' {
			t.Errorf("%v: header does not end with a newline", shape)
		}
		info, err := ReadHeader(bytes.NewReader(h))
		if err != nil {
			t.Fatalf("%v: %v", shape, err)
		}
		if info.Descr != "<f8" || info.FortranOrder || !reflect.DeepEqual(info.Shape, shape) {
			t.Errorf("%v: read back %+v", shape, info)
		}
	}
	h, _ := Header("<i8", []int{7})
	if !strings.Contains(string(h), "'shape': (7,)") {
		t.Errorf("a 1-D shape is not written as a Python 1-tuple: %q", h)
	}
	h, _ = Header("<f8", []int{2, 3})
	if want := "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"; !strings.HasPrefix(string(h[10:]), want) {
		t.Errorf("header %q, want it to start with %q", h[10:], want)
	}
	for _, bad := range [][]int{{-1}, {math.MaxInt, 3}} {
		if _, err := Header("<f8", bad); err == nil {
			t.Errorf("shape %v accepted", bad)
		}
	}
}

// Headers as other writers lay them out (numpy's own, Python 2's longs, keys
// in another order, version 2.0) are read; malformed ones are refused.
func TestReadHeaderVariants(t *testing.T) {
	mk := func(major byte, dict string) []byte {
		b := append([]byte(Magic), major, 0)
		if major == 1 {
			b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)+1))
		} else {
			b = binary.LittleEndian.AppendUint32(b, uint32(len(dict)+1))
		}
		return append(append(b, dict...), '\n')
	}
	good := []struct {
		b    []byte
		want Info
	}{
		{mk(1, "{'shape': (3L, 2L), 'fortran_order': True, 'descr': '|u1'}"), Info{"|u1", true, []int{3, 2}}},
		{mk(2, `{"descr": "<i4", "fortran_order": False, "shape": ()}`), Info{"<i4", false, []int{}}},
	}
	for _, g := range good {
		info, err := ReadHeader(bytes.NewReader(g.b))
		if err != nil || !reflect.DeepEqual(info, g.want) {
			t.Errorf("%q: %+v, %v; want %+v", g.b, info, err, g.want)
		}
	}
	for _, b := range [][]byte{
		[]byte("NUMPY"),
		mk(4, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }"),
		mk(1, "{'descr': '<f8', 'shape': (1,), }"),
		mk(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (-1,), }"),
		mk(1, "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (1,), }"),
		mk(1, "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (1,), }"),
		mk(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'extra': 1}"),
	} {
		if info, err := ReadHeader(bytes.NewReader(b)); err == nil {
			t.Errorf("%q read as %+v", b, info)
		}
	}
}

func roundTrip[T Element](t *testing.T, shape []int, data []T) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, shape, data); err != nil {
		t.Fatal(err)
	}
	info, got, err := Read[T](&buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	if info.Descr != Descr[T]() || !reflect.DeepEqual(info.Shape, shape) {
		t.Errorf("%T: header %+v", data, info)
	}
	if !reflect.DeepEqual(got, data) {
		t.Errorf("%T: read back %v, wrote %v", data, got, data)
	}
}

// Every element type round-trips, values in C order, little-endian.
func TestRoundTrip(t *testing.T) {
	roundTrip(t, []int{2, 3}, []float64{-1, 1, 0.5, math.Inf(1), -0, 1e-300})
	roundTrip(t, []int{3}, []float32{-1, 1, 0.25})
	roundTrip(t, []int{2, 2}, []int8{-1, 1, -128, 127})
	roundTrip(t, []int{2}, []int16{-300, 300})
	roundTrip(t, []int{2}, []int32{-70000, 70000})
	roundTrip(t, []int{1, 2}, []int64{-1 << 40, 1 << 40})
	roundTrip(t, []int{3}, []uint8{0, 1, 255})
	roundTrip(t, []int{0, 5}, []float64{})
	big := make([]float64, 3*chunk+7) // more than one chunk
	for i := range big {
		big[i] = float64(i)
	}
	roundTrip(t, []int{len(big)}, big)
	var buf bytes.Buffer
	Write(&buf, []int{2}, []int16{1, -2})
	if raw := buf.Bytes()[buf.Len()-4:]; !bytes.Equal(raw, []byte{1, 0, 0xfe, 0xff}) {
		t.Errorf("int16 values %v; want little-endian 1, -2", raw)
	}
}

// A writer refuses more or fewer values than the shape holds; Read refuses
// another element type.
func TestCounts(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, []int{2, 2}, []float64{1, 2, 3}); err == nil {
		t.Error("3 values for a 2×2 shape accepted")
	}
	if err := Write(&buf, []int{2}, []float64{1, 2, 3}); err == nil {
		t.Error("3 values for a shape of 2 accepted")
	}
	buf.Reset()
	Write(&buf, []int{2}, []float64{1, 2})
	if _, _, err := Read[int64](bytes.NewReader(buf.Bytes()), 0); err == nil {
		t.Error("a '<f8' array read as int64")
	}
	if _, _, err := Read[float64](bytes.NewReader(buf.Bytes()), 1); err == nil {
		t.Error("an array larger than the limit was read")
	}
	if _, _, err := Read[float64](bytes.NewReader(buf.Bytes()[:buf.Len()-1]), 0); err == nil {
		t.Error("a truncated array was read")
	}
}

// pythonWith returns a Python interpreter that imports the module, trying
// $DSTEIN_PYTHON, python3 on the PATH and /usr/bin/python3, or skips the
// test saying why.
func pythonWith(t *testing.T, module string) string {
	t.Helper()
	var tried []string
	for _, p := range []string{os.Getenv("DSTEIN_PYTHON"), "python3", "/usr/bin/python3"} {
		if p == "" {
			continue
		}
		tried = append(tried, p)
		if exec.Command(p, "-c", "import "+module).Run() == nil {
			return p
		}
	}
	t.Skipf("no Python with %s (tried %s; apt-get install python3-%s, or set DSTEIN_PYTHON)", module, strings.Join(tried, ", "), module)
	return ""
}

// numpy.load reads every element type with the shape and values written.
func TestNumpyLoads(t *testing.T) {
	py := pythonWith(t, "numpy")
	dir := t.TempDir()
	write := func(name string, f func(*bytes.Buffer) error) {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("f8.npy", func(b *bytes.Buffer) error {
		return Write(b, []int{2, 3, 2}, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -0.5})
	})
	write("f4.npy", func(b *bytes.Buffer) error { return Write(b, []int{3}, []float32{1.5, -2, 3}) })
	write("i1.npy", func(b *bytes.Buffer) error { return Write(b, []int{2, 2}, []int8{-1, 1, 1, -1}) })
	write("i2.npy", func(b *bytes.Buffer) error { return Write(b, []int{2}, []int16{-300, 300}) })
	write("i4.npy", func(b *bytes.Buffer) error { return Write(b, []int{1}, []int32{-70000}) })
	write("i8.npy", func(b *bytes.Buffer) error { return Write(b, []int{2, 1}, []int64{1 << 40, -3}) })
	write("u1.npy", func(b *bytes.Buffer) error { return Write(b, []int{}, []uint8{200}) })
	write("empty.npy", func(b *bytes.Buffer) error { return Write(b, []int{0, 4}, []float64{}) })
	script := `
import numpy as np, sys
d = sys.argv[1]
def check(name, dtype, shape, values):
    a = np.load(d + "/" + name)
    assert a.dtype == np.dtype(dtype), (name, a.dtype)
    assert a.shape == shape, (name, a.shape)
    assert a.flags.c_contiguous
    assert np.array_equal(a.ravel(), np.array(values, dtype=dtype)), (name, a)
check("f8.npy", "<f8", (2, 3, 2), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -0.5])
assert np.load(d + "/f8.npy")[1, 2, 0] == 10
check("f4.npy", "<f4", (3,), [1.5, -2, 3])
check("i1.npy", "i1", (2, 2), [-1, 1, 1, -1])
check("i2.npy", "<i2", (2,), [-300, 300])
check("i4.npy", "<i4", (1,), [-70000])
check("i8.npy", "<i8", (2, 1), [1 << 40, -3])
check("u1.npy", "u1", (), [200])
check("empty.npy", "<f8", (0, 4), [])
print("ok", np.__version__)
`
	out, err := exec.Command(py, "-c", script, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	// And what numpy writes reads back here.
	gen := `
import numpy as np, sys
np.save(sys.argv[1] + "/np.npy", np.arange(24, dtype="<f8").reshape(2, 3, 4))
`
	if out, err := exec.Command(py, "-c", gen, dir).CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	f, err := os.Open(filepath.Join(dir, "np.npy"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, v, err := Read[float64](f, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(info.Shape, []int{2, 3, 4}) || v[23] != 23 || v[5] != 5 {
		t.Errorf("numpy's file read as %+v, %v", info, v)
	}
}
