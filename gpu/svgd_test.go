package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/dstein/dstein/internal/cuda"
	"github.com/dstein/dstein/internal/cuda/cudatest"
	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gfsvgd"
	"github.com/dstein/dstein/svgd"
	"github.com/dstein/dstein/transform"
)

// realGPU reports whether the tests run on a real GPU (DSTEIN_GPU_TEST=1,
// the GPU machine's script) rather than on the stand-ins.
func realGPU() bool { return os.Getenv("DSTEIN_GPU_TEST") == "1" }

// testDevice opens GPU 0: the real one where realGPU, else the stand-ins,
// whose kernels run on the host (they need a C and a C++ compiler; the
// test skips without them). The registered methods run on it until the
// test ends.
func testDevice(t *testing.T) *Device {
	t.Helper()
	if !realGPU() {
		t.Setenv(cuda.DriverEnv, cudatest.FakeDriver(t, 13000, 1))
		t.Setenv(cuda.NVRTCEnv, cudatest.EmulatingNVRTC(t))
		t.Setenv(cuda.CUBLASEnv, cudatest.FakeCUBLAS(t))
	}
	d, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	saved := registryDevice
	registryDevice = func(int) (*Device, error) { return d, nil }
	t.Cleanup(func() { registryDevice = saved; d.Close() })
	return d
}

// rbmProblem is an RBM of d visible and m hidden units with n particles
// drawn from the normal base.
func rbmProblem(t testing.TB, n, d, m int, seed uint64) *sampler.Problem {
	t.Helper()
	r, err := rbm.Random(d, m, 0.3, 0.2, seed)
	if err != nil {
		t.Fatal(err)
	}
	k := make([]int, d)
	for i := range k {
		k[i] = 2
	}
	tr, err := transform.New(transform.Normal{}, k)
	if err != nil {
		t.Fatal(err)
	}
	rnd := rng.NewKey(seed).Rand()
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rnd.NormFloat64()
	}
	z := make([]int, n*d)
	for j := range n {
		tr.Gamma(z[j*d:(j+1)*d], x[j*d:(j+1)*d])
	}
	return &sampler.Problem{Model: r, Transform: tr, N: n, X: x, Z: z}
}

// maxRelDiff returns max |a − b| / max(1, max |b|).
func maxRelDiff(a, b []float64) float64 {
	var diff, scale float64 = 0, 1
	for i := range a {
		diff = max(diff, math.Abs(a[i]-b[i]))
		scale = max(scale, math.Abs(b[i]))
	}
	return diff / scale
}

// TestSVGDMatchesCPU runs GF-SVGD on the GPU path and on the CPU from the
// same particles and compares the particles and statistics after every
// iteration. In float64 they agree to 1e-9 relative: the two differ only
// in the order of the matrix products' sums (cuBLAS's against dstein's
// blocked product), rounding errors of 1e-16 that 15 iterations of Adam
// grow by a few orders. Cases: odd and even numbers of particles (the
// median of an odd and an even number of pairs), the median over all n²
// pairs, plain steps, rank weights, tempered weights, the paper's
// bandwidth rule and a fixed one, and one particle (no pairs).
func TestSVGDMatchesCPU(t *testing.T) {
	dev := testDevice(t)
	cases := []struct {
		name    string
		n, d, m int
		set     gfsvgd.Settings
	}{
		{"even", 20, 12, 5, gfsvgd.Settings{}},
		{"odd", 17, 9, 4, gfsvgd.Settings{}},
		{"all pairs", 11, 6, 3, gfsvgd.Settings{Bandwidth: kernel.Bandwidth{IncludeDiagonal: true}}},
		{"plain", 16, 8, 3, gfsvgd.Settings{Optimizer: gfsvgd.Plain, LearningRate: 0.05}},
		{"rank", 15, 10, 6, gfsvgd.Settings{Weights: svgd.Rank}},
		{"tempered", 14, 10, 6, gfsvgd.Settings{WeightPower: 0.5, WeightAnneal: 10}},
		{"paper rule", 13, 7, 2, gfsvgd.Settings{Bandwidth: kernel.Bandwidth{Rule: kernel.RuleMedianPaper}, Temperature: 0.5}},
		{"fixed", 12, 7, 2, gfsvgd.Settings{Bandwidth: kernel.Bandwidth{Rule: kernel.RuleFixed, H: 3}}},
		{"one particle", 1, 5, 2, gfsvgd.Settings{}},
		{"{0,1} units", 18, 7, 3, gfsvgd.Settings{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := rbmProblem(t, c.n, c.d, c.m, 7)
			if c.name == "{0,1} units" {
				p.Model = otherTargets(t).binary // 7 visible, 3 hidden
			}
			cpu, err := gfsvgd.New(p, c.set)
			if err != nil {
				t.Fatal(err)
			}
			g, err := NewSVGD(dev, p, c.set)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			worst := 0.0
			defer func() { t.Logf("largest relative difference of the particles over 15 iterations: %.2g", worst) }()
			for it := 1; it <= 15; it++ {
				if err := cpu.Step(context.Background()); err != nil {
					t.Fatal(err)
				}
				if err := g.Step(context.Background()); err != nil {
					t.Fatal(err)
				}
				d := maxRelDiff(g.Positions(), cpu.Positions())
				worst = max(worst, d)
				if d > 1e-9 {
					t.Fatalf("iteration %d: particles differ by %.3g relative", it, d)
				}
				cs, gs := cpu.Stats(), g.Stats()
				if cs.Evaluations != gs.Evaluations {
					t.Fatalf("iteration %d: %d evaluations, CPU %d", it, gs.Evaluations, cs.Evaluations)
				}
				for k, v := range cs.Values {
					w := gs.Values[k]
					if w.Name != v.Name || math.Abs(w.Value-v.Value) > 1e-9*max(1, math.Abs(v.Value)) {
						t.Fatalf("iteration %d: %s = %v, CPU %s = %v", it, w.Name, w.Value, v.Name, v.Value)
					}
				}
			}
			gz, cz := g.Current(), cpu.Current()
			for k := range gz {
				if gz[k] != cz[k] {
					t.Fatalf("state %d: %d, CPU %d", k, gz[k], cz[k])
				}
			}
		})
	}
}

