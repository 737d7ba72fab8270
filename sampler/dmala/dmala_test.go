package dmala

import (
	"context"
	"fmt"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/sampler/samplertest"
	"github.com/dstein/dstein/transform"
)

// The chains' marginals match exact enumeration, at the default step size
// and at a large one. Each of n = 4000 chains contributes one sample, its
// state after the burn-in from the N(0, 1) start (300 steps, or 100 at
// α = 2 where more variables move per step), so the samples are
// independent and the chains' autocorrelation does not enter the standard
// error: the count of a state is binomial, with standard error
// sqrt(p(1−p)/n) ≤ 0.0079. The test allows 5 such errors plus 0.002 for
// what may be left of the start, so that a correct sampler fails one of the
// ~80 checks with probability below 1e-4.
func TestMarginalsMatchExact(t *testing.T) {
	for name, m := range samplertest.SmallModels(t) {
		tr, err := transform.ForModel(transform.Normal{}, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			alpha float64
			steps int
		}{{0, 300}, {2, 100}} {
			s, err := newS(m, tr, 4000, Settings{StepSize: c.alpha}, 3)
			if err != nil {
				t.Fatal(err)
			}
			for range c.steps {
				if err := s.Step(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			worst := samplertest.CheckMarginals(t, fmt.Sprintf("%s, α = %g", name, s.StepSize()), m, samples(s), 0.002)
			if a := acceptance(s); !(a > 0.05) {
				t.Errorf("%s, α = %g: acceptance rate %.3f", name, s.StepSize(), a)
			}
			t.Logf("%s, α = %g: acceptance rate %.2f, largest error %.1f SE", name, s.StepSize(), acceptance(s), worst)
		}
	}
}

// The cached proposal is a distribution per variable and for spins it is
// the logistic flip probability of the package comment.
func TestProposal(t *testing.T) {
	for name, m := range samplertest.SmallModels(t) {
		tr, _ := transform.ForModel(transform.Normal{}, m)
		s, err := newS(m, tr, 3, Settings{StepSize: 0.7}, 2)
		if err != nil {
			t.Fatal(err)
		}
		ch := &s.chains[1]
		for i := range s.d {
			a, b := s.off[i], s.off[i+1]
			var sum float64
			for k := a; k < b; k++ {
				sum += math.Exp(ch.logq[k])
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Errorf("%s: variable %d: proposal sums to %v", name, i, sum)
			}
			for k := a; k < b; k++ {
				if k == a+ch.Z[i] {
					continue
				}
				// Relative to staying, a move has weight exp(½Δg − 1/α).
				want := (ch.g[k]-ch.g[a+ch.Z[i]])/2 - 1/0.7
				if got := ch.logq[k] - ch.logq[a+ch.Z[i]]; math.Abs(got-want) > 1e-9 {
					t.Errorf("%s: variable %d state %d: log odds %v, want %v", name, i, k-a, got, want)
				}
			}
		}
	}
}

func TestSameSeedSameSamplesOnAnyCores(t *testing.T) {
	m, err := ising.Grid(4, 4, true, 0.3, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := transform.ForModel(transform.Normal{}, m)
	run := func(procs int) []int {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		s, err := newS(m, tr, 50, Settings{}, 9)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			if err := s.Step(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		return samples(s).Z
	}
	a, b, c := run(1), run(2), run(2)
	if !slices.Equal(a, b) || !slices.Equal(b, c) {
		t.Fatal("the same seed gave different samples")
	}
	if d := run(1); !slices.Equal(a, d) {
		t.Fatal("the same seed gave different samples on one core")
	}
}

// plain hides the relaxed form.
type plain struct{ model.Model }

func TestBadInput(t *testing.T) {
	m, _ := ising.Grid(2, 2, false, 0.3, nil)
	tr, _ := transform.ForModel(transform.Normal{}, m)
	if _, err := newS(plain{m}, tr, 10, Settings{}, 1); err == nil {
		t.Error("a model without a relaxed form was accepted")
	}
	for _, a := range []float64{-1, math.Inf(1), math.NaN()} {
		if _, err := newS(m, tr, 10, Settings{StepSize: a}, 1); err == nil {
			t.Errorf("step size %v was accepted", a)
		}
	}
	if _, err := newS(m, tr, 0, Settings{}, 1); err == nil {
		t.Error("zero chains were accepted")
	}
}

// newS starts n chains at Γ of the N(0, 1) initial draw of seed.
func newS(m model.Model, tr *transform.Transform, n int, set Settings, seed uint64) (*Sampler, error) {
	return New(sampler.NewProblem(m, tr, n, sampler.Init{}, rng.NewKey(seed)), set)
}

func samples(s *Sampler) *sampler.Samples {
	return &sampler.Samples{N: s.n, D: s.d, Z: append([]int(nil), s.Current()...)}
}

func acceptance(s *Sampler) float64 {
	a, _ := s.Stats().Value("acceptance_rate")
	return a
}
