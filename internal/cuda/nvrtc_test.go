package cuda

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/dstein/dstein/internal/cuda/cudatest"
)

// TestNVRTCStandIn compiles through the NVRTC stand-in: the source, the
// program's name and every option reach the library and the PTX comes
// back whole; a refused program is a *CompileError carrying the log.
func TestNVRTCStandIn(t *testing.T) {
	n, err := openNVRTC(cudatest.FakeNVRTC(t, 13, 0), 0)
	if err != nil {
		t.Fatal(err)
	}
	if n.Major != 13 || n.Minor != 0 {
		t.Errorf("version %d.%d", n.Major, n.Minor)
	}
	src := `extern "C" __global__ void axpy(double a, const double *x, double *y) { y[threadIdx.x] += a * x[threadIdx.x]; }`
	ptx, err := n.Compile(src, "axpy.cu", "--gpu-architecture=compute_90", "-default-device")
	if err != nil {
		t.Fatal(err)
	}
	if want := "// PTX of axpy.cu --gpu-architecture=compute_90 -default-device\n" + src + "\x00"; string(ptx) != want {
		t.Errorf("PTX %q, want %q", ptx, want)
	}
	if _, err := n.Compile(src, "none.cu"); err != nil {
		t.Errorf("no options: %v", err)
	}
	_, err = n.Compile("#error no\n", "bad.cu")
	var ce *CompileError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "bad.cu(1): error: the source asked for an error") || !strings.Contains(err.Error(), "NVRTC_ERROR_COMPILATION") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a refused program: %v", err)
	}
	if _, err := openNVRTC(cudatest.FakeNVRTC(t, 11, 7), 0); err == nil || !strings.Contains(err.Error(), "NVRTC 11.7; dstein needs 11.8") {
		t.Errorf("NVRTC 11.7: %v", err)
	}
	// An NVRTC newer than the driver makes PTX the driver cannot load.
	if _, err := openNVRTC(cudatest.FakeNVRTC(t, 12, 8), 12040); err == nil || !strings.Contains(err.Error(), "NVRTC 12.8, newer than the driver's CUDA 12.4") {
		t.Errorf("NVRTC 12.8 on a 12.4 driver: %v", err)
	}
	if _, err := openNVRTC(cudatest.FakeNVRTC(t, 12, 4), 12040); err != nil {
		t.Errorf("NVRTC 12.4 on a 12.4 driver: %v", err)
	}
	// The driver's major version is tried first.
	if got := majorFirst(nvrtcSonames, 12080); !strings.HasSuffix(got[0], ".so.12") || len(got) != len(nvrtcSonames) {
		t.Errorf("order for a 12.8 driver: %v", got)
	}
	if got := majorFirst(nvrtcSonames, 13000); !strings.HasSuffix(got[0], ".so.13") {
		t.Errorf("order for a 13.0 driver: %v", got)
	}
	if got := majorFirst(cublasSonames, 12040); !strings.HasSuffix(got[0], ".so.12") || len(got) != len(cublasSonames) {
		t.Errorf("cuBLAS order for a 12.4 driver: %v", got)
	}
	t.Setenv(NVRTCEnv, "")
	saved := nvrtcSonames
	nvrtcSonames = []string{"libnvrtc-absent.so.13"}
	defer func() { nvrtcSonames = saved; forget("nvrtc::0") }()
	var u *Unavailable
	if _, err := LoadNVRTC(); !errors.As(err, &u) || !strings.Contains(err.Error(), "NVRTC) is not installed (tried libnvrtc-absent.so.13") {
		t.Errorf("no NVRTC: %v", err)
	}
}

// TestRealNVRTC compiles a kernel with the NVRTC the loader finds (CUDA
// 11.8 and later; no GPU needed) for Hopper, where DSTEIN_NVRTC_TEST=1.
func TestRealNVRTC(t *testing.T) {
	if os.Getenv("DSTEIN_NVRTC_TEST") != "1" {
		t.Skip("DSTEIN_NVRTC_TEST=1 runs this where NVRTC is installed")
	}
	n, err := LoadNVRTC()
	if err != nil {
		t.Fatal(err)
	}
	ptx, err := n.Compile(`extern "C" __global__ void axpy(double a, const double *x, double *y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] += a * x[i];
}`, "axpy.cu", "--gpu-architecture=compute_90")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ptx), ".entry axpy") || !strings.Contains(string(ptx), ".target sm_90") {
		t.Errorf("PTX without the kernel's entry or its target:\n%s", ptx)
	}
	t.Logf("NVRTC %d.%d at %s", n.Major, n.Minor, n.Path)
}
