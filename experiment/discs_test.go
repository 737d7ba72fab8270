package experiment

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dstein/dstein/internal/cuda"
	"github.com/dstein/dstein/internal/cuda/cudatest"
	"github.com/dstein/dstein/sampler"
)

// TestDISCSOnDevice runs DISCS's tiny targets with --methods gibbs,dmala
// and --device cuda on the GPU stand-ins (the kernels emulated on the
// host, package cudatest): Gibbs runs on the device on every target
// (Ising, categorical, Potts), DMALA, which has no GPU path, on the CPU;
// the journal records the device, the table says where each ran, and a
// run of the same journal on the CPU is refused (its trials would mix
// two devices' draws and seconds).
func TestDISCSOnDevice(t *testing.T) {
	if os.Getenv("DSTEIN_GPU_TEST") == "" {
		t.Setenv(cuda.DriverEnv, cudatest.FakeDriver(t, 13000, 1))
		t.Setenv(cuda.NVRTCEnv, cudatest.EmulatingNVRTC(t))
		t.Setenv(cuda.CUBLASEnv, cudatest.FakeCUBLAS(t))
	}
	dir := t.TempDir()
	e, _ := Get("discs")
	cfg := Config{Out: dir, Seed: 3, Mode: Tiny, Methods: []string{"gibbs", "dmala"},
		Settings: DISCSSettings{Device: DeviceOption{sampler.CUDA}}}
	res, err := e.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, r := range res.Rows {
		if r.Metric == "ess_per_step" {
			got[r.Method]++
			if !(r.Mean > 0) {
				t.Errorf("%s at %v: ESS per step %v", r.Method, r.X, r.Mean)
			}
		}
	}
	if got["gibbs"] != 4 || got["dmala"] != 4 || len(got) != 2 {
		t.Errorf("ESS rows by method: %v; want gibbs and dmala on each of the 4 targets", got)
	}
	if text := strings.Join(res.Notes, "\n"); !strings.Contains(text, "dstein's gibbs on this machine's GPU (cuda), the others on its CPU") {
		t.Errorf("the table does not say where the methods ran:\n%s", text)
	}
	settings, err := os.ReadFile(filepath.Join(dir, "discs.trials.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(settings), `"device": 1`) || !strings.Contains(string(settings), `"device": "cuda"`) {
		t.Errorf("the journal's settings do not record the device:\n%s", settings)
	}
	cfg.Settings = DISCSSettings{}
	if _, err := e.Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "other settings") {
		t.Errorf("the GPU run's journal resumed on the CPU: %v", err)
	}
	// The same run on the CPU: DMALA's numbers are the same (the same
	// keys, the same code), Gibbs's differ on every target (the GPU's
	// uniforms are Philox's, the CPU's its own), so Gibbs did run on the
	// device and DMALA did not.
	cfg.Out = t.TempDir()
	cpu, err := e.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	value := func(rows []Row, method string, x float64) float64 {
		for _, r := range rows {
			if r.Method == method && r.X == x && r.Metric == "ess_per_step" {
				return r.Mean
			}
		}
		return -1
	}
	for _, x := range []float64{1, 2, 3, 4} {
		if a, b := value(res.Rows, "dmala", x), value(cpu.Rows, "dmala", x); a != b || a < 0 {
			t.Errorf("target %v: DMALA's ESS per step %v with --device cuda, %v on the CPU; want equal", x, a, b)
		}
		if a, b := value(res.Rows, "gibbs", x), value(cpu.Rows, "gibbs", x); a == b {
			t.Errorf("target %v: Gibbs's ESS per step %v on both devices", x, a)
		}
	}
}
