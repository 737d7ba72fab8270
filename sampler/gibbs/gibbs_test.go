package gibbs

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gfsvgd"
	"github.com/dstein/dstein/transform"
)

func newSampler(t testing.TB, m model.Model, n int, set Settings, seed uint64) *Sampler {
	t.Helper()
	tr, err := transform.ForModel(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(m, tr, n, set, seed)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The final states of n independent chains are i.i.d. draws once the
// chains have mixed, so each state's frequency must lie within 4 standard
// errors √(p(1−p)/n) of its exact probability (a false alarm for one of
// the few dozen frequencies checked here has probability below 0.2%).
func checkMarginals(t *testing.T, name string, m model.Model, s *Sampler, sweeps int) {
	t.Helper()
	ex, err := exact.Enumerate(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := sampler.Run(context.Background(), s, sampler.RunOptions{Iters: sweeps})
	if out.Status != sampler.Completed {
		t.Fatal(out.Err)
	}
	marg := sampler.Marginals(m, s.Samples())
	n := float64(s.n)
	for i := range marg {
		for k, p := range ex.Marginals[i] {
			se := math.Sqrt(p * (1 - p) / n)
			if math.Abs(marg[i][k]-p) > 4*se+1e-12 {
				t.Errorf("%s: P(z_%d = %v) = %.4f; exact %.4f (4 SE = %.4f)", name, i, m.States(i)[k], marg[i][k], p, 4*se)
			}
		}
	}
}

func TestConvergesToExactMarginals(t *testing.T) {
	r := rng.New(5, rng.StreamModel)
	fields := make([]float64, 9)
	for i := range fields {
		fields[i] = r.Float64() - 0.5
	}
	g, _ := ising.Grid(3, 3, false, 0.5, fields)
	checkMarginals(t, "ising 3×3", g, newSampler(t, g, 3000, Settings{}, 1), 100)

	c, _ := categorical.New([]categorical.Variable{
		{States: []float64{-1, -0.5, 0, 0.5, 1}, Probs: []float64{0.1, 0.2, 0.3, 0.1, 0.3}},
		{States: []float64{0, 1, 2}, Probs: []float64{0.5, 0, 0.5}},
	})
	checkMarginals(t, "categorical", c, newSampler(t, c, 3000, Settings{}, 2), 5)

	b, _ := rbm.Random(6, 3, 0.8, 1, 4)
	checkMarginals(t, "rbm block", b, newSampler(t, b, 3000, Settings{Scan: Block}, 3), 100)
	checkMarginals(t, "rbm single-site", b, newSampler(t, b, 3000, Settings{Scan: Systematic}, 3), 100)
}

// Chains start at Γ of the particles GF-SVGD starts from with the same seed.
func TestStartsFromGFSVGDsInitialDraw(t *testing.T) {
	g, _ := ising.Grid(3, 4, false, 0.2, nil)
	tr, _ := transform.ForModel(nil, g)
	const seed = 17
	s, err := New(g, tr, 20, Settings{InitMean: -2}, seed)
	if err != nil {
		t.Fatal(err)
	}
	gf, _ := gfsvgd.New(g, tr, transform.BaseSurrogate{T: tr}, 20, gfsvgd.Settings{InitMean: -2}, rng.New(seed, rng.StreamInit))
	x := gf.Particles()
	d := g.Dim()
	want := make([]int, len(x))
	for j := range 20 {
		tr.Gamma(want[j*d:(j+1)*d], x[j*d:(j+1)*d])
	}
	got := s.Samples().Z
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("initial state %d is %d; Γ of GF-SVGD's particle gives %d", k, got[k], want[k])
		}
	}
}

func TestSameBitsOnOneAndTwoCores(t *testing.T) {
	b, _ := rbm.Random(12, 4, 0.5, 1, 1)
	g, _ := ising.Grid(4, 4, false, 0.3, nil)
	for _, m := range []model.Model{b, g} {
		var runs [2][]int
		for k, procs := range []int{1, 2} {
			old := runtime.GOMAXPROCS(procs)
			s := newSampler(t, m, 50, Settings{}, 8)
			sampler.Run(context.Background(), s, sampler.RunOptions{Iters: 20})
			runtime.GOMAXPROCS(old)
			runs[k] = s.Samples().Z
		}
		for k := range runs[0] {
			if runs[0][k] != runs[1][k] {
				t.Fatalf("state %d differs between 1 and 2 cores", k)
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	g, _ := ising.Grid(2, 2, false, 0.1, nil)
	tr, _ := transform.ForModel(nil, g)
	if _, err := New(g, tr, 0, Settings{}, 1); err == nil {
		t.Error("n = 0 accepted")
	}
	if _, err := New(g, tr, 3, Settings{Scan: Block}, 1); err == nil {
		t.Error("block Gibbs on an Ising model accepted")
	}
	if _, err := NewFrom(g, []int{0, 1, 2, 0}, 1, Settings{}, 1); err == nil {
		t.Error("state 2 of a spin accepted")
	}
}

// BenchmarkIsingGrid10x10 measures single-site updates per second on the
// 10×10 grid with 100 chains (one op = one sweep of every chain).
func BenchmarkIsingGrid10x10(b *testing.B) {
	g, _ := ising.Grid(10, 10, false, 0.1, nil)
	s := newSampler(b, g, 100, Settings{}, 1)
	b.ReportAllocs()
	for b.Loop() {
		s.Step()
	}
	b.ReportMetric(float64(100*100*b.N)/b.Elapsed().Seconds()/1e6, "Mupdates/s")
}

// BenchmarkRBMBlock measures block sweeps on the d = 100, M = 25 RBM.
func BenchmarkRBMBlock(b *testing.B) {
	for _, n := range []int{100} {
		b.Run(fmt.Sprintf("d=100/M=25/n=%d", n), func(b *testing.B) {
			m, _ := rbm.Random(100, 25, 0.2236, 1, 7)
			s := newSampler(b, m, n, Settings{}, 1)
			b.ReportAllocs()
			for b.Loop() {
				s.Step()
			}
		})
	}
}
