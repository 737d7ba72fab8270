package dlmc

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
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/samplertest"
	"github.com/dstein/dstein/transform"
)

// The chains' marginals match exact enumeration on every small model of
// the conformance kit, with either balancing function, at its default
// step size after 400 steps (the RBM, with Ratio, is still 5 standard
// errors off after 200 with some keys) and with h adapted during the
// first 100 of 200 steps (which
// takes h to 1–4 on the Ising grid and the Potts torus, accepting 0.6 of
// the proposals, and to 10³–10⁶ on the other three, whose proposals are
// accepted more often than the target however long h: most many-state
// rows there are ν itself). Each of n = 2000 chains
// contributes one sample, its state after the burn-in from the N(0, 1)
// start, so the samples are independent: the count of a state is binomial
// with standard error sqrt(p(1−p)/n) ≤ 0.0112, and the test allows 5 such
// errors plus 0.002 (samplertest.CheckMarginals). The conformance test
// (samplertest) checks the default settings again, after the default 500
// steps.
func TestMarginalsMatchExact(t *testing.T) {
	for name, m := range samplertest.SmallModels(t) {
		tr, err := transform.ForModel(transform.Normal{}, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			set   Settings
			steps int
		}{
			{Settings{}, 400},
			{Settings{Balance: Ratio}, 400},
			{Settings{Adapt: 100}, 200},
			{Settings{Balance: Ratio, Adapt: 100}, 200},
		} {
			s, err := newS(m, tr, 2000, c.set, 3)
			if err != nil {
				t.Fatal(err)
			}
			for range c.steps {
				if err := s.Step(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			label := fmt.Sprintf("%s, %v, h = %.3g", name, c.set.Balance, s.StepSize())
			if c.set.Adapt > 0 {
				label = fmt.Sprintf("%s, %v, h adapted to %.3g", name, c.set.Balance, s.StepSize())
			}
			worst := samplertest.CheckMarginals(t, label, m, samples(s), 0.002)
			if a := acceptance(s); !(a > 0.05) {
				t.Errorf("%s: acceptance rate %.3f", label, a)
			}
			t.Logf("%s: acceptance rate %.2f, largest error %.1f SE", label, acceptance(s), worst)
		}
	}
}

// The cached proposal of every variable is a distribution, and for a
// variable of two states it is the closed form of the two-state jump
// process with the log-ratio δ = g[i, s'] − g[i, z_i] of the proposal
// gradient.
func TestProposal(t *testing.T) {
	for name, m := range samplertest.SmallModels(t) {
		tr, _ := transform.ForModel(transform.Normal{}, m)
		for _, bal := range []Balance{Sqrt, Ratio} {
			s, err := newS(m, tr, 3, Settings{StepSize: 0.7, Balance: bal}, 2)
			if err != nil {
				t.Fatal(err)
			}
			ch := &s.chains[1]
			for i := range s.d {
				a, b := s.off[i], s.off[i+1]
				var sum float64
				for k := a; k < b; k++ {
					sum += ch.q[k]
					if ch.q[k] > 0 && math.Abs(ch.logq[k]-math.Log(ch.q[k])) > 1e-12 {
						t.Errorf("%s: variable %d state %d: log q %v of q %v", name, i, k-a, ch.logq[k], ch.q[k])
					}
				}
				if math.Abs(sum-1) > 1e-12 {
					t.Errorf("%s, %v: variable %d: proposal sums to %v", name, bal, i, sum)
				}
				if b-a != 2 {
					continue
				}
				cur := a + ch.Z[i]
				o := a + b - 1 - cur
				delta := ch.g[o] - ch.g[cur]
				x, y := math.Exp(bal.LogWeight(delta)), math.Exp(bal.LogWeight(-delta)) // rates out and back
				want := x / (x + y) * (1 - math.Exp(-(x+y)*0.7))
				if math.Abs(ch.q[o]-want) > 1e-12 {
					t.Errorf("%s, %v: variable %d: P(move) %v, want %v", name, bal, i, ch.q[o], want)
				}
			}
		}
	}
}

// On independent variables the proposal gradient gives every move's
// log-ratio exactly, each variable's jump process is reversible with
// respect to its exact marginal, and so the product proposal is
// reversible with respect to p*: every proposal is accepted (up to the
// rounding of the transition probabilities), whatever h: the kernel's
// probabilities satisfy detailed balance to relative accuracy.
func TestIndependentVariablesAlwaysAccepted(t *testing.T) {
	tg := samplertest.CategoricalTarget(t, 50)
	tr, _ := transform.ForModel(transform.Normal{}, tg.Model)
	for _, bal := range []Balance{Sqrt, Ratio} {
		for _, h := range []float64{0.05, 1, 30, 1e9} {
			s, err := newS(tg.Model, tr, 8, Settings{StepSize: h, Balance: bal}, 4)
			if err != nil {
				t.Fatal(err)
			}
			for range 20 {
				if err := s.Step(context.Background()); err != nil {
					t.Fatal(err)
				}
				for c := range s.chains {
					if p := s.chains[c].accProb; p < 1-1e-9 {
						t.Fatalf("%v, h = %v: acceptance probability %v", bal, h, p)
					}
				}
			}
			if a := acceptance(s); a != 1 {
				t.Errorf("%v, h = %v: acceptance rate %v", bal, h, a)
			}
		}
	}
}

// The same seed gives the same samples on any number of cores, with the
// step size adapted during the first 10 of the 20 steps, on binary and on
// many-state variables.
func TestSameSeedSameSamplesOnAnyCores(t *testing.T) {
	grid, err := ising.Grid(4, 4, true, 0.3, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []model.Model{grid, samplertest.SmallModels(t)["potts"]} {
		tr, _ := transform.ForModel(transform.Normal{}, m)
		run := func(procs int, correct bool) []int {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			p := sampler.NewProblem(m, tr, 50, sampler.Init{}, rng.NewKey(9))
			var s *Sampler
			if correct {
				s, err = New(p, Settings{Adapt: 10})
			} else {
				s, err = NewUncorrected(p, UncorrectedSettings{StepSize: 0.5})
			}
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
		for _, correct := range []bool{true, false} {
			a, b, c := run(1, correct), run(2, correct), run(16, correct)
			if !slices.Equal(a, b) || !slices.Equal(b, c) {
				t.Fatalf("correct = %v: the same seed gave different samples", correct)
			}
			if d := run(1, correct); !slices.Equal(a, d) {
				t.Fatalf("correct = %v: the same seed gave different samples on one core", correct)
			}
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
	for _, a := range []float64{-1, math.Inf(1), math.NaN()} {
		if _, err := newS(m, tr, 10, Settings{StepSize: a}, 1); err == nil {
			t.Errorf("step size %v was accepted", a)
		}
		p := sampler.NewProblem(m, tr, 10, sampler.Init{}, rng.NewKey(1))
		if _, err := NewUncorrected(p, UncorrectedSettings{StepSize: a}); err == nil {
			t.Errorf("step size %v was accepted without the correction", a)
		}
	}
	if _, err := newS(m, tr, 0, Settings{}, 1); err == nil {
		t.Error("zero chains were accepted")
	}
	for _, set := range []Settings{{Adapt: -1}, {Adapt: 10, TargetAcceptance: 1}, {Adapt: 10, TargetAcceptance: -0.1},
		{Adapt: 10, TargetAcceptance: math.NaN()}, {TargetAcceptance: 0.5}, {Balance: 7}} {
		if _, err := newS(m, tr, 10, set, 1); err == nil {
			t.Errorf("settings %+v were accepted", set)
		}
	}
	var b Balance
	if err := b.UnmarshalText([]byte("barker")); err == nil {
		t.Error("an unknown balancing function was parsed")
	}
}

// The resolved settings fill in each balancing function's default step
// size, and with Adapt the target; their JSON names the balancing
// function.
func TestResolved(t *testing.T) {
	for _, c := range []struct {
		set  sampler.Settings
		want string
	}{
		{&Settings{}, `{"step_size":0.15,"balance":"sqrt"}`},
		{&Settings{Balance: Ratio}, `{"step_size":0.3,"balance":"ratio"}`},
		{&Settings{StepSize: 0.5, Balance: Ratio}, `{"step_size":0.5,"balance":"ratio"}`},
		{&Settings{Adapt: 100}, `{"step_size":0.15,"balance":"sqrt","adapt":100,"target_acceptance":0.574}`},
		{&Settings{Adapt: 5, TargetAcceptance: 0.4}, `{"step_size":0.15,"balance":"sqrt","adapt":5,"target_acceptance":0.4}`},
		{&UncorrectedSettings{}, `{"step_size":0.15,"balance":"sqrt"}`},
		{&UncorrectedSettings{Balance: Ratio}, `{"step_size":0.3,"balance":"ratio"}`},
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
		if err := json.Unmarshal(b, back); err != nil {
			t.Errorf("%s does not read back: %v", b, err)
		}
	}
}

// The step size moves during the Adapt first steps only, while Tuning
// reports true, and the statistics keep their names at every step:
// step_size is the h in use and tuned_acceptance_rate counts the
// proposals after the adaptation (0 until then). Without Adapt the
// sampler never tunes and reports acceptance_rate alone; without the
// correction, moved_fraction alone.
func TestAdaptation(t *testing.T) {
	// Proposals on independent variables are always accepted, which
	// would only lengthen h; the Potts torus couples its variables.
	m := samplertest.MultiStateTargets(t)[1].Model
	tr, _ := transform.ForModel(transform.Normal{}, m)
	const adapt = 20
	s, err := newS(m, tr, 4, Settings{Adapt: adapt, StepSize: 3}, 1)
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
		h, _ := st.Value("step_size")
		tuned, _ := st.Value("tuned_acceptance_rate")
		if h != s.StepSize() {
			t.Errorf("after step %d: step_size %v, StepSize() %v", step+1, h, s.StepSize())
		}
		switch {
		case step < adapt:
			moved = moved || s.StepSize() != before
			if tuned != 0 {
				t.Errorf("after adaptive step %d: tuned_acceptance_rate %v; want 0", step+1, tuned)
			}
		case s.StepSize() != before:
			t.Errorf("step %d, after the adaptation: h moved from %v to %v", step+1, before, s.StepSize())
		}
		last = tuned
	}
	if !moved {
		t.Error("h never moved during the adaptation")
	}
	if !(last > 0 && last <= 1) {
		t.Errorf("tuned_acceptance_rate %v after 30 steps of the adapted sampler", last)
	}
	t.Logf("h adapted from 3 to %.3g; acceptance rate after the adaptation %.2f", s.StepSize(), last)
	s, _ = newS(m, tr, 4, Settings{}, 1)
	if s.Tuning() {
		t.Error("a sampler without adaptation is tuning")
	}
	if !slices.Equal(names(), []string{"acceptance_rate"}) {
		t.Errorf("without adaptation the statistics are %v; want acceptance_rate", names())
	}
	s, _ = NewUncorrected(sampler.NewProblem(m, tr, 4, sampler.Init{}, rng.NewKey(1)), UncorrectedSettings{})
	if !slices.Equal(names(), []string{"moved_fraction"}) {
		t.Errorf("without the correction the statistics are %v; want moved_fraction", names())
	}
}

// With h adapted during 250 warm-up steps, 4 chains of 250 draws (key 1,
// as `dstein sample --method dlmc --adapt 250 --chains 4 --draws 250`
// keeps them) estimate the state probabilities of 300 independent
// categorical variables of 4 states and of the Potts torus of
// samplertest.MultiStateTargets about as well as 1000 exact independent
// draws: every proposal on the independent variables is accepted
// (TestIndependentVariablesAlwaysAccepted), so h grows to its largest
// value, 10⁹, where each variable's proposal is its exact distribution;
// on the torus proposals are accepted more often than the target at every
// h (0.69–0.72 once h is in the thousands, where every variable's
// proposal is the distribution the gradient estimates), and h grows to
// 10³–10⁵.
//
// Over keys 1–5 the ratios of the RMSE to that of 1000 exact draws were
// 0.99–1.03 (categorical, Sqrt), 0.96–1.08 (categorical, Ratio),
// 1.04–2.60 and 1.04–2.71 (Potts, Sqrt and Ratio; key 1: 1.16, 1.12); at
// the default step sizes, without adaptation, 1.89–1.99 and 2.06–2.32
// (categorical) and 1.64–4.62 and 3.09–3.72 (Potts). DMALA adapted the
// same way gives 4.1–4.4 on the categorical variables and 1.7 on the
// torus (its TestAdaptedStepSize, without thinning).
func TestAdaptedOnMultiStateTargets(t *testing.T) {
	targets := append([]samplertest.Target{samplertest.CategoricalTarget(t, 300)}, samplertest.MultiStateTargets(t)[1])
	limits := map[string]float64{"categorical-300x4": 1.5, "potts-3x3": 3.5}
	for _, tg := range targets {
		for _, bal := range []Balance{Sqrt, Ratio} {
			s, smp := samplertest.KeepDraws(t, tg.Model, 4, 250, 250, 1, func(p *sampler.Problem) (sampler.Sampler, error) {
				return New(p, Settings{Adapt: 250, Balance: bal})
			})
			rmse, iid := samplertest.StateRMSE(tg.Model, s, tg.Marginals)
			st := smp.Stats()
			acc, _ := st.Value("tuned_acceptance_rate")
			h, _ := st.Value("step_size")
			t.Logf("%s, %v: RMSE %.4f, %.2f× that of 1000 i.i.d. draws (%.4f); h %.3g, acceptance rate after adaptation %.3f", tg.Name, bal, rmse, rmse/iid, iid, h, acc)
			if lim := limits[tg.Name]; rmse > lim*iid {
				t.Errorf("%s, %v: RMSE of the state probabilities %.4f is %.1f× that of 1000 i.i.d. draws (%.4f); want at most %v×", tg.Name, bal, rmse, rmse/iid, iid, lim)
			}
			if acc < 0.5 {
				t.Errorf("%s, %v: acceptance rate after adaptation %.3f; want at least 0.5", tg.Name, bal, acc)
			}
		}
	}
}

// Without the correction every proposal is taken. On independent
// variables, whose jump processes are exact, the chains are still exact;
// on the coupled Ising grid of samplertest.SmallModels at h = 1 the
// correlation of neighbours is many standard errors off, which is why the
// method is registered as approximate.
func TestUncorrected(t *testing.T) {
	cat, err := categorical.New([]categorical.Variable{
		{States: []float64{0, 1, 2, 3}, Probs: []float64{0.1, 0.2, 0.3, 0.4}},
		{States: []float64{0, 1}, Probs: []float64{0.8, 0.2}},
		{States: []float64{0, 1, 2}, Probs: []float64{0.5, 0, 0.5}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := transform.ForModel(transform.Normal{}, cat)
	s, err := NewUncorrected(sampler.NewProblem(cat, tr, 4000, sampler.Init{}, rng.NewKey(5)), UncorrectedSettings{StepSize: 0.4})
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if err := s.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	samplertest.CheckMarginals(t, "uncorrected, independent variables", cat, samples(s), 0.002)
	if f, _ := s.Stats().Value("moved_fraction"); !(f > 0.05 && f < 1) {
		t.Errorf("moved_fraction %v", f)
	}
	// The coupled grid: the same number of chains and steps at h = 1. Its
	// single-site marginals are hardly biased (every variable moves, as in
	// synchronous Gibbs sampling, whose sublattices of a bipartite graph
	// keep their marginals), but the correlation of neighbours is.
	grid := samplertest.SmallModels(t)["ising"]
	tr, _ = transform.ForModel(transform.Normal{}, grid)
	s, err = NewUncorrected(sampler.NewProblem(grid, tr, 4000, sampler.Init{}, rng.NewKey(5)), UncorrectedSettings{StepSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if err := s.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// E[z0·z1] exactly, by enumerating the 2⁹ states, and by the chains.
	d := grid.Dim()
	z := make([]int, d)
	var norm, want float64
	for k := range 1 << d {
		for i := range z {
			z[i] = k >> i & 1
		}
		p := math.Exp(grid.LogProb(z))
		norm += p
		want += p * grid.States(0)[z[0]] * grid.States(1)[z[1]]
	}
	want /= norm
	var got float64
	cur := s.Current()
	for c := range 4000 {
		got += grid.States(0)[cur[c*d]] * grid.States(1)[cur[c*d+1]] / 4000
	}
	se := math.Sqrt((1 - want*want) / 4000)
	t.Logf("uncorrected on the 3×3 Ising grid, h = 1: E[z0·z1] = %.3f, exact %.3f (%.1f SE)", got, want, (got-want)/se)
	if math.Abs(got-want) < 10*se {
		t.Errorf("uncorrected chains on the coupled grid: E[z0·z1] = %.3f within 10 SE of the exact %.3f; expected a visible bias", got, want)
	}
}

// newS starts n chains with the correction at Γ of the N(0, 1) initial
// draw of seed.
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
