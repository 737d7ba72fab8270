package cuda

import (
	"fmt"
	"os"
	"testing"
)

// TestRealGPU runs a kernel on a real GPU: NVRTC compiles axpy, the
// driver loads and launches it, and the result is exact. It runs only
// where DSTEIN_GPU_TEST=1 (the GPU machine's script sets it); elsewhere it
// skips, saying so.
func TestRealGPU(t *testing.T) {
	if os.Getenv("DSTEIN_GPU_TEST") != "1" {
		t.Skip("DSTEIN_GPU_TEST=1 runs this on a machine with an NVIDIA GPU")
	}
	d, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	devs, err := d.Devices()
	if err != nil {
		t.Fatal(err)
	}
	n, err := LoadNVRTC()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("driver %s (CUDA %s), NVRTC %d.%d, %+v", d.Path, versionString(d.Version), n.Major, n.Minor, devs[0])
	src := `extern "C" __global__ void axpy(double a, const double *x, double *y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] += a * x[i];
}`
	ptx, err := n.Compile(src, "axpy.cu", fmt.Sprintf("--gpu-architecture=compute_%d%d", devs[0].Major, devs[0].Minor))
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m, err := c.Load(ptx)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unload()
	f, err := m.Func("axpy")
	if err != nil {
		t.Fatal(err)
	}
	const size = 1 << 20
	x, y := make([]float64, size), make([]float64, size)
	for i := range x {
		x[i], y[i] = float64(i), 1
	}
	dx, err := c.Alloc(size * 8)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free(dx)
	dy, err := c.Alloc(size * 8)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free(dy)
	if err := c.CopyIn(dx, x); err != nil {
		t.Fatal(err)
	}
	if err := c.CopyIn(dy, y); err != nil {
		t.Fatal(err)
	}
	if err := f.Launch([3]uint32{size / 256, 1, 1}, [3]uint32{256, 1, 1}, 0.5, dx, dy, int32(size)); err != nil {
		t.Fatal(err)
	}
	if err := c.CopyOut(y, dy); err != nil {
		t.Fatal(err)
	}
	for i := range y {
		if want := 1 + 0.5*float64(i); y[i] != want {
			t.Fatalf("y[%d] = %v, want %v", i, y[i], want)
		}
	}
}
