package main

import (
	"strings"
	"testing"

	"github.com/dstein/dstein/internal/cuda"
	"github.com/dstein/dstein/internal/cuda/cudatest"
)

// TestGPUCommand: without a driver, dstein gpu says so in one line with
// exit code 4; with a (fake) driver it lists the devices.
func TestGPUCommand(t *testing.T) {
	t.Setenv(cuda.DriverEnv, "/nonexistent/libcuda.so.1")
	code, out, errs := dstein(t, "gpu")
	if code != exitNoGPU || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "no usable NVIDIA GPU") || !strings.Contains(errs, cuda.DriverEnv) {
		t.Errorf("no driver: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	t.Setenv(cuda.DriverEnv, cudatest.FakeDriver(t, 13000, 1))
	t.Setenv(cuda.NVRTCEnv, cudatest.FakeNVRTC(t, 13, 0))
	code, out, errs = dstein(t, "gpu")
	if code != 0 || !strings.Contains(out, "CUDA 13.0") || !strings.Contains(out, "NVRTC 13.0") || !strings.Contains(out, "Fake GPU 0") || !strings.Contains(out, "141.0 GiB") || !strings.Contains(out, "9.0") {
		t.Errorf("fake driver: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	t.Setenv(cuda.DriverEnv, cudatest.FakeDriver(t, 12080, 0))
	if code, _, errs = dstein(t, "gpu"); code != exitNoGPU || !strings.Contains(errs, "sees no device") {
		t.Errorf("no device: exit %d, %q", code, errs)
	}
}
