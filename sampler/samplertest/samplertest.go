package samplertest

import (
	"context"
	"math"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/transform"
)

// Run runs the registered method alone on m (settings nil: its defaults;
// iters < 0: its default) with n particles or chains started from N(0, 1)
// and the root key of seed, and returns the final samples.
func Run(t testing.TB, method string, set sampler.Settings, m model.Model, n, iters int, seed uint64) *sampler.Samples {
	t.Helper()
	pl, err := sampler.Single(method, set, iters)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := transform.ForModel(transform.Normal{}, m)
	if err != nil {
		t.Fatal(err)
	}
	res, err := pl.Execute(context.Background(), sampler.Env{Model: m, Transform: tr, N: n, Key: rng.NewKey(seed)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != sampler.Completed {
		t.Fatalf("%s: %v", method, res.Err)
	}
	return &sampler.Samples{N: n, D: m.Dim(), Z: res.Z}
}

// SmallModels returns a 3×3 Ising grid with fields, an RBM with 8 visible
// and 3 hidden units, a product of categorical variables with 5 and 3
// states (one of probability zero), a factor graph with 2, 3 and 4
// states and a zero entry, and a 3-state Potts model on a 2×3 torus with
// per-state fields: every kind of variable and of zero the samplers
// must handle, small enough to enumerate; and that Potts model as
// Plain, with nothing but model.Model.
func SmallModels(t testing.TB) map[string]model.Model {
	t.Helper()
	ism, err := ising.Grid(3, 3, false, 0.4, []float64{0.3, -0.2, 0.1, 0, 0.5, -0.4, 0.2, 0.1, -0.3})
	if err != nil {
		t.Fatal(err)
	}
	r, err := rbm.Random(8, 3, 0.7, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := categorical.New([]categorical.Variable{
		{States: []float64{-1, -0.5, 0, 0.5, 1}, Probs: []float64{0.1, 0.2, 0.3, 0.1, 0.3}},
		{States: []float64{0, 1, 2}, Probs: []float64{0.5, 0, 0.5}},
	})
	if err != nil {
		t.Fatal(err)
	}
	fg, err := factorgraph.New([]int{3, 2, 4}, []factorgraph.Factor{
		{Scope: []int{0, 1}, LogTable: []float64{0.3, -0.5, 1.2, 0, -0.7, 0.4}},
		{Scope: []int{1, 2}, LogTable: []float64{0.1, 0.9, -0.3, 0.5, -1, 0.2, 0.6, math.Inf(-1)}},
		{Scope: []int{2}, LogTable: []float64{0.5, -0.5, 0, 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	pt, err := potts.Grid(2, 3, true, 3, 0.6, []float64{
		0.3, 0, -0.2, 0, 0.4, 0, -0.3, 0.1, 0.2, 0, 0, 0.5, 0.2, -0.1, 0, 0, 0.3, -0.2,
	})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]model.Model{"ising": ism, "rbm": r, "categorical": cat, "factorgraph": fg, "potts": pt, "plain-potts": Plain{pt}}
}

// Plain hides every optional interface of a model (model.Conditional,
// Relaxed, ProposalGradient, …): what a user's own type that implements
// model.Model alone gives a sampler.
type Plain struct{ model.Model }

// BenchSteps times Step of the sampler that start builds, on the two
// models of the sampling experiments: the 10×10 Ising grid (coupling 0.1)
// and the RBM with d = 100, M = 25, W ~ N(0, 0.05).
func BenchSteps(b *testing.B, start func(m model.Model, t *transform.Transform) (sampler.Sampler, error)) {
	grid, err := ising.Grid(10, 10, false, 0.1, nil)
	if err != nil {
		b.Fatal(err)
	}
	r, err := rbm.Random(100, 25, 0.2236, 1, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		m    model.Model
	}{{"ising-10x10", grid}, {"rbm-d=100-M=25", r}} {
		b.Run(c.name, func(b *testing.B) {
			tr, err := transform.ForModel(transform.Normal{}, c.m)
			if err != nil {
				b.Fatal(err)
			}
			s, err := start(c.m, tr)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				if err := s.Step(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// CheckMarginals compares the marginals of samples from m with exact
// enumeration: every state's frequency must lie within 5 binomial standard
// errors sqrt(p(1−p)/n) plus slack of its probability, which holds when the
// n samples are independent draws from m (final states of independent,
// mixed chains). It reports each failure under label and returns the
// largest error in standard errors.
func CheckMarginals(t testing.TB, label string, m model.Model, s *sampler.Samples, slack float64) float64 {
	t.Helper()
	res, err := exact.Enumerate(m, 1<<12)
	if err != nil {
		t.Fatal(err)
	}
	marg := sampler.Marginals(m, s)
	n := float64(s.N)
	worst := 0.0
	for i, p := range res.Marginals {
		for st, want := range p {
			se := math.Sqrt(want*(1-want)/n) + 1e-12
			got := marg[i][st]
			worst = max(worst, math.Abs(got-want)/se)
			if math.Abs(got-want) > 5*se+slack {
				t.Errorf("%s: P(z%d = %d) = %.4f, exact %.4f (SE %.4f)", label, i, st, got, want, se)
			}
		}
	}
	return worst
}
