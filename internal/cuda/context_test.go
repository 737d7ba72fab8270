package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/dstein/dstein/internal/cuda/cudatest"
)

// TestContextStandIn runs the whole path of a kernel on the stand-in,
// whose device memory is the host's and whose axpy kernel runs on the
// host: memory allocated against the free memory, copies both ways, PTX
// loaded, the kernel found and launched with its arguments marshalled,
// and an unknown kernel and an oversized allocation refused.
func TestContextStandIn(t *testing.T) {
	d, err := open(cudatest.FakeDriver(t, 13000, 1))
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	free, total, err := c.MemInfo()
	if err != nil || free != 1<<30 || total != 141<<30 {
		t.Fatalf("memory %d of %d, %v", free, total, err)
	}
	const n = 1000
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i], y[i] = float64(i), 1
	}
	dx, err := c.Alloc(n * 8)
	if err != nil {
		t.Fatal(err)
	}
	dy, err := c.Alloc(n * 8)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CopyIn(dx, x); err != nil {
		t.Fatal(err)
	}
	if err := c.CopyIn(dy, y); err != nil {
		t.Fatal(err)
	}
	m, err := c.Load(append([]byte(`.entry axpy (...)`), 0))
	if err != nil {
		t.Fatal(err)
	}
	f, err := m.Func("axpy")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Launch([3]uint32{4, 1, 1}, [3]uint32{256, 1, 1}, 0.5, dx, dy, int32(n)); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, n)
	if err := c.CopyOut(out, dy); err != nil {
		t.Fatal(err)
	}
	for i := range out {
		if want := 1 + 0.5*float64(i); out[i] != want {
			t.Fatalf("y[%d] = %v, want %v", i, out[i], want)
		}
	}
	if _, err := m.Func("gemm"); err == nil || !strings.Contains(err.Error(), "cuModuleGetFunction(gemm)") {
		t.Errorf("an unknown kernel: %v", err)
	}
	if err := f.Launch([3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, "x"); err == nil || !strings.Contains(err.Error(), "argument 0 of type string") {
		t.Errorf("a string argument: %v", err)
	}
	var oom *OutOfMemory
	if _, err := c.Alloc(2 << 30); !errors.As(err, &oom) || oom.Free != 1<<30 {
		t.Errorf("2 GiB on a device with 1 GiB free: %v", err)
	}
	if _, err := c.Load([]byte("no NUL")); err == nil {
		t.Error("PTX without its NUL was loaded")
	}
	for _, p := range []Ptr{dx, dy} {
		if err := c.Free(p); err != nil {
			t.Error(err)
		}
	}
	if err := m.Unload(); err != nil {
		t.Error(err)
	}
}
