package dmala

import (
	"context"
	"encoding/json"
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

// The chains' marginals match exact enumeration, at the default step size,
// at a large one and with the step size adapted during the first 100 of
// 300 steps (after which every chain is a fixed Metropolis–Hastings chain
// again). Each of n = 4000 chains contributes one sample, its state after
// the burn-in from the N(0, 1) start (300 steps, or 100 at α = 2 where
// more variables move per step), so the samples are
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
			alpha        float64
			adapt, steps int
		}{{0, 0, 300}, {2, 0, 100}, {0, 100, 300}} {
			s, err := newS(m, tr, 4000, Settings{StepSize: c.alpha, Adapt: c.adapt}, 3)
			if err != nil {
				t.Fatal(err)
			}
			for range c.steps {
				if err := s.Step(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			label := fmt.Sprintf("%s, α = %g", name, s.StepSize())
			if c.adapt > 0 {
				label = fmt.Sprintf("%s, α adapted to %.3g", name, s.StepSize())
			}
			worst := samplertest.CheckMarginals(t, label, m, samples(s), 0.002)
			if a := acceptance(s); !(a > 0.05) {
				t.Errorf("%s: acceptance rate %.3f", label, a)
			}
			t.Logf("%s: acceptance rate %.2f, largest error %.1f SE", label, acceptance(s), worst)
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

// The same seed gives the same samples on any number of cores, with the
// step size adapted during the first 10 of the 20 steps (the adaptation
// averages the chains' acceptance probabilities in chain order).
func TestSameSeedSameSamplesOnAnyCores(t *testing.T) {
	m, err := ising.Grid(4, 4, true, 0.3, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := transform.ForModel(transform.Normal{}, m)
	run := func(procs int) []int {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		s, err := newS(m, tr, 50, Settings{Adapt: 10}, 9)
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
	a, b, c := run(1), run(2), run(16)
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
	if _, err := newS(plain{m}, tr, 10, Settings{}, 1); err != nil {
		t.Errorf("a model without a relaxed form was refused: %v", err)
	}
	for _, a := range []float64{-1, math.Inf(1), math.NaN()} {
		if _, err := newS(m, tr, 10, Settings{StepSize: a}, 1); err == nil {
			t.Errorf("step size %v was accepted", a)
		}
	}
	if _, err := newS(m, tr, 0, Settings{}, 1); err == nil {
		t.Error("zero chains were accepted")
	}
	for _, set := range []Settings{{Adapt: -1}, {Adapt: 10, TargetAcceptance: 1}, {Adapt: 10, TargetAcceptance: -0.1},
		{Adapt: 10, TargetAcceptance: math.NaN()}, {TargetAcceptance: 0.5}} {
		if _, err := newS(m, tr, 10, set, 1); err == nil {
			t.Errorf("settings %+v were accepted", set)
		}
	}
}

// Without Adapt the resolved settings read as they did before adaptation
// existed (so that recorded runs keep their meaning); with it they hold
// the target.
func TestResolved(t *testing.T) {
	for _, c := range []struct {
		set  Settings
		want string
	}{
		{Settings{}, `{"step_size":0.6}`},
		{Settings{StepSize: 0.3}, `{"step_size":0.3}`},
		{Settings{Adapt: 100}, `{"step_size":0.6,"adapt":100,"target_acceptance":0.574}`},
		{Settings{Adapt: 5, TargetAcceptance: 0.4}, `{"step_size":0.6,"adapt":5,"target_acceptance":0.4}`},
	} {
		r := c.set.Resolved()
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%+v resolves to %s; want %s", c.set, b, c.want)
		}
		if err := r.Validate(); err != nil {
			t.Errorf("%+v resolves to invalid settings: %v", c.set, err)
		}
	}
}

// The step size moves during the Adapt first steps only, while Tuning
// reports true, and the statistics keep their names at every step:
// step_size is the α in use and tuned_acceptance_rate counts the
// proposals after the adaptation (0 until then). Without Adapt the
// sampler never tunes and reports acceptance_rate alone.
func TestAdaptation(t *testing.T) {
	tg := samplertest.CategoricalTarget(t, 200)
	tr, _ := transform.ForModel(transform.Normal{}, tg.Model)
	const adapt = 20
	s, err := newS(tg.Model, tr, 4, Settings{Adapt: adapt}, 1)
	if err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		var n []string
		for _, v := range s.Stats().Values {
			n = append(n, v.Name)
		}
		return n
	}
	want := []string{"acceptance_rate", "step_size", "tuned_acceptance_rate"}
	var moved bool
	var last float64
	for step := range adapt + 30 {
		if got := s.Tuning(); got != (step < adapt) {
			t.Fatalf("before step %d: Tuning() = %v", step+1, got)
		}
		before := s.StepSize()
		if err := s.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(names(), want) {
			t.Fatalf("after step %d: statistics %v; want %v", step+1, names(), want)
		}
		st := s.Stats()
		alpha, _ := st.Value("step_size")
		tuned, _ := st.Value("tuned_acceptance_rate")
		if alpha != s.StepSize() {
			t.Errorf("after step %d: step_size %v, StepSize() %v", step+1, alpha, s.StepSize())
		}
		switch {
		case step < adapt:
			moved = moved || s.StepSize() != before
			if tuned != 0 {
				t.Errorf("after adaptive step %d: tuned_acceptance_rate %v; want 0", step+1, tuned)
			}
		case s.StepSize() != before:
			t.Errorf("step %d, after the adaptation: α moved from %v to %v", step+1, before, s.StepSize())
		}
		last = tuned
	}
	if !moved {
		t.Error("α never moved during the adaptation")
	}
	if !(last > 0 && last <= 1) {
		t.Errorf("tuned_acceptance_rate %v after 30 steps of the adapted sampler", last)
	}
	s, _ = newS(tg.Model, tr, 4, Settings{}, 1)
	if s.Tuning() {
		t.Error("a sampler without adaptation is tuning")
	}
	if !slices.Equal(names(), []string{"acceptance_rate"}) {
		t.Errorf("without adaptation the statistics are %v; want acceptance_rate", names())
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
