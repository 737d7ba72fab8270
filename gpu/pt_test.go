package gpu

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gfsvgd"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/sampler/pt"
	"github.com/dstein/dstein/sampler/samplertest"
)

// TestPTMatchesExact is the conformance test of parallel tempering with
// its replicas on the GPU: final states of 3000 chains, run through the
// registry, against exact marginals by enumeration (within 5 standard
// errors), on samplertest.SmallModels' 3×3 Ising grid with fields and
// 3-state Potts torus, a strongly coupled 3×3 torus (J = 0.9: two modes a
// single-site sweep rarely crosses), and two targets the kernels were not written on
// (otherTargets: a complete graph, a nearly deterministic marginal); and,
// by the block kernel, a strongly coupled RBM with 8 visible and 3 hidden
// units and the {0, 1} RBM of otherTargets.
func TestPTMatchesExact(t *testing.T) {
	testDevice(t)
	small := samplertest.SmallModels(t)
	grid, pm := small["ising"], small["potts"]
	strong, err := ising.Grid(3, 3, true, 0.9, []float64{0.05, 0, 0, 0, 0, 0, 0, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	strongRBM, err := rbm.Random(8, 3, 1.2, 0.5, 9)
	if err != nil {
		t.Fatal(err)
	}
	others := otherTargets(t)
	for _, c := range []struct {
		name string
		m    model.Model
		kern pt.Kernel
	}{{"ising grid", grid, pt.Site}, {"strong torus", strong, pt.Site}, {"potts torus", pm, pt.Site}, {"ising complete", others.complete, pt.Site},
		{"potts 5 states", others.potts5, pt.Site}, {"strong rbm, block", strongRBM, pt.Block}, {"rbm {0,1}, block", others.binary, pt.Block}} {
		t.Run(c.name, func(t *testing.T) {
			set := &pt.Settings{Device: sampler.CUDA, Ladder: 5, Tune: 20, Kernel: c.kern}
			s := samplertest.Run(t, "pt", set, c.m, 3000, 80, 13)
			worst := samplertest.CheckMarginals(t, c.name, c.m, s, 0)
			t.Logf("largest error %.2f standard errors", worst)
		})
	}
}

// TestPTOnDeviceRefusals: the GPU's parallel tempering has the site
// kernel only, no automatic ladder, and no RBMs.
func TestPTOnDeviceRefusals(t *testing.T) {
	dev := testDevice(t)
	m, err := ising.Grid(3, 3, false, 0.4, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := rbmLikeProblem(m, 4, 1)
	for _, set := range []pt.Settings{{Device: sampler.CUDA, Auto: true}, {Device: sampler.CUDA, Kernel: pt.Cluster}} {
		if _, err := NewPT(dev, p, set); err == nil {
			t.Errorf("%+v accepted", set)
		}
	}
	r := rbmProblem(t, 4, 5, 2, 1)
	if _, err := NewPT(dev, r, pt.Settings{Device: sampler.CUDA}); err == nil {
		t.Error("an RBM accepted")
	}
	cat, err := categorical.RandomSimplex(5, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewPT(dev, rbmLikeProblem(cat, 4, 1), pt.Settings{Device: sampler.CUDA}); err == nil || !strings.Contains(err.Error(), "categorical") {
		t.Errorf("independent categorical variables: %v", err)
	}
	s, err := NewPT(dev, p, pt.Settings{Device: sampler.CUDA, Ladder: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := s.Stats()
	if v, ok := st.Value("swap_rate"); !ok || v < 0 || v > 1 {
		t.Errorf("swap_rate %v", v)
	}
}

// TestPTSwapRatesMatchCPU: the swap acceptance rates of each pair of
// neighbouring temperatures depend on the tempered distributions the
// replicas sample, so the GPU's (replicas swept at their own β) must
// equal the CPU's on the same fixed ladder, up to Monte Carlo error: each
// rate averages 2000 chains over 100 iterations from the same start (all
// spins −1); the tolerance of 0.03 is over 5 standard errors of the
// difference (the spread of the per-chain acceptance probabilities, at
// most 0.5, over √2000 chains, with the iterations' correlation taken as
// no help).
func TestPTSwapRatesMatchCPU(t *testing.T) {
	dev := testDevice(t)
	grid, err := ising.Grid(4, 4, true, 0.6, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := rbm.Random(10, 4, 1, 0.3, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		m    model.Model
		kern pt.Kernel
	}{{"ising torus, site", grid, pt.Site}, {"rbm, block", r, pt.Block}} {
		t.Run(c.name, func(t *testing.T) {
			swapRatesMatch(t, dev, c.m, pt.Settings{Ladder: 4, Tune: -1, BetaMin: 0.2, Kernel: c.kern})
		})
	}
}

func swapRatesMatch(t *testing.T, dev *Device, m model.Model, set pt.Settings) {
	rates := func(s sampler.Sampler) []float64 {
		for range 100 {
			if err := s.Step(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		var out []float64
		for j := 1; j < set.Ladder; j++ {
			v, _ := s.Stats().Value(fmt.Sprintf("swap_%d", j))
			out = append(out, v)
		}
		return out
	}
	cpu, err := pt.New(rbmLikeProblem(m, 2000, 3), set)
	if err != nil {
		t.Fatal(err)
	}
	gset := set
	gset.Device = sampler.CUDA
	gpu, err := NewPT(dev, rbmLikeProblem(m, 2000, 4), gset)
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	c, g := rates(cpu), rates(gpu)
	t.Logf("swap rates: CPU %.3f, GPU %.3f", c, g)
	for j := range c {
		if math.Abs(c[j]-g[j]) > 0.03 {
			t.Errorf("swap_%d: GPU %.3f, CPU %.3f", j+1, g[j], c[j])
		}
	}
}

// Pipeline.OnDevice moves exactly the stages whose GPU path takes the
// model and the stage's settings: on an RBM GF-SVGD, block Gibbs and
// parallel tempering by the block kernel, not stratified Gibbs nor
// tempering by the site kernel; on an Ising grid Gibbs and parallel
// tempering by the site kernel, not GF-SVGD (RBMs only), the auto ladder
// nor the block kernel. The stages it
// leaves keep their settings, and the pipeline it was given is unchanged.
func TestPipelineOnDevice(t *testing.T) {
	testDevice(t)
	grid, err := ising.Grid(3, 3, false, 0.4, nil)
	if err != nil {
		t.Fatal(err)
	}
	strat := &gibbs.Settings{Stratified: true}
	pl := sampler.Pipeline{Stages: []sampler.Stage{
		{Method: gfsvgd.Name, Iters: 2},
		{Method: gibbs.Name, Iters: 2},
		{Method: gibbs.Name, Iters: 2, Settings: strat},
		{Method: pt.Name, Iters: 2},
		{Method: pt.Name, Iters: 2, Settings: &pt.Settings{Auto: true}},
		{Method: pt.Name, Iters: 2, Settings: &pt.Settings{Kernel: pt.Block}},
	}}
	for _, c := range []struct {
		name string
		p    *sampler.Problem
		want []int
	}{
		{"rbm", rbmProblem(t, 4, 5, 2, 1), []int{0, 1, 5}},
		{"ising grid", rbmLikeProblem(grid, 4, 1), []int{1, 3}},
	} {
		got, moved, err := pl.OnDevice(sampler.CUDA, c.p)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(moved) != fmt.Sprint(c.want) {
			t.Errorf("%s: stages moved %v, want %v", c.name, moved, c.want)
		}
		for k, st := range got.Stages {
			ds, ok := st.Settings.(sampler.DeviceSettings)
			on := ok && ds.OnDevice() == sampler.CUDA
			if on != slices.Contains(c.want, k) {
				t.Errorf("%s: stage %d (%s) on the GPU: %v", c.name, k, st.Method, on)
			}
			if pl.Stages[k].Settings != nil {
				if ds, ok := pl.Stages[k].Settings.(sampler.DeviceSettings); ok && ds.OnDevice() != sampler.CPU {
					t.Errorf("%s: the given pipeline's stage %d was changed", c.name, k)
				}
			}
		}
		if s := got.Stages[2].Settings; s != strat {
			t.Errorf("%s: stratified Gibbs's settings replaced: %+v", c.name, s)
		}
	}
}
