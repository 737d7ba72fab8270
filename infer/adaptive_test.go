package infer

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/dmala"
	"github.com/dstein/dstein/sampler/pt"
)

// An adaptive run keeps, in the window it stops at, the same states as a
// fixed run with that window's warm-up and thinning (observing the chains
// does not change them); it stops at the second window (ConfirmWindows:
// both pass) on a target that Gibbs samples exactly (independent spins:
// every sweep is an independent draw), doubles on a two-mode grid until
// its iteration limit and says
// so, and gives the same draws on one core and on two.
func TestAdaptiveKeep(t *testing.T) {
	indep, err := ising.New(6, nil, []float64{0.3, -0.2, 0.5, 0, 0.1, -0.4})
	if err != nil {
		t.Fatal(err)
	}
	fields := make([]float64, 16)
	for i := range fields {
		fields[i] = 0.05
	}
	twoMode, err := ising.Grid(4, 4, false, 0.8, fields)
	if err != nil {
		t.Fatal(err)
	}
	gibbs, err := sampler.Single("gibbs", nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	const draws = 50
	for _, c := range []struct {
		name     string
		m        *ising.Ising
		keep     Keep
		stopped  string
		end      int
		maxIters int
	}{
		// 4 chains of 50 independent draws: bulk and tail ESS near 200
		// in each window.
		{"independent", indep, Keep{Draws: draws, Target: 100}, StopTarget, 4 * draws, 0},
		// Single-site Gibbs on the two-mode grid: 4 chains do not reach
		// 1000 effective draws within 800 iterations, so the run stops at
		// the last doubling within them, 800.
		{"two modes", twoMode, Keep{Draws: draws, Target: 1000, MaxIters: 1000}, StopIters, 800, 1000},
	} {
		var outs [3]*Output
		for k, procs := range []int{1, 2, 16} {
			old := runtime.GOMAXPROCS(procs)
			out, err := Run(context.Background(), c.m, Spec{Pipeline: gibbs, N: 4, Key: rng.NewKey(7), Keep: c.keep})
			runtime.GOMAXPROCS(old)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			outs[k] = out
		}
		out := outs[0]
		if !slices.Equal(out.Samples.Z, outs[1].Samples.Z) || !slices.Equal(out.Samples.Z, outs[2].Samples.Z) {
			t.Errorf("%s: the draws differ between GOMAXPROCS 1, 2 and 16", c.name)
		}
		lay := out.Layout
		if lay.Stopped != c.stopped || lay.Warmup != c.end/2 || lay.Thin != c.end/(2*draws) || out.Iters != c.end {
			t.Errorf("%s: stopped %q after %d iterations, warm-up %d, thinning %d; want %q after %d, warm-up %d, thinning %d",
				c.name, lay.Stopped, out.Iters, lay.Warmup, lay.Thin, c.stopped, c.end, c.end/2, c.end/(2*draws))
		}
		fixed, err := Run(context.Background(), c.m, Spec{Pipeline: gibbs, N: 4, Key: rng.NewKey(7), Keep: Keep{Warmup: lay.Warmup, Draws: draws, Thin: lay.Thin}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out.Samples.Z, fixed.Samples.Z) {
			t.Errorf("%s: the adaptive run's draws differ from a fixed run's with warm-up %d and thinning %d", c.name, lay.Warmup, lay.Thin)
		}
		if c.stopped == StopIters && !slices.ContainsFunc(out.Diagnostics.Warnings, func(w string) bool { return strings.HasPrefix(w, "the run reached its iteration limit") }) {
			t.Errorf("%s: no warning that the target was not reached: %q", c.name, out.Diagnostics.Warnings)
		}
		t.Logf("%s: %s after %d iterations; %q", c.name, lay.Stopped, out.Iters, out.Diagnostics.Note)
	}
}

// A rare state holds an adaptive run until the chains entered it
// RareVisits times over a window's iterations, not until the kept draws
// saw it that often: independent spins, one of probability σ(−5.8) ≈ 0.003
// of +1 (about 3 visits in 1000 draws whatever the run's length, about 12
// entries in 4 chains × 1000 iterations), stop by the target within a few
// doublings; one of σ(−12) ≈ 6e-6 (no entry expected in 4 × 4000) runs to
// the limit and says so.
func TestAdaptiveRareState(t *testing.T) {
	gibbs, err := sampler.Single("gibbs", nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field    float64
		stopped  string
		maxIters int
	}{
		{-2.9, StopTarget, 64000},
		{-6, StopIters, 4000},
	} {
		m, err := ising.New(3, nil, []float64{c.field, 0.2, -0.1})
		if err != nil {
			t.Fatal(err)
		}
		out, err := Run(context.Background(), m, Spec{Pipeline: gibbs, N: 4, Key: rng.NewKey(3), Keep: Keep{Draws: 250, Target: 100, MaxIters: c.maxIters}})
		if err != nil {
			t.Fatal(err)
		}
		q := out.Diagnostics.Quantity("z0")
		if q == nil || !q.Rare {
			t.Fatalf("field %g: z0 %+v; want a rare quantity", c.field, q)
		}
		if out.Layout.Stopped != c.stopped {
			t.Errorf("field %g: stopped %q after %d iterations; want %q", c.field, out.Layout.Stopped, out.Iters, c.stopped)
		}
		if c.stopped == StopIters && !slices.ContainsFunc(out.Diagnostics.Warnings, func(w string) bool {
			return strings.Contains(w, "0 quantities short of the ESS or over the R̂ limit, 1 rare states entered fewer times: z0)")
		}) {
			t.Errorf("field %g: the limit's warning does not say that z0's rare state held the run: %q", c.field, out.Diagnostics.Warnings)
		}
		if c.stopped == StopTarget && out.Iters > 8000 {
			t.Errorf("field %g: stopped after %d iterations; a state of probability 0.003 is entered 10 times in 4 chains within about 1000", c.field, out.Iters)
		}
		t.Logf("field %g: %s after %d iterations", c.field, out.Layout.Stopped, out.Iters)
	}
}

// A canceled adaptive run returns as canceled; bad targets and limits are
// refused.
func TestAdaptiveCancelAndValidate(t *testing.T) {
	g, err := ising.Grid(4, 4, false, 0.3, nil)
	if err != nil {
		t.Fatal(err)
	}
	gibbs, err := sampler.Single("gibbs", nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, err := Run(ctx, g, Spec{Pipeline: gibbs, N: 4, Key: rng.NewKey(1), Keep: Keep{Draws: 20, Target: 100}})
	if err != nil || out.Status != sampler.Canceled {
		t.Errorf("canceled run: %v, %v", out, err)
	}
	for _, bad := range []Keep{
		{Draws: 10, Target: -1},
		{Draws: 10, Target: 100, Warmup: 5},
		{Draws: 10, Target: 100, Thin: 3},
		{Draws: 10, Target: 100, MaxIters: 15},
		{Draws: 10, MaxIters: 100},
		{Draws: 10, Target: 100, MaxIters: -1},
		{Draws: 3, Target: 100},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, err := Run(context.Background(), g, Spec{Pipeline: gibbs, N: 4, Key: rng.NewKey(1), Keep: Keep{Draws: 10, Target: 100}, Replicates: 3}); err == nil {
		t.Error("an ESS target with replicates accepted")
	}
}

// A run whose last window began while the sampler was still tuning (the
// auto ladder's pilot and probation last 600 iterations or more here; the
// limit of 400 keeps iterations 200–400) says so in its limit warning.
func TestAdaptiveWindowDuringTuning(t *testing.T) {
	grid, err := ising.Grid(3, 3, false, 0.3, nil)
	if err != nil {
		t.Fatal(err)
	}
	auto, err := sampler.Single("pt", &pt.Settings{Auto: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), grid, Spec{Pipeline: auto, N: 4, Key: rng.NewKey(2), Keep: Keep{Draws: 50, Target: 1e6, MaxIters: 400}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(out.Diagnostics.Warnings, func(w string) bool {
		return strings.HasPrefix(w, "the run reached its iteration limit") && strings.Contains(w, "still tuning")
	}) {
		t.Errorf("no warning that the draws include tuning iterations: %q", out.Diagnostics.Warnings)
	}
}

// stuckChains is a sampler whose chains never move, each in its own
// state (R̂ fails), and that can escalate once (as parallel tempering's
// plain chains chosen by the sizing go back to their ladder).
type stuckChains struct {
	cur       []int
	escalated int
	tuneUntil int
	iter      int
}

func (s *stuckChains) Step(context.Context) error { s.iter++; return nil }
func (s *stuckChains) Current() []int             { return s.cur }
func (s *stuckChains) Stats() sampler.Stats       { return sampler.Stats{} }
func (s *stuckChains) Tuning() bool               { return s.iter < s.tuneUntil }
func (s *stuckChains) Escalate() bool {
	if s.escalated > 0 {
		return false
	}
	s.escalated++
	s.tuneUntil = s.iter + 30
	return true
}

// An ESS-target run whose window fails R̂ asks a sampler that can
// escalate to do so, once, and the windows that begin while the sampler
// then tunes do not end the run.
func TestAdaptiveEscalates(t *testing.T) {
	m, err := ising.New(2, nil, []float64{0.1, -0.1})
	if err != nil {
		t.Fatal(err)
	}
	s := &stuckChains{cur: []int{0, 0, 1, 1, 0, 1, 1, 0}}
	a := newAdaptive(context.Background(), m, sampler.Pipeline{}, Keep{Draws: 10, Target: 100, MaxIters: 160}, 4, Frequencies)
	for iter := 1; ; iter++ {
		s.Step(context.Background())
		if err := a.observe(iter, s); err != nil {
			if err != sampler.ErrEnough {
				t.Fatal(err)
			}
			break
		}
		if iter == 20 && (s.escalated != 1 || a.settled != -1) {
			t.Fatalf("after the first window: escalated %d times, settled %d; want 1, −1", s.escalated, a.settled)
		}
	}
	if s.escalated != 1 || a.stopped != StopIters {
		t.Errorf("escalated %d times, stopped %q; want once, %q", s.escalated, a.stopped, StopIters)
	}
}

// Draws kept while the sampler still adapts its proposal (DMALA's --adapt
// past --warmup) come from a changing kernel: the run says so, naming the
// last such iteration, and says nothing when the adaptation ends within
// the warm-up; the first iteration, which adapts with --adapt 1, counts
// too (the sampler's state is read before it).
func TestTuningPastWarmupWarns(t *testing.T) {
	g, err := ising.Grid(3, 3, false, 0.3, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		warmup, adapt int
		want          string
	}{
		{10, 10, ""},
		{10, 11, "up to iteration 11: "},
		{10, 25, "up to iteration 25: "},
		{10, 500, "to the end of the run: "},
		{0, 1, "up to iteration 1: "},
		{1, 1, ""},
	} {
		p, err := sampler.Single("dmala", &dmala.Settings{Adapt: c.adapt}, 1)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Run(context.Background(), g, Spec{Pipeline: p, N: 4, Key: rng.NewKey(2), Keep: Keep{Warmup: c.warmup, Draws: 50}})
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, w := range out.Diagnostics.Warnings {
			if strings.Contains(w, "still tuning") {
				got = w
			}
		}
		switch {
		case c.want == "" && got != "":
			t.Errorf("--adapt %d within the warm-up of %d: %q", c.adapt, c.warmup, got)
		case c.want != "" && !strings.Contains(got, fmt.Sprintf("after the warm-up of %d iterations, %s", c.warmup, c.want)):
			t.Errorf("--adapt %d past the warm-up of %d: warning %q; want one containing %q", c.adapt, c.warmup, got, c.want)
		}
	}
}

// A state the model rules out (a categorical probability of 0) is known
// to be absent, not rare: the adaptive run stops by its target as it does
// without it (the same model with that state at probability 0.01 takes
// the same iterations), where it used to run to its limit waiting for the
// state to be entered; its indicator is exactly 0. A state of small but
// positive probability stays rare.
func TestRuledOutStateIsNotRare(t *testing.T) {
	gibbs, err := sampler.Single("gibbs", nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p2   float64
		rare bool
	}{{0, false}, {0.001, true}} {
		vars := make([]categorical.Variable, 20)
		for i := range vars {
			vars[i] = categorical.Variable{States: []float64{0, 1, 2}, Probs: []float64{0.5, 0.5 - c.p2, c.p2}}
		}
		m, err := categorical.New(vars)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Run(context.Background(), m, Spec{Pipeline: gibbs, N: 4, Key: rng.NewKey(3), Keep: Keep{Draws: 250, Target: 100, MaxIters: 8000}})
		if err != nil {
			t.Fatal(err)
		}
		q := out.Diagnostics.Quantity("z0=2")
		if q == nil || q.Rare != c.rare {
			t.Fatalf("P(state 2) = %g: z0=2 %+v; want rare %v", c.p2, q, c.rare)
		}
		if c.p2 == 0 {
			if out.Layout.Stopped != StopTarget || q.Mean != 0 || q.CI90 != [2]float64{0, 0} {
				t.Errorf("a ruled-out state: stopped %q after %d iterations, z0=2 mean %g, interval %v; want the target met, 0 and [0, 0]", out.Layout.Stopped, out.Iters, q.Mean, q.CI90)
			}
		}
	}
	// A variable of one state: its indicator is 1 in every draw, and no
	// other state is to be entered.
	vars := []categorical.Variable{{States: []float64{7}, Probs: []float64{1}}, {States: []float64{0, 1, 2}, Probs: []float64{0.3, 0.3, 0.4}}}
	m, err := categorical.New(vars)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), m, Spec{Pipeline: gibbs, N: 4, Key: rng.NewKey(3), Keep: Keep{Draws: 250, Target: 100, MaxIters: 8000}})
	if err != nil {
		t.Fatal(err)
	}
	if q := out.Diagnostics.Quantity("z0=7"); q == nil || q.Rare || out.Layout.Stopped != StopTarget {
		t.Errorf("a variable of one state: z0=7 %+v, stopped %q after %d iterations; want not rare, the target met", q, out.Layout.Stopped, out.Iters)
	}
}
