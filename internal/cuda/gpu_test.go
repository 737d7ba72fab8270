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
	n, err := LoadNVRTCFor(d.Version) // as gpu.Open loads it
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
	runAxpy(t, c, m, 1<<20)
}
