package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dstein/dstein/gpu"
	"github.com/dstein/dstein/internal/cuda"
	"github.com/dstein/dstein/internal/cuda/cudatest"
	"github.com/dstein/dstein/sampler"
)

// TestOnDevice runs experiments with --device cuda on the GPU's
// stand-ins (its kernels emulated on the host, package cudatest), or on a
// GPU with DSTEIN_GPU_TEST=1. The stand-ins are made once for both parts:
// the process opens the GPU once (gpu.Shared) and keeps it.
func TestOnDevice(t *testing.T) {
	if os.Getenv("DSTEIN_GPU_TEST") == "" {
		t.Setenv(cuda.DriverEnv, cudatest.FakeDriver(t, 13000, 1))
		t.Setenv(cuda.NVRTCEnv, cudatest.EmulatingNVRTC(t))
		t.Setenv(cuda.CUBLASEnv, cudatest.FakeCUBLAS(t))
	}
	t.Run("discs", testDISCSOnDevice)
	t.Run("rbm-n", testSamplingOnDevice)
	t.Run("merge without a GPU", testMergeWithoutDevice)
}

// testMergeWithoutDevice: the shards of a GPU run merge where there is no
// GPU (a merge computes nothing), while a run that computes is refused
// before any work with the device's error.
func testMergeWithoutDevice(t *testing.T) {
	e, _ := Get("rbm-n")
	root := t.TempDir()
	cfg := Config{Seed: 3, Mode: Tiny, Trials: 2, Settings: RBMNSettings{NMax: 10, Device: DeviceOption{sampler.CUDA}}}
	var dirs []string
	for k := 1; k <= 2; k++ {
		c := cfg
		c.Out, c.Shard = filepath.Join(root, fmt.Sprintf("shard%d", k)), Shard{K: k, N: 2}
		if _, err := e.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, c.Out)
	}
	sampler.RegisterDeviceCheck(sampler.CUDA, func() error { return errors.New("no usable NVIDIA GPU (the test's)") })
	defer sampler.RegisterDeviceCheck(sampler.CUDA, func() error { _, err := gpu.Shared(0); return err })
	if _, err := e.Merge(context.Background(), Config{Out: filepath.Join(root, "merged")}, dirs); err != nil {
		t.Errorf("merging a GPU run's shards without a GPU: %v", err)
	}
	c := cfg
	c.Out = filepath.Join(root, "again")
	if _, err := e.Run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "the test's") {
		t.Errorf("a GPU run without a GPU: %v", err)
	}
	if _, err := os.Stat(c.Out); !os.IsNotExist(err) {
		t.Errorf("the refused run left its output directory: %v", err)
	}
}

// testDISCSOnDevice runs DISCS's tiny targets with --methods gibbs,dmala
// and --device cuda on the GPU stand-ins (the kernels emulated on the
// host, package cudatest): Gibbs runs on the device on every target
// (Ising, categorical, Potts), DMALA, which has no GPU path, on the CPU;
// the journal records the device, the table says where each ran, and a
// run of the same journal on the CPU is refused (its trials would mix
// two devices' draws and seconds).
func testDISCSOnDevice(t *testing.T) {
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
		switch r.Metric {
		case "ess_per_step":
			got[r.Method]++
			if !(r.Mean > 0) {
				t.Errorf("%s at %v: ESS per step %v", r.Method, r.X, r.Mean)
			}
		case "device_stages":
			if want := map[string]float64{"gibbs": 1, "dmala": 0}[r.Method]; r.Mean != want {
				t.Errorf("%s at %v: device_stages %v, want %v", r.Method, r.X, r.Mean, want)
			}
		}
	}
	if got["gibbs"] != 4 || got["dmala"] != 4 || len(got) != 2 {
		t.Errorf("ESS rows by method: %v; want gibbs and dmala on each of the 4 targets", got)
	}
	if text := strings.Join(res.Notes, "\n"); !strings.Contains(text, "dstein's gibbs on this machine's GPU (cuda) where") {
		t.Errorf("the table does not say where the methods ran:\n%s", text)
	}
	settings, err := os.ReadFile(filepath.Join(dir, "discs.trials.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(settings), `"device": 1`) {
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

// testSamplingOnDevice runs rbm-n's tiny run with --device cuda on the
// GPU stand-ins: GF-SVGD's stages (the paper's, transport's and the
// hybrid's first) and Gibbs (block Gibbs on the RBM) run on the device
// (device_stages 1), parallel tempering (an RBM's replicas), stratified
// sweeps and the others on the CPU (0); the CPU run records no
// device_stages at all (its CSV as before).
func testSamplingOnDevice(t *testing.T) {
	e, _ := Get("rbm-n")
	res, err := e.Run(context.Background(), Config{Out: t.TempDir(), Seed: 3, Mode: Tiny, Trials: 1,
		Settings: RBMNSettings{Device: DeviceOption{sampler.CUDA}}})
	if err != nil {
		t.Fatal(err)
	}
	stages := map[string]float64{}
	for _, r := range res.Rows {
		if r.Metric == "device_stages" {
			stages[r.Method] = max(stages[r.Method], r.Mean)
		}
	}
	t.Logf("stages on the device: %v", stages)
	for name, want := range map[string]float64{"gfsvgd-paper": 1, "gfsvgd-transport": 1, "gfsvgd-hybrid": 1, "gibbs": 1,
		"pt-4chains": 0, "strat-sweeps": 0, "dhmc": 0, "exact": 0} {
		if got, ok := stages[name]; !ok || got != want {
			t.Errorf("%s: device_stages %v (recorded: %v), want %v", name, got, ok, want)
		}
	}
	cpu, err := e.Run(context.Background(), Config{Out: t.TempDir(), Seed: 3, Mode: Tiny, Trials: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cpu.Rows {
		if r.Metric == "device_stages" {
			t.Fatalf("the CPU run recorded device_stages for %s", r.Method)
		}
	}
	// GF-SVGD on the GPU follows the CPU's trajectory (to about 10⁻¹⁵,
	// package gpu's test), so its MSE is the CPU's; Gibbs's chains draw
	// other uniforms there, so its MSE differs.
	mse := func(rows []Row, method string) float64 {
		for _, r := range rows {
			if r.Method == method && r.Metric == "mse" && r.X == 10 {
				return r.Mean
			}
		}
		return math.NaN()
	}
	if a, b := mse(res.Rows, "gfsvgd-paper"), mse(cpu.Rows, "gfsvgd-paper"); !(math.Abs(a-b) <= 1e-9*b) {
		t.Errorf("gfsvgd-paper's MSE at n = 10: %v on the GPU, %v on the CPU", a, b)
	}
	if a, b := mse(res.Rows, "gibbs"), mse(cpu.Rows, "gibbs"); a == b || math.IsNaN(a) {
		t.Errorf("gibbs's MSE at n = 10: %v on the GPU, %v on the CPU; want two draws", a, b)
	}
}
