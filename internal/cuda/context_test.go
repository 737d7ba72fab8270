package cuda

import (
	"errors"
	"slices"
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
	c := standInContext(t)
	free, total, err := c.MemInfo()
	if err != nil || free != 1<<30 || total != 141<<30 {
		t.Fatalf("memory %d of %d, %v", free, total, err)
	}
	m, err := c.Load(append([]byte(`.entry axpy (...)`), 0))
	if err != nil {
		t.Fatal(err)
	}
	f := runAxpy(t, c, m, 1000)
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
	if err := m.Unload(); err != nil {
		t.Error(err)
	}
}

// runAxpy runs the module's kernel axpy(a, x, y, n) on n values through
// c (memory allocated, copied both ways and freed) and checks
// y = 1 + 0.5·x exactly; it returns the kernel.
func runAxpy(t *testing.T, c *Context, m *Module, n int) *Func {
	t.Helper()
	f, err := m.Func("axpy")
	if err != nil {
		t.Fatal(err)
	}
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i], y[i] = float64(i), 1
	}
	var ptrs []Ptr
	for _, v := range [][]float64{x, y} {
		p, err := c.Alloc(uint64(n) * 8)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := c.Free(p); err != nil {
				t.Error(err)
			}
		}()
		if err := c.CopyIn(p, v); err != nil {
			t.Fatal(err)
		}
		ptrs = append(ptrs, p)
	}
	blocks := uint32((n + 255) / 256)
	if err := f.Launch([3]uint32{blocks, 1, 1}, [3]uint32{256, 1, 1}, 0.5, ptrs[0], ptrs[1], int32(n)); err != nil {
		t.Fatal(err)
	}
	if err := c.CopyOut(y, ptrs[1]); err != nil {
		t.Fatal(err)
	}
	for i := range y {
		if want := 1 + 0.5*float64(i); y[i] != want {
			t.Fatalf("y[%d] = %v, want %v", i, y[i], want)
		}
	}
	return f
}

// standInContext opens device 0 of the stand-in driver (CUDA 13.0, one
// device); the context is closed when the test ends.
func standInContext(t *testing.T) *Context {
	t.Helper()
	d, err := open(cudatest.FakeDriver(t, 13000, 1))
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestQueueDoesNotAllocate: a sampler queues several kernels an
// iteration, so a launch (its arguments marshalled, the request handed to
// the context's thread and its reply) allocates nothing once warm, with
// arguments of every kind; more than maxKernelArgs arguments are refused.
func TestQueueDoesNotAllocate(t *testing.T) {
	c := standInContext(t)
	m, err := c.Load(append([]byte(`.entry axpy (...)`), 0))
	if err != nil {
		t.Fatal(err)
	}
	f := runAxpy(t, c, m, 16)
	x, err := c.Alloc(16 * 8)
	if err != nil {
		t.Fatal(err)
	}
	y, err := c.Alloc(16 * 8)
	if err != nil {
		t.Fatal(err)
	}
	a, n := 0.25, int32(16)
	grid, block := [3]uint32{1, 1, 1}, [3]uint32{16, 1, 1}
	if allocs := testing.AllocsPerRun(100, func() {
		if err := f.Queue(grid, block, a, x, y, n); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("Queue allocates %v times a launch", allocs)
	}
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
	args := make([]any, maxKernelArgs+1)
	for i := range args {
		args[i] = int32(i)
	}
	if err := f.Queue(grid, block, args...); err == nil || !strings.Contains(err.Error(), "arguments") {
		t.Errorf("%d arguments: %v", len(args), err)
	}
}

// TestCopiesDoNotAllocate: a sampler's iteration copies a few values back
// (log weights, flags) and waits, so copies both ways, fills and Sync
// allocate nothing once warm, and the values cross intact.
func TestCopiesDoNotAllocate(t *testing.T) {
	c := standInContext(t)
	p, err := c.Alloc(8 * 8)
	if err != nil {
		t.Fatal(err)
	}
	in := []float64{1.5, -2, 3, 0.25, 7, 8, 9, 10}
	out := make([]float64, 8)
	words := make([]uint32, 16)
	if allocs := testing.AllocsPerRun(100, func() {
		if err := Upload(c, p, in); err != nil {
			t.Fatal(err)
		}
		if err := Download(c, out, p); err != nil {
			t.Fatal(err)
		}
		if err := c.Sync(); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("an upload, a download and a sync allocate %v times", allocs)
	}
	if !slices.Equal(in, out) {
		t.Errorf("downloaded %v; uploaded %v", out, in)
	}
	if allocs := testing.AllocsPerRun(100, func() {
		if err := c.Fill32(p, 0xdeadbeef, 16); err != nil {
			t.Fatal(err)
		}
		if err := Download(c, words, p); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("a fill and a download allocate %v times", allocs)
	}
	for i, w := range words {
		if w != 0xdeadbeef {
			t.Fatalf("word %d is %#x after Fill32", i, w)
		}
	}
}
