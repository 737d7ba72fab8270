package gof

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// simulated runs test on s with its null distribution simulated instead of
// bootstrapped (Options.Bootstrap Simulation): o.B data sets of s.N exact
// i.i.d. draws from m (exact.For), each tested as s is, give the statistics
// S*_1, …, S*_B, and the p-value is (1 + #{S*_b ≥ S})/(B + 1). Under the
// null hypothesis S and the S*_b are exchangeable, so the level holds at
// any n up to the Monte Carlo error of B draws, whatever the tails of the
// statistic: where the bootstrap's large-sample approximation fails (rare
// states, near-deterministic tables, a sample that is nearly one state
// repeated, very small n), this does not. Ties count against the sample,
// so the test is conservative where statistics tie. It costs B + 1 tests
// without their bootstraps, and it needs a model that dstein can sample
// exactly.
//
// Data set b is drawn from o.Key.Split(b).ForIndex(rng.Test, 3) and
// tested with the sample's own key o.Key: GF-KSD's continuous points then
// use the same lifting noise for the sample and for every data set, so
// that the two are exchangeable given it and the level holds at every
// seed, not only on average over seeds. (With a fresh key per data set a
// sample that is nearly one state repeated is lifted to nearly the same
// points whatever it holds, and its statistic, fixed by the seed, sat
// above every simulated one at seed 1: true models were rejected in most
// data sets.)
func simulated(ctx context.Context, name string, m model.Model, s *sampler.Samples, o Options,
	test func(ctx context.Context, s *sampler.Samples, o Options) (*Result, error)) (*Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := checkSamples(m, s, 2); err != nil {
		return nil, err
	}
	if bad := sampler.Impossible(m, s); bad > 0 {
		return rejectImpossible(name, s.N, bad, o), nil
	}
	// The exact sampler first, so that a model without one is refused
	// before any work.
	truth, err := exact.ForContext(ctx, m)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, noExactError{fmt.Errorf("%s: a simulated null needs a model that dstein can sample exactly: %w", name, err)}
	}
	// Each statistic alone: one bootstrap draw, which the statistic does
	// not depend on, and no DKSD tail check, which judges a bootstrap.
	one := Options{Alpha: o.Alpha, B: 1, Bootstrap: Multinomial, Key: o.Key, statisticOnly: true}
	res, err := test(ctx, s, one)
	if err != nil {
		return nil, err
	}
	sim := sampler.NewSamples(s.N, s.D)
	stats := make([]float64, o.B)
	for b := range stats {
		k := o.Key.Split(b)
		if err := truth.SampleContext(ctx, sim.Z, k.ForIndex(rng.Test, 3).Rand()); err != nil {
			return nil, err
		}
		r, err := test(ctx, sim, one)
		if err != nil {
			return nil, fmt.Errorf("%s: simulated data set %d: %w", name, b+1, err)
		}
		stats[b] = r.Statistic
	}
	sd := stdDev(stats)
	// A simulated set of the sample's rows in another order can differ
	// from its statistic in the last bits (the sums run in row order):
	// such a tie counts against the sample, as an exact tie does.
	tieTo(stats, res.Statistic)
	res.PValue, res.CriticalValue, res.Reject = decide(res.Statistic, stats, o.Alpha)
	res.Bootstrap, res.BootstrapKind = o.B, Simulation.String()
	// The level holds by construction: DKSD's tail check, which judges
	// the bootstrap, no longer applies.
	res.LevelChecked, res.Warning, res.TailBias = true, "", 0
	res.bootSD = sd
	if name == "dksd" {
		res.BootstrapSD = sd // the spread of the simulated statistics
	}
	return res, nil
}

// noExactError is simulated's refusal of a model without an exact
// sampler, which Auto answers with the bootstrap.
type noExactError struct{ error }

func (e noExactError) Unwrap() error { return e.error }

