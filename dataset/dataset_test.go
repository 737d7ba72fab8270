package dataset

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func writeIDX(t *testing.T, dir, prefix string, n, h, w int, labelMagic uint32, gz bool) {
	t.Helper()
	var img, lab bytes.Buffer
	binary.Write(&img, binary.BigEndian, []uint32{2051, uint32(n), uint32(h), uint32(w)})
	for i := range n * h * w {
		img.WriteByte(byte(i % 251))
	}
	binary.Write(&lab, binary.BigEndian, []uint32{labelMagic, uint32(n)})
	for i := range n {
		lab.WriteByte(byte(i % 10))
	}
	write := func(name string, b []byte) {
		if gz {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(b)
			zw.Close()
			b = z.Bytes()
			name += ".gz"
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(prefix+"-images-idx3-ubyte", img.Bytes())
	write(prefix+"-labels-idx1-ubyte", lab.Bytes())
}

func TestReadIDX(t *testing.T) {
	dir := t.TempDir()
	writeIDX(t, dir, "train", 12, 4, 3, 2049, true)
	writeIDX(t, dir, "t10k", 5, 4, 3, 2049, false) // uncompressed files are found too
	train, test, err := Load("fashion", dir)
	if err != nil {
		t.Fatal(err)
	}
	if train.N != 12 || test.N != 5 || train.H != 4 || train.W != 3 || train.C != 1 {
		t.Fatalf("sets %d×%d×%d×%d and %d", train.N, train.H, train.W, train.C, test.N)
	}
	if train.Pixels[13] != 13 || train.Labels[11] != 1 {
		t.Fatalf("pixel 13 = %d, label 11 = %d", train.Pixels[13], train.Labels[11])
	}
	// Standardised with the training set's mean and deviation.
	x := make([]float32, 2*12)
	y := make([]uint8, 2)
	test.Batch([]int{0, 4}, x, y)
	want := (0/255.0 - train.Mean[0]) / train.Std[0]
	if d := float64(x[0]) - want; d > 1e-5 || d < -1e-5 || y[1] != 4 {
		t.Fatalf("x[0] = %v, want %v; y = %v", x[0], want, y)
	}
}

func TestIDXErrors(t *testing.T) {
	dir := t.TempDir()
	writeIDX(t, dir, "train", 3, 2, 2, 2051, true) // label file with the images' magic
	_, err := ReadIDX("x", filepath.Join(dir, "train-images-idx3-ubyte.gz"), filepath.Join(dir, "train-labels-idx1-ubyte.gz"))
	if err == nil || !strings.Contains(err.Error(), "magic number 2051, want 2049") {
		t.Errorf("wrong label magic: %v", err)
	}
	// Truncated image data.
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, []uint32{2051, 10, 28, 28})
	b.Write(make([]byte, 100))
	p := filepath.Join(dir, "short-images")
	os.WriteFile(p, b.Bytes(), 0o644)
	_, err = ReadIDX("x", p, filepath.Join(dir, "train-labels-idx1-ubyte.gz"))
	if err == nil || !strings.Contains(err.Error(), "ends early") {
		t.Errorf("truncated images: %v", err)
	}
	_, _, err = Load("fashion", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "install-fashion-mnist.sh") {
		t.Errorf("missing Fashion-MNIST: %v", err)
	}
	_, _, err = Load("cifar10", "")
	if err == nil || !strings.Contains(err.Error(), "--data-dir") {
		t.Errorf("CIFAR-10 without a folder: %v", err)
	}
	if _, _, err = Load("imagenet", ""); err == nil {
		t.Error("unknown data set accepted")
	}
}

func TestReadCIFAR(t *testing.T) {
	dir := t.TempDir()
	rec := func(label byte, r, g, b byte) []byte {
		out := []byte{label}
		for _, v := range []byte{r, g, b} {
			out = append(out, bytes.Repeat([]byte{v}, 1024)...)
		}
		return out
	}
	var train []byte
	for i := range 5 {
		d := rec(byte(i), 10, 20, byte(30+i))
		name := filepath.Join(dir, "data_batch_"+string(rune('1'+i))+".bin")
		os.WriteFile(name, append(d, rec(9, 1, 2, 3)...), 0o644)
		train = append(train, d...)
	}
	os.WriteFile(filepath.Join(dir, "test_batch.bin"), rec(7, 200, 100, 50), 0o644)
	tr, te, err := Load("cifar10", dir)
	if err != nil {
		t.Fatal(err)
	}
	if tr.N != 10 || te.N != 1 || tr.H != 32 || tr.C != 3 {
		t.Fatalf("train %d, test %d, shape %d×%d×%d", tr.N, te.N, tr.H, tr.W, tr.C)
	}
	// NHWC: the first pixel of the test image is (200, 100, 50).
	if px := te.Pixels[:3]; px[0] != 200 || px[1] != 100 || px[2] != 50 || te.Labels[0] != 7 {
		t.Fatalf("test pixel %v label %d", px, te.Labels[0])
	}
	os.WriteFile(filepath.Join(dir, "test_batch.bin"), rec(7, 1, 1, 1)[:3000], 0o644)
	if _, _, err := Load("cifar10", dir); err == nil || !strings.Contains(err.Error(), "3073-byte") {
		t.Errorf("short CIFAR file: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "test_batch.bin"), rec(12, 1, 1, 1), 0o644)
	if _, _, err := Load("cifar10", dir); err == nil || !strings.Contains(err.Error(), "label 12") {
		t.Errorf("bad CIFAR label: %v", err)
	}
}

// TestMNISTFromModuleCache finds the MNIST files that the GoMNIST module
// (a dependency of this module) puts in the module cache.
func TestMNISTFromModuleCache(t *testing.T) {
	train, test, err := Load("mnist", "")
	if err != nil {
		t.Fatal(err)
	}
	if train.N != 60000 || test.N != 10000 || train.H != 28 || train.W != 28 {
		t.Fatalf("MNIST sets of %d and %d images of %d×%d", train.N, test.N, train.H, train.W)
	}
	// The training set's mean and deviation of pixel/255 are 0.1307 and
	// 0.3081 (to four decimals).
	if d := train.Mean[0] - 0.1307; d > 1e-4 || d < -1e-4 {
		t.Errorf("mean %v", train.Mean[0])
	}
}

// TestIDXHeaderClaims: a tiny IDX file whose header claims 2³¹ bytes of
// pixels (2²¹ images of 32×32) is refused from its size, raw or
// gzip-compressed, before anything is allocated for the pixels; so is one
// over the caller's limit, and Probe reads only headers.
func TestIDXHeaderClaims(t *testing.T) {
	dir := t.TempDir()
	var hdr bytes.Buffer
	binary.Write(&hdr, binary.BigEndian, []uint32{2051, 1 << 21, 32, 32})
	hdr.Write(make([]byte, 1000))
	raw := filepath.Join(dir, "claim-images")
	os.WriteFile(raw, hdr.Bytes(), 0o644)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(hdr.Bytes())
	zw.Close()
	gz := filepath.Join(dir, "claim-images.gz")
	os.WriteFile(gz, z.Bytes(), 0o644)
	writeIDX(t, dir, "train", 3, 2, 2, 2049, false)
	labels := filepath.Join(dir, "train-labels-idx1-ubyte")
	for _, path := range []string{raw, gz} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := ReadIDX("x", path, labels)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "2097152 images of 32×32 (2.0 GB) but the file ends early") {
			t.Errorf("%s: %v", path, err)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
			t.Errorf("%s: %d bytes allocated to refuse it", path, d)
		}
	}
	// A header the file can hold, over the caller's limit.
	images := filepath.Join(dir, "train-images-idx3-ubyte")
	if _, err := ReadIDXLimit("x", images, labels, 11); err == nil || !strings.Contains(err.Error(), "more than the 11 bytes allowed") {
		t.Errorf("limit of 11 bytes: %v", err)
	}
	if s, err := ReadIDXLimit("x", images, labels, 12); err != nil || s.N != 3 {
		t.Errorf("limit of 12 bytes: %v", err)
	}
	// Probe reads the headers: 3 training and 5 test images.
	writeIDX(t, dir, "t10k", 5, 2, 2, 2049, true)
	info, err := Probe("fashion", dir)
	if err != nil || info.Train != 3 || info.Test != 5 || info.H != 2 || info.W != 2 || info.Bytes() != 8*5 {
		t.Errorf("Probe: %+v, %v", info, err)
	}
	// A label file shorter than its header says.
	os.WriteFile(labels, []byte{0, 0, 8, 1, 0, 0, 0, 3, 1}, 0o644)
	if _, err := Probe("fashion", dir); err == nil || !strings.Contains(err.Error(), "header says 3 labels but the file ends early") {
		t.Errorf("short label file: %v", err)
	}
}
