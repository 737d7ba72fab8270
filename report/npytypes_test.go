package report

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dstein/dstein/internal/npy"
	"github.com/dstein/dstein/memlimit"
)

// TestReadDrawsNumPyTypes reads draws of every NumPy type numpy users
// save (both byte orders, half floats, 64-bit unsigned integers) and
// refuses integers that a float64 cannot hold exactly.
func TestReadDrawsNumPyTypes(t *testing.T) {
	want := []float64{0, 1, 2, 3, 1, 0, 3, 2}
	enc := func(descr string) []byte {
		var order binary.AppendByteOrder = binary.LittleEndian
		if descr[0] == '>' {
			order = binary.BigEndian
		}
		var out []byte
		for _, v := range want {
			switch descr[1:] {
			case "f8":
				out = order.AppendUint64(out, math.Float64bits(v))
			case "f4":
				out = order.AppendUint32(out, math.Float32bits(float32(v)))
			case "f2":
				// 0, 1, 2 and 3 as half floats.
				out = order.AppendUint16(out, map[float64]uint16{0: 0, 1: 0x3c00, 2: 0x4000, 3: 0x4200}[v])
			case "i8", "u8":
				out = order.AppendUint64(out, uint64(v))
			case "i4", "u4":
				out = order.AppendUint32(out, uint32(v))
			case "i2", "u2":
				out = order.AppendUint16(out, uint16(v))
			case "i1", "u1", "b1":
				out = append(out, byte(v))
			}
		}
		return out
	}
	dir := t.TempDir()
	write := func(descr string, data []byte) string {
		h, err := npy.Header(descr, []int{2, 2, 2})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, strings.NewReplacer("<", "le", ">", "be", "|", "na").Replace(descr)+".npy")
		if err := os.WriteFile(path, append(h, data...), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, descr := range []string{"<f8", ">f8", "<f4", ">f4", "<f2", ">f2", "<i8", ">i8", "<u8", ">u8", "<i4", ">i4", "<u4", "<i2", ">u2", "|i1", "|u1"} {
		d, err := ReadDraws(context.Background(), write(descr, enc(descr)), memlimit.Budget{})
		if err != nil {
			t.Errorf("%s: %v", descr, err)
			continue
		}
		for k, v := range d.Values {
			if v != want[k] {
				t.Errorf("%s: value %d is %v, want %v", descr, k, v, want[k])
			}
		}
	}
	big := binary.LittleEndian.AppendUint64(nil, 1<<53+1)
	for range 7 {
		big = binary.LittleEndian.AppendUint64(big, 1)
	}
	_, err := ReadDraws(context.Background(), write("<u8", big), memlimit.Budget{})
	if err == nil || !strings.Contains(err.Error(), "beyond ±2⁵³") {
		t.Errorf("an unsigned integer of 2⁵³ + 1: error %v, want one that says it is beyond ±2⁵³", err)
	}
	if _, err := ReadDraws(context.Background(), write("<c8", make([]byte, 64)), memlimit.Budget{}); err == nil || !strings.Contains(err.Error(), `"<c8"`) {
		t.Errorf("complex values: error %v, want one that names the type", err)
	}
}