// AutoWork is the most work Auto spends on a simulated null, counted as
// B·n·d·(n + d): the B statistics' n² kernel terms over d coordinates and
// their n·d neighbours' log-probabilities. On a 2-core machine a unit
// took 5 ns (an 8-spin Ising model) to 60 ns (DKSD on a 100-variable
// RBM, whose log-probabilities cost more), so AutoWork is 10 s to 2 min;
// the samples Auto simulates for are small or hold few distinct rows, and
// at B = 1000 it covers n = 100 up to d = 100 and n = 30 up to d = 240.
const AutoWork = 2e9

// AutoRoutineWork is the most work Auto spends on a simulated null for a
// sample the caveat does not flag, where the test's bootstrap itself is
// in doubt (RoutineSimulation): a tenth of AutoWork, 1–12 s on 2 cores,
// so that the default stays cheap on large samples. At B = 1000 it
// covers n = 100 up to d = 17 and n = 30 up to d = 68.
const AutoRoutineWork = 2e8

// RoutineSimulation reports whether Auto simulates the null of test
// wherever AutoRoutineWork allows, flagged sample or not: DKSD and GF-KSD,
// whose multinomial bootstraps rejected true models of many states more
// often than α on samples of n = 100 that the caveat does not flag (a
// Bayesian network given evidence with a state of probability 0.009 whose
// score ratio is 44: DKSD 0.29 ± 0.03 and GF-KSD 0.12 ± 0.02 over 200 data
// sets, simulated 0.050 and 0.035; a frustrated 4-state Potts model on 5
// sites: 0.075 and 0.080 ± 0.019, simulated 0.050 and 0.095 ± 0.021, and
// GF-KSD 0.041 ± 0.007 over 800 more, see EXPERIMENTS.md). BKSD's bounded rates held its level there (0.03).
func RoutineSimulation(test string) bool { return test == "dksd" || test == "gfksd" }

// AutoMemory is the most memory, in bytes, that Auto lets the exact
// sampler of a simulated null take (exact.Memory): a fixed cap, so that
// the choice is the same on every machine.
const AutoMemory = 1 << 30

// Choose resolves Auto for test (its name: "gfksd", "dksd", "bksd") on
// the sample s of m: Simulation, with the reason, when BootstrapCaveat
// doubts the bootstraps on s and the simulation's work is at most
// AutoWork, or when RoutineSimulation(test) and the work is at most
// AutoRoutineWork, and m's exact sampler needs at most AutoMemory;
// otherwise Multinomial, with the reason where the caveat stands. It
// depends on test, m, s and o alone. It does not check that
// m has an exact sampler (the tests fall back to the bootstrap when it
// has none). AutoWork counts the statistics, not the exact sampler's
// setup, which can take seconds more (an RBM with 25 hidden units
// enumerates 2^25 configurations: about 10 s). Kinds other than Auto are
// returned as they are.
func Choose(test string, m model.Model, s *sampler.Samples, o Options) (Kind, string) {
	if o.Bootstrap != Auto {
		return o.Bootstrap, ""
	}
	b := o.B
	if b <= 0 {
		b = DefaultB
	}
	why := BootstrapCaveat(s)
	if why == "" {
		if !RoutineSimulation(test) || simulationWork(s, b) > AutoRoutineWork || exact.Memory(m) > AutoMemory {
			return Multinomial, ""
		}
		return Simulation, fmt.Sprintf("%s's bootstrap can reject true models more often than α on small samples (EXPERIMENTS.md), and simulating its null from %d exact data sets costs little here (--bootstrap-kind multinomial for the paper's bootstrap)", test, b)
	}
	if over := tooCostly(m, s, b); over != "" {
		return Multinomial, why + over
	}
	return Simulation, fmt.Sprintf("%s, on which the bootstraps lose their level: the null is simulated from %d exact data sets (--bootstrap-kind multinomial for the paper's bootstrap)", why, b)
}