// TestSVGDFloat32 runs the float32 path beside the CPU's float64 one:
// after one iteration the particles agree to 1e-4 (float32's 6e-8
// relative rounding through sums of up to 2d + 1 terms, and Adam's first
// step, lr·g/|g|, which is ±lr whatever g's size: a coordinate whose
// direction is within float32's rounding of zero could flip, so the
// check allows 1% of coordinates to differ by up to 2·lr); after 20 the
// mean of each coordinate over the particles agrees to 0.05 and the
// weights' ESS to 10%.
func TestSVGDFloat32(t *testing.T) {
	dev := testDevice(t)
	p := rbmProblem(t, 24, 10, 4, 3)
	cpu, err := gfsvgd.New(p, gfsvgd.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewSVGD(dev, p, gfsvgd.Settings{Device: sampler.CUDA, Precision: sampler.Float32})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for it := 1; it <= 20; it++ {
		if err := cpu.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := g.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
		if it == 1 {
			off := 0
			for k, v := range g.Positions() {
				d := math.Abs(v - cpu.Positions()[k])
				if d > 1e-4 {
					off++
					if d > 2*gfsvgd.DefaultLearningRate+1e-4 {
						t.Fatalf("coordinate %d: %v, CPU %v", k, v, cpu.Positions()[k])
					}
				}
			}
			if off > len(g.Positions())/100 {
				t.Fatalf("%d coordinates differ by over 1e-4 after one iteration", off)
			}
		}
	}
	n, d := p.N, p.Model.Dim()
	for i := range d {
		var a, b float64
		for j := range n {
			a += g.Positions()[j*d+i] / float64(n)
			b += cpu.Positions()[j*d+i] / float64(n)
		}
		if math.Abs(a-b) > 0.05 {
			t.Errorf("coordinate %d: mean %v, CPU %v", i, a, b)
		}
	}
	ge, _ := g.Stats().Value("weight_ess")
	ce, _ := cpu.Stats().Value("weight_ess")
	if math.Abs(ge-ce) > 0.1*ce {
		t.Errorf("weight ESS %v, CPU %v", ge, ce)
	}
}

// TestSVGDRefusals: a model other than an RBM, another surrogate or
// kernel, float32 on the CPU, a run over the device's free memory, and a
// canceled context.
func TestSVGDRefusals(t *testing.T) {
	dev := testDevice(t)
	p := rbmProblem(t, 8, 6, 2, 1)
	g, err := ising.Grid(3, 3, false, 0.2, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := transform.New(transform.Normal{}, []int{2, 2, 2, 2, 2, 2, 2, 2, 2})
	ip := &sampler.Problem{Model: g, Transform: tr, N: 4, X: make([]float64, 36), Z: make([]int, 36)}
	for _, c := range []struct {
		p    *sampler.Problem
		set  gfsvgd.Settings
		want string
	}{
		{ip, gfsvgd.Settings{}, "samples RBMs only"},
		{p, gfsvgd.Settings{Surrogate: "base"}, "relaxed surrogate"},
		{p, gfsvgd.Settings{Kernel: svgd.Coordinatewise}, "RBF kernel"},
	} {
		if _, err := NewSVGD(dev, c.p, c.set); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.set, err, c.want)
		}
	}
	if err := (&gfsvgd.Settings{Precision: sampler.Float32}).Validate(); err == nil || !strings.Contains(err.Error(), "the CPU computes in float64") {
		t.Errorf("float32 on the CPU: %v", err)
	}
	free, _, err := dev.context().MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	big := int(math.Sqrt(float64(free)/8)) + 1000
	bp := &sampler.Problem{Model: p.Model, Transform: p.Transform, N: big, X: make([]float64, big*6), Z: make([]int, big*6)}
	var oom *cuda.OutOfMemory
	if _, err := NewSVGD(dev, bp, gfsvgd.Settings{}); !errors.As(err, &oom) || !strings.Contains(err.Error(), "of GPU memory; the GPU has") {
		t.Errorf("%d particles on a GPU with %d bytes free: %v", big, free, err)
	}
	s, err := NewSVGD(dev, p, gfsvgd.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := append([]float64(nil), s.Positions()...)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Step(ctx); !errors.Is(err, context.Canceled) || s.Iter() != 0 || maxRelDiff(s.Positions(), before) != 0 {
		t.Errorf("a canceled step: %v, iteration %d", err, s.Iter())
	}
	if err := s.Step(context.Background()); err != nil {
		t.Errorf("a step after the canceled one: %v", err)
	}
}

// TestSVGDThroughRegistry runs gfsvgd --device cuda through the sampler
// registry, as dstein sample does.
func TestSVGDThroughRegistry(t *testing.T) {
	testDevice(t)
	p := rbmProblem(t, 10, 6, 3, 5)
	meth, err := sampler.Lookup("gfsvgd")
	if err != nil {
		t.Fatal(err)
	}
	s, err := meth.Start(p, &gfsvgd.Settings{Device: sampler.CUDA})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(*SVGD); !ok {
		t.Fatalf("the registry made a %T", s)
	}
	if err := s.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ess, ok := s.Stats().Value("weight_ess"); !ok || !(ess >= 1 && ess <= 10) {
		t.Errorf("weight ESS %v of 10 particles", ess)
	}
}

// TestSVGDMedianBracket brackets the median of 760 particles' pairs (the
// threshold lowered from 2²³ pairs to 2¹⁸, so that the emulation runs
// it; the sample has 2¹⁴ pairs of the 288,420): the particles and the
// bandwidth equal the CPU's (to the last digits the Gram matrix's sums
// leave), with the bracket as planned and with a bracket that misses
// (selection over the whole matrix instead), and the misses are counted.
func TestSVGDMedianBracket(t *testing.T) {
	dev := testDevice(t)
	for _, sigmas := range []float64{4, -3} {
		t.Run(fmt.Sprintf("sigmas=%g", sigmas), func(t *testing.T) {
			savedSigmas, savedAbove := bracketSigmas, bracketAbove
			bracketSigmas, bracketAbove = sigmas, 1<<18
			defer func() { bracketSigmas, bracketAbove = savedSigmas, savedAbove }()
			p := rbmProblem(t, 760, 3, 2, 9)
			cpu, err := gfsvgd.New(p, gfsvgd.Settings{})
			if err != nil {
				t.Fatal(err)
			}
			g, err := NewSVGD(dev, p, gfsvgd.Settings{})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			for it := 1; it <= 3; it++ {
				cpu.Step(context.Background())
				if err := g.Step(context.Background()); err != nil {
					t.Fatal(err)
				}
				if d := maxRelDiff(g.Positions(), cpu.Positions()); d > 1e-9 {
					t.Fatalf("iteration %d: particles differ by %.3g", it, d)
				}
				if math.Abs(g.Last().Bandwidth-cpu.Last().Bandwidth) > 1e-12*cpu.Last().Bandwidth {
					t.Errorf("iteration %d: bandwidth %v, CPU %v", it, g.Last().Bandwidth, cpu.Last().Bandwidth)
				}
			}
			if g.bracketed != 3 || (sigmas > 0) != (g.fallbacks == 0) {
				t.Errorf("%d of 3 medians bracketed, %d of them fell back to the whole matrix", g.bracketed, g.fallbacks)
			}
		})
	}
}

// sampler.CheckDevice opens the GPU through the registered check.
func TestDeviceCheck(t *testing.T) {
	testDevice(t)
	if err := sampler.CheckDevice(sampler.CUDA); err != nil {
		t.Fatal(err)
	}
}
