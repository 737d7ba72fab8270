package samplertest

import (
	"fmt"
	"math"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	_ "github.com/dstein/dstein/sampler/all"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/sampler/pt"
	"github.com/dstein/dstein/transform"
)

type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.errors = append(r.errors, fmt.Sprintf(f, a...)) }

// CheckMarginals accepts exact draws and rejects draws that all sit in one
// state.
func TestCheckMarginalsCanFail(t *testing.T) {
	for name, m := range SmallModels(t) {
		truth, err := exact.NewEnumerated(m, 1<<12)
		if err != nil {
			t.Fatal(err)
		}
		good := sampler.NewSamples(4000, m.Dim())
		truth.Sample(good.Z, rng.NewKey(1).For(rng.Sample).Rand())
		r := &recorder{TB: t}
		CheckMarginals(r, name, m, good, 0)
		if len(r.errors) > 0 {
			t.Errorf("%s: exact draws rejected: %v", name, r.errors)
		}
		bad := sampler.NewSamples(4000, m.Dim()) // every variable in its first state
		r = &recorder{TB: t}
		CheckMarginals(r, name, m, bad, 0)
		if len(r.errors) == 0 {
			t.Errorf("%s: draws all in one state accepted", name)
		}
	}
}

// Every registered method that claims exact draws (all but the
// approximate ones) converges to the exact marginals on every small model
// it supports (a method with declared needs may refuse other models with
// an error from New, and those pairs are skipped): 2000 chains, the method's default settings and default
// number of iterations (which a method must choose large enough to mix on
// models this small); tolerance as in CheckMarginals (5 binomial SE plus
// slack 0.002 for residual bias).
func TestEveryMethodMatchesExact(t *testing.T) {
	for _, meth := range sampler.Methods() {
		if meth.Approximate {
			continue
		}
		for name, m := range SmallModels(t) {
			t.Run(meth.Name+"/"+name, func(t *testing.T) {
				if err := refuses(meth, m); err != nil {
					t.Skipf("%s needs %s: %v", meth.Name, meth.Needs, err)
				}
				s := Run(t, meth.Name, nil, m, 2000, -1, 7)
				worst := CheckMarginals(t, meth.Name+" on "+name, m, s, 0.002)
				t.Logf("%s on %s: largest error %.1f SE", meth.Name, name, worst)
			})
		}
	}
}

// refuses returns the error with which a method that declares needs
// (Method.Needs) refuses a model when it is built, or nil; methods without
// needs must accept every model.
func refuses(meth *sampler.Method, m model.Model) error {
	if meth.Needs == "" {
		return nil
	}
	tr, err := transform.ForModel(transform.Normal{}, m)
	if err != nil {
		return nil // Run reports it
	}
	_, err = meth.New(sampler.NewProblem(m, tr, 1, sampler.Init{}, rng.NewKey(1)), meth.NewSettings())
	return err
}

// logicalNetwork is a small Bayesian network with deterministic tables
// that single-site moves cannot cross: either = tub ∨ lung (from tub =
// no, lung = yes, either = yes every single change has probability zero,
// so a chain that starts with either = yes never leaves it), an x-ray
// that reads either, and a chain of equalities a = b = c with a field on
// c (two tables sharing b, so one block of three variables).
func logicalNetwork(t *testing.T) *factorgraph.Graph {
	t.Helper()
	lg := func(p ...float64) []float64 {
		out := make([]float64, len(p))
		for i, x := range p {
			out[i] = math.Log(x)
		}
		return out
	}
	g, err := factorgraph.New([]int{2, 2, 2, 2, 2, 2, 2}, []factorgraph.Factor{
		{Scope: []int{0}, LogTable: lg(0.9, 0.1)},                     // tub
		{Scope: []int{1}, LogTable: lg(0.8, 0.2)},                     // lung
		{Scope: []int{0, 1, 2}, LogTable: lg(1, 0, 0, 1, 0, 1, 0, 1)}, // either | tub, lung
		{Scope: []int{2, 3}, LogTable: lg(0.95, 0.05, 0.02, 0.98)},    // xray | either
		{Scope: []int{4, 5}, LogTable: lg(1, 0, 0, 1)},                // a = b
		{Scope: []int{5, 6}, LogTable: lg(1, 0, 0, 1)},                // b = c
		{Scope: []int{6}, LogTable: lg(0.3, 0.7)},                     // c
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestJointBlocksCrossLogicalRelations: Gibbs chains and parallel
// tempering's site kernel update each group of zero-holding tables
// jointly (gibbs.Blocks), so that they reach every configuration of
// positive probability: the final states of 2000 chains started from
// N(0, 1) match the exact marginals (CheckMarginals: 5 binomial SE). With
// single-site moves alone, the chains that start with either = yes (about
// half) keep it, and P(either = yes) is about 0.5 against 0.28.
func TestJointBlocksCrossLogicalRelations(t *testing.T) {
	g := logicalNetwork(t)
	if len(g.Blocks()) != 2 || !g.BlocksCover() {
		t.Fatalf("blocks %v, cover %v; want two, covering", g.Blocks(), g.BlocksCover())
	}
	for _, c := range []struct {
		method string
		set    sampler.Settings
	}{
		{gibbs.Name, &gibbs.Settings{}},
		{pt.Name, &pt.Settings{Ladder: 4, Kernel: pt.Site}},
	} {
		s := Run(t, c.method, c.set, g, 2000, 200, 11)
		worst := CheckMarginals(t, c.method+" on the logical network", g, s, 0)
		t.Logf("%s: largest error %.1f SE", c.method, worst)
	}
}