// simulationWork is the work of simulating a test's null on s from b data
// sets, in the units of AutoWork.
func simulationWork(s *sampler.Samples, b int) float64 {
	n, d := float64(s.N), float64(s.D)
	return float64(b) * n * d * (n + d)
}

// tooCostly returns ", but …" saying why auto does not simulate the null
// on s from b data sets (its work above AutoWork, or m's exact sampler
// above AutoMemory), or "" when it is affordable.
func tooCostly(m model.Model, s *sampler.Samples, b int) string {
	if work := simulationWork(s, b); work > AutoWork {
		return fmt.Sprintf(", but simulating the null from %d data sets would cost %.2g units of work, above the %.0g that auto spends (--bootstrap-kind simulation forces it)", b, work, AutoWork)
	}
	if mem := exact.Memory(m); mem > AutoMemory {
		return fmt.Sprintf(", but the exact sampler that would simulate the null needs about %.2g GB, above the %.0f GB that auto allows (--bootstrap-kind simulation forces it)", mem/1e9, float64(AutoMemory)/(1<<30))
	}
	return ""
}

// notBootstrapped runs test on s where o.Bootstrap is not a bootstrap of
// the statistic itself (Simulation, Auto), and reports whether it did; a
// Stein test calls it first, with itself as test.
func notBootstrapped(ctx context.Context, name string, m model.Model, s *sampler.Samples, o Options,
	test func(ctx context.Context, s *sampler.Samples, o Options) (*Result, error)) (*Result, bool, error) {
	switch o.Bootstrap {
	case Simulation:
		res, err := simulated(ctx, name, m, s, o, test)
		return res, true, err
	case Auto:
		res, err := auto(ctx, name, m, s, o, test)
		return res, true, err
	}
	return nil, false, nil
}

// auto runs test on s under Auto: the kind Choose picks, and the
// multinomial bootstrap where it picks a simulation that m cannot have;
// a multinomial DKSD that finds zeros of m on the samples' cycles is
// followed by the simulated null where that is affordable
// (jointZeroAuto). The result's BootstrapReason says which and why.
func auto(ctx context.Context, name string, m model.Model, s *sampler.Samples, o Options,
	test func(ctx context.Context, s *sampler.Samples, o Options) (*Result, error)) (*Result, error) {
	kind, why := Choose(name, m, s, o)
	o.Bootstrap = kind
	if kind == Simulation {
		res, err := simulated(ctx, name, m, s, o, test)
		var no noExactError
		if !errors.As(err, &no) {
			if res != nil && res.Impossible == 0 {
				res.BootstrapReason = why
			}
			return res, err
		}
		o.Bootstrap = Multinomial
		why = ""
		if c := BootstrapCaveat(s); c != "" {
			why = c + ", but dstein cannot sample this model exactly to simulate the null: the bootstrap's level is in doubt"
		}
	}
	res, err := test(ctx, s, o)
	if err == nil && res != nil && res.jointZeros > 0 && kind == Multinomial {
		// DKSD found zeros that only the simulated null accounts for.
		return jointZeroAuto(ctx, name, m, s, o, res, test)
	}
	if res != nil && res.Impossible == 0 {
		// Impossible samples reject outright, with no null at all.
		res.BootstrapReason = why
	}
	return res, err
}

// jointZeroAuto follows a multinomial DKSD result boot that found zeros of
// m on the samples' cycles (dksdJointZeros): under Auto the null is then
// simulated where its work is at most AutoWork and the exact sampler
// within AutoMemory (the caveat's rule), and the bootstrap's result is
// kept otherwise, with the reason.
func jointZeroAuto(ctx context.Context, name string, m model.Model, s *sampler.Samples, o Options, boot *Result,
	test func(ctx context.Context, s *sampler.Samples, o Options) (*Result, error)) (*Result, error) {
	b := o.B
	if b <= 0 {
		b = DefaultB
	}
	why := "the model is zero at states next to the samples that each variable alone allows, where DKSD's bootstrap loses its level"
	if over := tooCostly(m, s, b); over != "" {
		boot.BootstrapReason = why + over
		return boot, nil
	}
	o.Bootstrap = Simulation
	res, err := simulated(ctx, name, m, s, o, test)
	var no noExactError
	if errors.As(err, &no) {
		boot.BootstrapReason = why + ", but dstein cannot sample this model exactly to simulate the null"
		return boot, nil
	}
	if res != nil && res.Impossible == 0 {
		res.BootstrapReason = fmt.Sprintf("%s: the null is simulated from %d exact data sets (--bootstrap-kind multinomial for the paper's bootstrap)", why, b)
	}
	return res, err
}

