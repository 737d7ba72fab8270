package main

import (
	"os"
	"path/filepath"
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
	t.Setenv(cuda.CUBLASEnv, cudatest.FakeCUBLAS(t))
	code, out, errs = dstein(t, "gpu")
	if code != 0 || !strings.Contains(out, "CUDA 13.0") || !strings.Contains(out, "NVRTC 13.0") || !strings.Contains(out, "cuBLAS /") || !strings.Contains(out, "Fake GPU 0") || !strings.Contains(out, "141.0 GiB") || !strings.Contains(out, "9.0") {
		t.Errorf("fake driver: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	t.Setenv(cuda.DriverEnv, cudatest.FakeDriver(t, 12080, 0))
	if code, _, errs = dstein(t, "gpu"); code != exitNoGPU || !strings.Contains(errs, "sees no device") {
		t.Errorf("no device: exit %d, %q", code, errs)
	}
}

// TestSampleOnGPU runs gfsvgd --device cuda through dstein sample on the
// stand-ins (the kernels run on the host): the summary equals the CPU
// run's digit for digit (the two agree to about 1e-15), the float32 run
// finishes, and --device cuda without a driver is one line with exit code
// 4, before anything is written; Gibbs chains run there too.
func TestSampleOnGPU(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "rbm.json")
	os.WriteFile(model, []byte(`{"type":"rbm","visible":12,"hidden":4,"random":{"w_std":0.3,"bias_std":0.5,"seed":3}}`), 0o644)
	args := []string{"sample", "--model", model, "--method", "gfsvgd", "--n", "30", "--iters", "40", "--seed", "2"}
	t.Setenv(cuda.DriverEnv, "/nonexistent/libcuda.so.1")
	out := filepath.Join(dir, "draws.csv")
	code, _, errs := dstein(t, append(args, "--device", "cuda", "--out", out)...)
	if code != exitNoGPU || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "no usable NVIDIA GPU") {
		t.Errorf("no driver: exit %d, %q", code, errs)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a run refused for want of a GPU wrote its output")
	}
	t.Setenv(cuda.DriverEnv, cudatest.FakeDriver(t, 13000, 1))
	t.Setenv(cuda.NVRTCEnv, cudatest.EmulatingNVRTC(t))
	t.Setenv(cuda.CUBLASEnv, cudatest.FakeCUBLAS(t))
	code, cpu, errs := dstein(t, append(args, "--device", "cpu")...)
	if code != 0 {
		t.Fatalf("cpu: exit %d: %s", code, errs)
	}
	code, gpu, errs := dstein(t, append(args, "--device", "cuda")...)
	if code != 0 {
		t.Fatalf("cuda: exit %d: %s", code, errs)
	}
	table := func(s string) string { // the summary's rows, without the timing lines
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "z") || strings.HasPrefix(strings.TrimSpace(l), "log_p") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if table(cpu) == "" || table(gpu) != table(cpu) {
		t.Errorf("the GPU's summary differs from the CPU's:\n%s\n---\n%s", gpu, cpu)
	}
	if code, _, errs := dstein(t, append(args, "--device", "cuda", "--precision", "float32")...); code != 0 {
		t.Errorf("float32: exit %d: %s", code, errs)
	}
	if code, _, errs := dstein(t, append(args, "--precision", "float32")...); code != exitUsage || !strings.Contains(errs, "float32 is the GPU's precision") {
		t.Errorf("float32 on the CPU: exit %d: %s", code, errs)
	}
	// Gibbs chains on the GPU: an Ising grid by its two colours, with
	// draws and their error bars as on the CPU.
	grid := filepath.Join(dir, "grid.json")
	os.WriteFile(grid, []byte(`{"type":"ising","grid":{"rows":4,"cols":4},"coupling":0.3}`), 0o644)
	code, gout, errs := dstein(t, "sample", "--model", grid, "--method", "gibbs", "--device", "cuda", "--chains", "4", "--draws", "200", "--warmup", "50", "--seed", "1")
	if code != 0 || !strings.Contains(gout, `"device":"cuda"`) || !strings.Contains(gout, "R̂") {
		t.Errorf("gibbs --device cuda: exit %d:\n%s%s", code, gout, errs)
	}
	// Parallel tempering's replicas there too; the default preset (an
	// automatic ladder) says what to give instead.
	if code, _, errs := dstein(t, "sample", "--model", grid, "--method", "pt", "--device", "cuda", "--chains", "2", "--draws", "50"); code != 0 {
		t.Errorf("pt --device cuda: exit %d: %s", code, errs)
	}
	if code, _, errs := dstein(t, "sample", "--model", grid, "--device", "cuda"); code != exitUsage || !strings.Contains(errs, "give --method pt") {
		t.Errorf("the default with --device cuda: exit %d: %s", code, errs)
	}
}

// dstein methods says which methods have a GPU path, and only those.
func TestMethodsListGPUPaths(t *testing.T) {
	code, out, _ := dstein(t, "methods")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, block := range strings.Split(out, "\n\n") {
		name, _, _ := strings.Cut(block, ":")
		want := name == "gibbs" || name == "gfsvgd" || name == "pt"
		if got := strings.Contains(block, "also on NVIDIA GPUs (--device cuda)"); got != want && !strings.HasPrefix(name, "Presets") {
			t.Errorf("%s: GPU path listed %v, want %v", name, got, want)
		}
	}
}

// What a GPU path does not take is said whether or not the machine has a
// GPU: with no driver at all, parallel tempering of an RBM by the site
// kernel gets its reason (the block kernel), not "no usable GPU"; one
// line, exit 1, nothing written.
func TestGPUUnsupportedBeforeNoGPU(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "rbm.json")
	os.WriteFile(model, []byte(`{"type":"rbm","visible":6,"hidden":2,"random":{"w_std":0.3,"bias_std":0.5,"seed":3}}`), 0o644)
	t.Setenv(cuda.DriverEnv, "/nonexistent/libcuda.so.1")
	out := filepath.Join(dir, "draws.csv")
	code, _, errs := dstein(t, "sample", "--model", model, "--method", "pt", "--device", "cuda", "--chains", "2", "--draws", "10", "--out", out)
	if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "--kernel block") || strings.Contains(errs, "pt: pt") {
		t.Errorf("exit %d, %q", code, errs)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused run wrote its output")
	}
}
