package pas

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/balance"
	"github.com/dstein/dstein/sampler/samplertest"
	"github.com/dstein/dstein/transform"
)

// The chains' marginals match exact enumeration on every small model of
// the conformance kit, with either balancing function, at R = 1 (every
// path one variable), R = 2 (lengths 1–3) and R = 4 (lengths 1–7, at
// most the variables that can move; R itself is clipped to the 2
// variables of the categorical model and the 3 of the factor graph) after
// 400 steps, and with R adapted from 1 during the first 100 of 200 steps.
// Each of n = 2000 chains contributes one sample, its state after the
// burn-in from the N(0, 1) start, so the samples are independent: the
// count of a state is binomial with standard error sqrt(p(1−p)/n) ≤
// 0.0112, and the test allows 5 such errors plus 0.002
// (samplertest.CheckMarginals). The conformance test (samplertest) checks
// the default settings again, after the default 500 steps.
func TestMarginalsMatchExact(t *testing.T) {
	for name, m := range samplertest.SmallModels(t) {
		tr, err := transform.ForModel(transform.Normal{}, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, bal := range []balance.Func{balance.Sqrt, balance.Ratio} {
			for _, c := range []struct {
				set   Settings
				steps int
			}{
				{Settings{PathLength: 1}, 400},
				{Settings{PathLength: 2}, 400},
				{Settings{PathLength: 4}, 400},
				{Settings{PathLength: 1, Adapt: 100}, 200},
			} {
				c.set.Balance = bal
				s, err := newS(m, tr, 2000, c.set, 3)
				if err != nil {
					t.Fatal(err)
				}
				for range c.steps {
					if err := s.Step(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				label := fmt.Sprintf("%s, %v, R = %d", name, bal, s.PathLength())
				if c.set.Adapt > 0 {
					label = fmt.Sprintf("%s, %v, R adapted to %d", name, bal, s.PathLength())
				}
				worst := samplertest.CheckMarginals(t, label, m, samples(s), 0.002)
				if a := acceptance(s); !(a > 0.05) {
					t.Errorf("%s: acceptance rate %.3f", label, a)
				}
				t.Logf("%s: acceptance rate %.2f, largest error %.1f SE", label, acceptance(s), worst)
			}
		}
	}
}

// The same seed gives the same samples on any number of cores, with the
// path length adapted during the first 10 of the 20 steps, on binary and
// on many-state variables.
func TestSameSeedSameSamplesOnAnyCores(t *testing.T) {
	grid, err := ising.Grid(4, 4, true, 0.3, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []model.Model{grid, samplertest.SmallModels(t)["potts"]} {
		tr, _ := transform.ForModel(transform.Normal{}, m)
		run := func(procs int) []int {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			s, err := newS(m, tr, 50, Settings{PathLength: 3, Adapt: 10}, 9)
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
}

// plain hides the relaxed form.
type plain struct{ model.Model }

func TestBadInput(t *testing.T) {
	m, _ := ising.Grid(2, 2, false, 0.3, nil)
	tr, _ := transform.ForModel(transform.Normal{}, m)
	if _, err := newS(plain{m}, tr, 10, Settings{}, 1); err != nil {
		t.Errorf("a model without a relaxed form was refused: %v", err)
	}
	if _, err := newS(m, tr, 0, Settings{}, 1); err == nil {
		t.Error("zero chains were accepted")
	}
	for _, set := range []Settings{{PathLength: -1}, {Adapt: -1}, {Adapt: 10, TargetAcceptance: 1},
		{Adapt: 10, TargetAcceptance: -0.1}, {Adapt: 10, TargetAcceptance: math.NaN()},
		{TargetAcceptance: 0.5}, {Balance: 7}} {
		if _, err := newS(m, tr, 10, set, 1); err == nil {
			t.Errorf("settings %+v were accepted", set)
		}
	}
}

// The resolved settings fill in each balancing function's default path
// length, and with Adapt
// the target; their JSON names the balancing function.
func TestResolved(t *testing.T) {
	for _, c := range []struct {
		set  Settings
		want string
	}{
		{Settings{}, `{"path_length":8,"balance":"sqrt"}`},
		{Settings{Balance: balance.Ratio}, `{"path_length":12,"balance":"ratio"}`},
		{Settings{PathLength: 3, Balance: balance.Ratio}, `{"path_length":3,"balance":"ratio"}`},
		{Settings{Adapt: 100}, `{"path_length":8,"balance":"sqrt","adapt":100,"target_acceptance":0.574}`},
		{Settings{PathLength: 2, Adapt: 5, TargetAcceptance: 0.4}, `{"path_length":2,"balance":"sqrt","adapt":5,"target_acceptance":0.4}`},
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
		back := new(Settings)
		if err := json.Unmarshal(b, back); err != nil || *back != *r.(*Settings) {
			t.Errorf("%s reads back as %+v, %v", b, back, err)
		}
	}
}

// The path length moves during the Adapt first steps only, while Tuning
// reports true, and the statistics keep their names at every step:
// path_length is the R in use and tuned_acceptance_rate counts the
// proposals after the adaptation (0 until then). Without Adapt the
// sampler never tunes and reports acceptance_rate alone.
func TestAdaptation(t *testing.T) {
	m := samplertest.MultiStateTargets(t)[1].Model // the Potts torus
	tr, _ := transform.ForModel(transform.Normal{}, m)
	const adapt = 20
	s, err := newS(m, tr, 4, Settings{Adapt: adapt, PathLength: 1}, 1)
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
	want := []string{"acceptance_rate", "path_length", "tuned_acceptance_rate"}
	var moved bool
	var last float64
	for step := range adapt + 30 {
		if got := s.Tuning(); got != (step < adapt) {
			t.Fatalf("before step %d: Tuning() = %v", step+1, got)
		}
		before := s.PathLength()
		if err := s.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(names(), want) {
			t.Fatalf("after step %d: statistics %v; want %v", step+1, names(), want)
		}
		st := s.Stats()
		r, _ := st.Value("path_length")
		tuned, _ := st.Value("tuned_acceptance_rate")
		if r != float64(s.PathLength()) {
			t.Errorf("after step %d: path_length %v, PathLength() %v", step+1, r, s.PathLength())
		}
		switch {
		case step < adapt:
			moved = moved || s.PathLength() != before
			if tuned != 0 {
				t.Errorf("after adaptive step %d: tuned_acceptance_rate %v; want 0", step+1, tuned)
			}
		case s.PathLength() != before:
			t.Errorf("step %d, after the adaptation: R moved from %v to %v", step+1, before, s.PathLength())
		}
		last = tuned
	}
	if !moved {
		t.Error("R never moved during the adaptation")
	}
	if !(last > 0 && last <= 1) {
		t.Errorf("tuned_acceptance_rate %v after 30 steps of the adapted sampler", last)
	}
	t.Logf("R adapted from 1 to %d; acceptance rate after the adaptation %.2f", s.PathLength(), last)
	s, _ = newS(m, tr, 4, Settings{}, 1)
	if s.Tuning() {
		t.Error("a sampler without adaptation is tuning")
	}
	if !slices.Equal(names(), []string{"acceptance_rate"}) {
		t.Errorf("without adaptation the statistics are %v; want acceptance_rate", names())
	}
}

// A path length longer than the variables that can move is clipped to
// them: on 3 variables, of which one has a single state, R = 50 becomes
// 2, and the paths have length 1 to 2. A variable whose every other state
// has probability zero never moves, and a path longer than the variables
// that can move at a state is not proposed (a rejection, without
// evaluations). The chains still match the exact marginals (tolerance as
// in TestMarginalsMatchExact).
func TestShortOfVariables(t *testing.T) {
	m, err := categorical.New([]categorical.Variable{
		{States: []float64{0, 1, 2}, Probs: []float64{0.2, 0.3, 0.5}},
		{States: []float64{7}, Probs: []float64{1}},
		{States: []float64{0, 1, 2}, Probs: []float64{0.6, 0, 0.4}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := transform.ForModel(transform.Normal{}, m)
	s, err := newS(m, tr, 2000, Settings{PathLength: 50}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if s.PathLength() != 2 || s.movers != 2 {
		t.Fatalf("R = %d with %d variables that can move; want 2 and 2", s.PathLength(), s.movers)
	}
	lengths := map[int]int{}
	for range 200 {
		for c := range s.chains {
			lengths[s.length(&s.chains[c])]++
		}
		if err := s.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if len(lengths) != 2 || lengths[1] == 0 || lengths[2] == 0 {
		t.Errorf("path lengths drawn: %v; want 1 and 2", lengths)
	}
	samplertest.CheckMarginals(t, "categorical, R = 50", m, samples(s), 0.002)

	// A variable whose other states are impossible: p = (1, 0, 0). At
	// every state only variable 0 can move, so paths of 2 are not
	// proposed.
	m, _ = categorical.New([]categorical.Variable{
		{States: []float64{0, 1, 2}, Probs: []float64{0.2, 0.3, 0.5}},
		{States: []float64{0, 1, 2}, Probs: []float64{1, 0, 0}},
	})
	tr, _ = transform.ForModel(transform.Normal{}, m)
	s, _ = newS(m, tr, 1, Settings{}, 4)
	ch := &s.chains[0]
	ch.Z[1], ch.z2[1] = 0, 0
	ch.pg.Grad(ch.g, ch.Z)
	ch.lp = m.LogProb(ch.Z)
	if err := s.fill(context.Background(), ch.at, ch.g, ch.Z); err != nil {
		t.Fatal(err)
	}
	if ch.at.movable != 1 {
		t.Fatalf("%d variables can move; want 1", ch.at.movable)
	}
	for range 100 {
		acc, evals := ch.Accepted, ch.Evals
		s.propose(ch, 2)
		if ch.Accepted != acc || ch.accProb != 0 || ch.Evals != evals {
			t.Fatalf("a path of 2 was proposed: accepted %d → %d, evaluations %d → %d", acc, ch.Accepted, evals, ch.Evals)
		}
		s.propose(ch, 1)
		if ch.Z[1] != 0 {
			t.Fatalf("the variable without possible moves moved to %d", ch.Z[1])
		}
	}
	if ch.Accepted == 0 {
		t.Error("paths of 1 were never accepted")
	}
}

// A chain that starts in a state of probability zero (the factor graph
// of samplertest.SmallModels has a zero entry) accepts any possible
// proposal, and leaves it.
func TestImpossibleStart(t *testing.T) {
	m := samplertest.SmallModels(t)["factorgraph"]
	tr, _ := transform.ForModel(transform.Normal{}, m)
	s, err := newS(m, tr, 1, Settings{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	ch := &s.chains[0]
	copy(ch.Z, []int{0, 1, 3}) // factor (1, 2) is zero at (1, 3)
	copy(ch.z2, ch.Z)
	ch.pg.Grad(ch.g, ch.Z)
	ch.lp = m.LogProb(ch.Z)
	if !math.IsInf(ch.lp, -1) {
		t.Fatalf("log p* of the start is %v; want −Inf", ch.lp)
	}
	if err := s.fill(context.Background(), ch.at, ch.g, ch.Z); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if err := s.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if math.IsInf(ch.lp, -1) || ch.lp != m.LogProb(ch.Z) {
		t.Errorf("after 20 steps the chain is at %v, log p* %v (kept %v)", ch.Z, m.LogProb(ch.Z), ch.lp)
	}
}

// With R adapted during 250 warm-up steps from its default, 4 chains of
// 250 draws (key 1, as `dstein sample --method pas --adapt 250 --chains 4
// --draws 250` keeps them) estimate the state probabilities of 300
// independent categorical variables of 4 states and of the Potts torus of
// samplertest.MultiStateTargets within a few times the RMSE of 1000
// exact independent draws, accepting 0.5–0.7 of the proposals after the
// adaptation (the target is 0.574).
//
// Over keys 1–5 the ratios of the RMSE to that of 1000 exact draws were
// 3.98–4.15 (categorical, Sqrt; R adapted from 8 to 37–40), 3.31–3.50
// (categorical, Ratio; R from 12 to 49–51), 1.77–2.84 (Potts, Sqrt; R 3)
// and 1.17–2.94 (Potts, Ratio; R 3–4); key 1: 4.15, 3.31, 2.84, 1.17. At
// the default path lengths, without adaptation, 6.08–6.57 and 4.80–5.29
// (categorical, accepting 0.96) and 2.07–3.34 and 1.19–2.98 (Potts,
// accepting about 0.4). Each accepted proposal changes a path of about R
// of the 300 categorical variables, and not one of them is drawn from its
// exact distribution (as DLMC's long jumps are, 0.99–1.03 there): PAS
// estimates them about as well as DMALA (4.1–4.4), better with Ratio.
func TestAdaptedOnMultiStateTargets(t *testing.T) {
	targets := append([]samplertest.Target{samplertest.CategoricalTarget(t, 300)}, samplertest.MultiStateTargets(t)[1])
	limits := map[string]float64{"categorical-300x4": 5, "potts-3x3": 3.5}
	for _, tg := range targets {
		for _, bal := range []balance.Func{balance.Sqrt, balance.Ratio} {
			s, smp := samplertest.KeepDraws(t, tg.Model, 4, 250, 250, 1, func(p *sampler.Problem) (sampler.Sampler, error) {
				return New(p, Settings{Adapt: 250, Balance: bal})
			})
			rmse, iid := samplertest.StateRMSE(tg.Model, s, tg.Marginals)
			st := smp.Stats()
			acc, _ := st.Value("tuned_acceptance_rate")
			r, _ := st.Value("path_length")
			t.Logf("%s, %v: RMSE %.4f, %.2f× that of 1000 i.i.d. draws (%.4f); R %v, acceptance rate after adaptation %.3f", tg.Name, bal, rmse, rmse/iid, iid, r, acc)
			if lim := limits[tg.Name]; rmse > lim*iid {
				t.Errorf("%s, %v: RMSE of the state probabilities %.4f is %.1f× that of 1000 i.i.d. draws (%.4f); want at most %v×", tg.Name, bal, rmse, rmse/iid, iid, lim)
			}
			if acc < 0.4 || acc > 0.8 {
				t.Errorf("%s, %v: acceptance rate after adaptation %.3f; want 0.4–0.8 around the target 0.574", tg.Name, bal, acc)
			}
		}
	}
}