// tieTo sets each of stats within tieTolerance of s to s exactly.
func tieTo(stats []float64, s float64) {
	for b, v := range stats {
		if math.Abs(v-s) <= tieTolerance*math.Max(math.Abs(v), math.Abs(s)) {
			stats[b] = s
		}
	}
}

// tieTolerance is the relative difference below which a simulated
// statistic counts as tied with the sample's: rounding in sums of n²
// kernel values in another order is some 1e-13 of the statistic, and a
// real difference 1e-9 of it is far below the spread of the null.
const tieTolerance = 1e-9

// Where the bootstraps are unreliable: below SmallN samples, or when a
// sample holds few distinct rows (at most RepeatRows, and at most half of
// them) of which some were seen fewer than RareRow times: a few states
// repeated, and rarer ones beside them; or one state repeated, where
// the bootstraps' statistics are all 0. On such samples the bootstraps
// rejected true models in 15% to 93% of data sets (n = 2 to 5 on a Potts
// cycle; a sample nearly one state repeated, on an Ising model with strong
// fields, at n = 3 and 100, 4 distinct rows in 100; a Bayesian network
// with near-deterministic tables, 14 in 100, and categorical variables
// with rare states, 7 in 100: EXPERIMENTS.md), where the simulated null
// held its level. They held it on samples outside the rule: the Potts
// cycle, 78 and 183 distinct rows at n = 100 and 300 (DKSD 0.090 at 300,
// 2.7 standard errors above α, the highest), and a categorical variable of
// five states at n = 500 (5 distinct rows, each seen about 50 times or
// more: DKSD 0.025). The rule is a heuristic drawn from those cells, not
// a guarantee either way: heavy tails can break the level with many
// distinct rows (DKSD's own check covers that case).
const (
	SmallN     = 30
	RepeatRows = 50
	RareRow    = 5
)

// BootstrapCaveat returns why the bootstraps' level is in doubt on s (too
// few samples, or a few states repeated beside rarer ones; see SmallN),
// or "" when it is not. Under Options.Bootstrap Simulation the doubt does
// not arise.
func BootstrapCaveat(s *sampler.Samples) string {
	if s.N < SmallN {
		return fmt.Sprintf("n = %d is small (below %d)", s.N, SmallN)
	}
	counts := rowCounts(s)
	if len(counts) == 1 {
		// The bootstrap's statistics are then all 0: any positive
		// statistic rejects, however likely the state.
		return fmt.Sprintf("the sample is one state repeated %d times", s.N)
	}
	if len(counts) > RepeatRows || 2*len(counts) > s.N {
		return ""
	}
	rare := 0
	for _, c := range counts {
		if c < RareRow {
			rare++
		}
	}
	if rare == 0 {
		return ""
	}
	return fmt.Sprintf("the sample repeats a few states (%d distinct rows in %d, %d of them seen fewer than %d times)", len(counts), s.N, rare, RareRow)
}

// rowCounts counts how often each distinct row of s occurs.
func rowCounts(s *sampler.Samples) map[string]int {
	seen := make(map[string]int, s.N)
	buf := make([]byte, 0, 4*s.D)
	for r := range s.N {
		buf = buf[:0]
		for _, v := range s.Row(r) {
			buf = append(buf, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
		}
		seen[string(buf)]++
	}
	return seen
}
