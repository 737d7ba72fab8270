package dhmc

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/transform"
)

func mustTransform(t testing.TB, m model.Model) *transform.Transform {
	t.Helper()
	tr, err := transform.ForModel(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// newDHMC starts n chains from the initial draw of seed (N(0, 1) unless
// init says otherwise).
func newDHMC(m model.Model, tr *transform.Transform, n int, set Settings, seed uint64, init ...sampler.Init) (*Sampler, error) {
	in := sampler.Init{}
	if len(init) > 0 {
		in = init[0]
	}
	return New(sampler.NewProblem(m, tr, n, in, rng.NewKey(seed)), set)
}

// newFrom starts n chains at the points x.
func newFrom(m model.Model, tr *transform.Transform, x []float64, n int, set Settings, seed uint64) (*Sampler, error) {
	p := &sampler.Problem{Model: m, Transform: tr, N: n, X: x, Key: rng.NewKey(seed)}
	if m != nil && tr != nil && len(x) == n*m.Dim() && n > 0 {
		p.Z = make([]int, len(x))
		d := m.Dim()
		for j := range n {
			tr.Gamma(p.Z[j*d:(j+1)*d], x[j*d:(j+1)*d])
		}
	}
	return New(p, set)
}

func samples(s *Sampler) *sampler.Samples {
	return &sampler.Samples{N: s.n, D: s.d, Z: append([]int(nil), s.Current()...)}
}

func run(t testing.TB, s *Sampler, iters int) {
	t.Helper()
	for range iters {
		if err := s.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

var paperCategorical = categorical.Variable{States: []float64{-1, -0.5, 0, 0.5, 1}, Probs: []float64{0.1, 0.2, 0.3, 0.1, 0.3}}

func smallIsing(t testing.TB) *ising.Ising {
	t.Helper()
	m, err := ising.Grid(3, 3, false, 0.4, []float64{0.2, -0.1, 0.3, 0, -0.2, 0.1, 0.25, -0.3, 0.05})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkFrequencies compares each observed frequency with its exact
// probability. The n chains run independently from independent starts, so
// their final states are i.i.d. draws of the chain's distribution after the
// last iteration; if that is the target, a frequency has standard error
// sqrt(p(1−p)/n) and lies within 4 of them except with probability 6e-5
// (normal approximation), which keeps the family-wise false alarm rate of
// a few dozen checks below 0.5%.
func checkFrequencies(t *testing.T, what string, got, want []float64, n int) {
	t.Helper()
	for k, p := range want {
		se := math.Sqrt(p * (1 - p) / float64(n))
		if math.Abs(got[k]-p) > 4*se {
			t.Errorf("%s, state %d: frequency %.4f, exact %.4f (4 standard errors = %.4f)", what, k, got[k], p, 4*se)
		}
	}
}

// jointFrequencies returns the frequency of every joint state, indexed in
// odometer order (last variable fastest), and the exact probabilities.
func jointFrequencies(t *testing.T, m model.Model, smp *sampler.Samples) (got, want []float64) {
	t.Helper()
	res, err := exact.Enumerate(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := m.Dim()
	index := func(z []int) int {
		k := 0
		for i := range d {
			k = k*len(m.States(i)) + z[i]
		}
		return k
	}
	N := model.StateCount(m)
	got, want = make([]float64, N), make([]float64, N)
	z := make([]int, d)
	for k := range N {
		rem := k
		for i := d - 1; i >= 0; i-- {
			K := len(m.States(i))
			z[i] = rem % K
			rem /= K
		}
		if lp := m.LogProb(z); !math.IsInf(lp, -1) {
			want[k] = math.Exp(lp - res.LogZ)
		}
	}
	for c := range smp.N {
		got[index(smp.Row(c))] += 1 / float64(smp.N)
	}
	return got, want
}

// TestConvergesToExactMarginals runs 2000 chains from N(−2, 1), far from
// the targets (mostly the all-first-state corner), and compares the final
// states with exact enumeration: every variable's marginal, and every joint
// state where the state space is small enough for the normal approximation
// (at least about 20 expected counts per state).
func TestConvergesToExactMarginals(t *testing.T) {
	const n, iters = 2000, 200
	cat, err := categorical.New([]categorical.Variable{paperCategorical})
	if err != nil {
		t.Fatal(err)
	}
	r6, err := rbm.Random(6, 3, 0.5, 1, 11)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		m     model.Model
		joint bool
	}{
		{"categorical-5", cat, true},
		{"ising-3x3", smallIsing(t), false},
		{"rbm-6x3", r6, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := mustTransform(t, tc.m)
			s, err := newDHMC(tc.m, tr, n, Settings{}, 1, sampler.Init{Mean: -2})
			if err != nil {
				t.Fatal(err)
			}
			run(t, s, iters)
			res, err := exact.Enumerate(tc.m, 0)
			if err != nil {
				t.Fatal(err)
			}
			smp := samples(s)
			marg := sampler.Marginals(tc.m, smp)
			for i := range marg {
				checkFrequencies(t, fmt.Sprintf("variable %d", i), marg[i], res.Marginals[i], n)
			}
			if tc.joint {
				got, want := jointFrequencies(t, tc.m, smp)
				checkFrequencies(t, "joint", got, want, n)
			}
		})
	}
}

// potential returns U(x) = −log p0(x) − log p*(Γ(x)) of chain c.
func potential(s *Sampler, c int) float64 {
	x := s.x[c*s.d : (c+1)*s.d]
	return -s.t.LogBase(x) - s.m.LogProb(s.t.Gamma(nil, x))
}

func kinetic(p []float64) float64 {
	var k float64
	for _, v := range p {
		k += math.Abs(v)
	}
	return k
}

// wrappedNormal is N(0, 1) under another type, so that the sampler uses the
// base's LogProb instead of the closed form.
type wrappedNormal struct{ transform.Normal }

// TestIntegratorConservesEnergy checks that one iteration's trajectory keeps
// H = U(x) + Σ|p_i| constant up to rounding, after every integration step,
// while it moves, crosses bins and reflects, and that the tracker stays at
// Γ(x), with the standard normal base in closed form and through its
// LogProb.
func TestIntegratorConservesEnergy(t *testing.T) {
	cat, err := categorical.New([]categorical.Variable{paperCategorical, paperCategorical, {States: []float64{0, 1, 2}, Probs: []float64{0.6, 0.1, 0.3}}})
	if err != nil {
		t.Fatal(err)
	}
	r40, err := rbm.Random(40, 10, 0.5, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	generic, err := transform.New(wrappedNormal{}, []int{2, 2, 2, 2, 2, 2, 2, 2, 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		m    model.Model
		tr   *transform.Transform
	}{
		{"ising-3x3", smallIsing(t), nil},
		{"ising-3x3-generic-base", smallIsing(t), generic},
		{"categorical", cat, nil},
		{"rbm-40x10", r40, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := tc.tr
			if tr == nil {
				tr = mustTransform(t, tc.m)
			}
			s, err := newDHMC(tc.m, tr, 20, Settings{StepSize: 0.3, Steps: 15}, 5)
			if err != nil {
				t.Fatal(err)
			}
			if s.normal != (tc.tr == nil) {
				t.Fatalf("closed-form base path is %v", s.normal)
			}
			worst, hmin := 0.0, math.Inf(1)
			for c := range s.chains {
				ch := &s.chains[c]
				x := s.x[c*s.d : (c+1)*s.d]
				eps := s.drawStepSize(ch.r)
				drawMomentum(ch.p, ch.r)
				h0 := potential(s, c) + kinetic(ch.p)
				hmin = min(hmin, h0)
				for l := range s.set.Steps {
					if !s.integrate(ch, x, eps) {
						t.Fatal(ch.err)
					}
					h := potential(s, c) + kinetic(ch.p)
					worst = max(worst, math.Abs(h-h0))
					// Each update adds a few roundings of numbers of the
					// size of H; 1e-12·(1+|H|) allows thousands.
					if math.Abs(h-h0) > 1e-12*(1+math.Abs(h0)) {
						t.Fatalf("chain %d, step %d: H = %.17g, started at %.17g", c, l, h, h0)
					}
					if !slices.Equal(ch.z, s.t.Gamma(nil, x)) || !slices.Equal(ch.tr.State(), ch.z) {
						t.Fatalf("chain %d, step %d: tracked state %v, tracker %v, Γ(x) = %v", c, l, ch.z, ch.tr.State(), s.t.Gamma(nil, x))
					}
				}
			}
			t.Logf("largest |ΔH| %.3g (H ≥ %.3g)", worst, hmin)
			st := s.Counts()
			if st.Moves == 0 || st.Crossings == 0 || st.Reflections == 0 {
				t.Fatalf("the trajectories did not exercise every branch: %+v", st)
			}
			if st.Updates != st.Moves+st.Reflections {
				t.Fatalf("updates %d ≠ moves %d + reflections %d", st.Updates, st.Moves, st.Reflections)
			}
		})
	}
}

// TestSameResultsWithGOMAXPROCS checks that positions, states and counts
// are bit-identical with one and two threads.
func TestSameResultsWithGOMAXPROCS(t *testing.T) {
	m, err := rbm.Random(12, 4, 0.5, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	tr := mustTransform(t, m)
	once := func(procs int) (*Sampler, []float64) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		s, err := newDHMC(m, tr, 37, Settings{}, 9)
		if err != nil {
			t.Fatal(err)
		}
		run(t, s, 25)
		return s, append([]float64(nil), s.Positions()...)
	}
	s1, x1 := once(1)
	for _, procs := range []int{2, 16} {
		s2, x2 := once(procs)
		for k := range x1 {
			if math.Float64bits(x1[k]) != math.Float64bits(x2[k]) {
				t.Fatalf("position %d differs: %v with GOMAXPROCS 1, %v with %d", k, x1[k], x2[k], procs)
			}
		}
		if !slices.Equal(samples(s1).Z, samples(s2).Z) || s1.Counts() != s2.Counts() {
			t.Fatalf("GOMAXPROCS %d: states or counts differ: %+v vs %+v", procs, s1.Counts(), s2.Counts())
		}
	}
}

// TestNewMatchesInitialParticles checks that New starts from the draw that
// GF-SVGD makes with rng.NewKey(seed).For(rng.Init).Rand(), and that the state
// reported is Γ of the particles.
func TestNewMatchesInitialParticles(t *testing.T) {
	m := smallIsing(t)
	tr := mustTransform(t, m)
	s, err := newDHMC(m, tr, 5, Settings{}, 42, sampler.Init{Mean: 0.5, Std: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := sampler.InitialParticles(nil, 5, 9, 0.5, 2, rng.NewKey(42).For(rng.Init).Rand())
	if !slices.Equal(s.Positions(), want) {
		t.Fatalf("initial particles differ from sampler.InitialParticles")
	}
	run(t, s, 3)
	smp := samples(s)
	for c := range 5 {
		if got, want := smp.Row(c), tr.Gamma(nil, s.Positions()[c*9:(c+1)*9]); !slices.Equal(got, want) {
			t.Fatalf("chain %d: Samples %v, Γ(x) %v", c, got, want)
		}
	}
	if s.Iter() != 3 {
		t.Fatalf("Iter = %d, want 3", s.Iter())
	}
	if got := s.Settings(); got.StepSize != DefaultStepSize || got.Steps != DefaultSteps || got.StepJitter != DefaultStepJitter {
		t.Fatalf("defaults not filled in: %+v", got)
	}
}

// counting wraps a model and counts DeltaLogProb calls; it hides every
// optional interface but Delta, so NewTracker uses the generic tracker.
type counting struct {
	model.Model
	calls atomic.Int64
}

func (c *counting) DeltaLogProb(z []int, i, s int) float64 {
	c.calls.Add(1)
	return c.Model.(model.Delta).DeltaLogProb(z, i, s)
}

func TestCounters(t *testing.T) {
	m := &counting{Model: smallIsing(t)}
	s, err := newDHMC(m, mustTransform(t, m), 10, Settings{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if s.CrossingRate() != 0 || s.ReflectionRate() != 0 || s.Counts().Evaluations != 0 {
		t.Fatal("counters are not zero before the first step")
	}
	run(t, s, 10)
	st := s.Counts()
	if got, want := s.Counts().Evaluations, m.calls.Load(); got != want || got == 0 {
		t.Fatalf("Evaluations = %d, DeltaLogProb was called %d times", got, want)
	}
	if want := int64(10 * 10 * DefaultSteps * 9); st.Updates != want {
		t.Fatalf("Updates = %d, want n·iters·L·d = %d", st.Updates, want)
	}
	if st.Crossings > st.Evaluations || st.Crossings > st.Moves {
		t.Fatalf("more crossings than evaluations or moves: %+v", st)
	}
	if r := s.CrossingRate(); r != float64(st.Crossings)/float64(st.Moves) || r <= 0 || r >= 1 {
		t.Fatalf("CrossingRate = %v with %+v", r, st)
	}
	if r := s.ReflectionRate(); r != float64(st.Reflections)/float64(st.Updates) || r <= 0 || r >= 1 {
		t.Fatalf("ReflectionRate = %v with %+v", r, st)
	}
}

// TestZeroProbabilityStates covers states of probability zero: without a
// bin (transform.ForModel) no chain can reach them; with a bin
// (transform.New) chains reflect off them; and chains that start inside one
// leave it (moves out of an impossible state are always taken). The model
// is the last variable's fourth state with probability 0.
func TestZeroProbabilityStates(t *testing.T) {
	const n = 2000
	probs := []float64{0.2, 0.5, 0.3, 0}
	m, err := categorical.New([]categorical.Variable{paperCategorical, {States: []float64{0, 1, 2, 3}, Probs: probs}})
	if err != nil {
		t.Fatal(err)
	}
	withBins, err := transform.New(nil, []int{5, 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tr   *transform.Transform
	}{
		{"no-bin", mustTransform(t, m)},
		{"with-bin", withBins},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := newDHMC(m, tc.tr, n, Settings{}, 4)
			if err != nil {
				t.Fatal(err)
			}
			startImp := s.Impossible()
			if tc.name == "with-bin" && startImp == 0 {
				t.Fatal("no chain starts in the zero-probability bin")
			}
			run(t, s, 150)
			if imp := s.Impossible(); imp != 0 {
				t.Fatalf("%d chains end in the zero-probability state (%d started there)", imp, startImp)
			}
			for _, v := range s.Positions() {
				if bad(v) {
					t.Fatalf("a position is %v", v)
				}
			}
			marg := sampler.Marginals(m, samples(s))
			checkFrequencies(t, "variable 1", marg[1], probs, n)
			if st := s.Counts(); tc.name == "with-bin" && st.Escapes == 0 {
				t.Fatalf("no escapes counted: %+v", st)
			}
		})
	}
}

// exclusion is three spins with fields whose all-up state is impossible (a
// joint zero), seen only through LogProb, so the generic tracker computes
// the changes.
type exclusion struct{}

func (exclusion) Dim() int             { return 3 }
func (exclusion) States(int) []float64 { return model.Spins }
func (exclusion) LogProb(z []int) float64 {
	if z[0] == 1 && z[1] == 1 && z[2] == 1 {
		return math.Inf(-1)
	}
	return 0.3*model.Spin(z[0]) + 0.5*model.Spin(z[1]) - 0.2*model.Spin(z[2])
}

// TestImpossibleStart starts every chain inside the impossible all-up state
// of a joint zero: the chains leave it and never come back, the momentum
// stays finite, and the chains converge to the exact distribution.
func TestImpossibleStart(t *testing.T) {
	const n = 2000
	m := exclusion{}
	tr := mustTransform(t, m)
	x := make([]float64, 3*n)
	for k := range x {
		x[k] = 0.3 + float64(k%7)*0.1 // all positive: z = (1, 1, 1)
	}
	s, err := newFrom(m, tr, x, n, Settings{}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if imp := s.Impossible(); imp != n {
		t.Fatalf("%d chains start in the impossible state, want %d", imp, n)
	}
	run(t, s, 1)
	left := n - s.Impossible()
	run(t, s, 150)
	if imp := s.Impossible(); imp != 0 {
		t.Fatalf("%d chains are still in the impossible state", imp)
	}
	if left == 0 || s.Counts().Escapes == 0 {
		t.Fatalf("no chain left in the first iteration (%+v)", s.Counts())
	}
	for c := range s.chains {
		for _, p := range s.chains[c].p {
			if bad(p) {
				t.Fatalf("chain %d has momentum %v", c, p)
			}
		}
	}
	got, want := jointFrequencies(t, m, samples(s))
	checkFrequencies(t, "joint", got, want, n)
}

// nanModel returns NaN for the all-up state.
type nanModel struct{ exclusion }

func (nanModel) LogProb(z []int) float64 {
	if z[0] == 1 && z[1] == 1 && z[2] == 1 {
		return math.NaN()
	}
	return 0
}

func TestNaNIsAnError(t *testing.T) {
	m := nanModel{}
	s, err := newDHMC(m, mustTransform(t, m), 20, Settings{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var first error
	for range 50 {
		if first = s.Step(context.Background()); first != nil {
			break
		}
	}
	if first == nil || !strings.Contains(first.Error(), "NaN") {
		t.Fatalf("Step returned %v, want an error about NaN", first)
	}
	if err := s.Step(context.Background()); err != first {
		t.Fatalf("the next Step returned %v, want the same error", err)
	}
}

func TestNoJitter(t *testing.T) {
	m := smallIsing(t)
	s, err := newDHMC(m, mustTransform(t, m), 4, Settings{StepSize: 0.25, StepJitter: -1, Steps: 3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	x0 := append([]float64(nil), s.Positions()...)
	run(t, s, 5)
	// Without jitter every coordinate moves on x0 + 0.25ℤ.
	for k, v := range s.Positions() {
		q := (v - x0[k]) / 0.25
		if math.Abs(q-math.Round(q)) > 1e-9 {
			t.Fatalf("coordinate %d moved by %v, not a multiple of ε", k, v-x0[k])
		}
	}
}

func TestBadInput(t *testing.T) {
	m := smallIsing(t)
	tr := mustTransform(t, m)
	other, err := transform.New(nil, []int{2, 2})
	if err != nil {
		t.Fatal(err)
	}
	threeStates, err := transform.New(nil, []int{2, 2, 2, 2, 3, 2, 2, 2, 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		fn   func() error
		want string
	}{
		{"no chains", func() error { _, err := newDHMC(m, tr, 0, Settings{}, 1); return err }, "at least one particle or chain"},
		{"nil model", func() error { _, err := newDHMC(nil, tr, 1, Settings{}, 1); return err }, "no model"},
		{"nil transform", func() error { _, err := newDHMC(m, nil, 1, Settings{}, 1); return err }, "no transform"},
		{"dimension", func() error { _, err := newDHMC(m, other, 1, Settings{}, 1); return err }, "9 variables but the transform has 2"},
		{"states", func() error { _, err := newDHMC(m, threeStates, 1, Settings{}, 1); return err }, "variable 4 has 2 states"},
		{"step size", func() error { _, err := newDHMC(m, tr, 1, Settings{StepSize: math.NaN()}, 1); return err }, "step size"},
		{"negative step size", func() error { _, err := newDHMC(m, tr, 1, Settings{StepSize: -1}, 1); return err }, "step size"},
		{"steps", func() error { _, err := newDHMC(m, tr, 1, Settings{Steps: -2}, 1); return err }, "steps"},
		{"jitter", func() error { _, err := newDHMC(m, tr, 1, Settings{StepJitter: 1}, 1); return err }, "jitter"},
		{"x length", func() error { _, err := newFrom(m, tr, make([]float64, 10), 2, Settings{}, 1); return err }, "10 starting points and 0 starting states"},
		{"x NaN", func() error {
			x := make([]float64, 18)
			x[11] = math.NaN()
			_, err := newFrom(m, tr, x, 2, Settings{}, 1)
			return err
		}, "chain 1, coordinate 2"},
		{"NewFrom chains", func() error { _, err := newFrom(m, tr, nil, 0, Settings{}, 1); return err }, "at least one particle or chain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.fn()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "dhmc: ") {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// BenchmarkStep times one iteration of 100 chains with the default
// settings on the paper's two high-dimensional targets.
func BenchmarkStep(b *testing.B) {
	grid, err := ising.Grid(10, 10, false, 0.1, nil)
	if err != nil {
		b.Fatal(err)
	}
	r, err := rbm.Random(100, 25, 0.2236, 1, 7)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		m    model.Model
	}{
		{"ising-10x10/n=100", grid},
		{"rbm-d=100-M=25/n=100", r},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, err := newDHMC(tc.m, mustTransform(b, tc.m), 100, Settings{}, 1)
			if err != nil {
				b.Fatal(err)
			}
			run(b, s, 3)
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Step(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
