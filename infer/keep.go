package infer

import (
	"fmt"

	"github.com/dstein/dstein/diag"
	"math"
	"time"
)

// Keep says which states of MCMC chains a run keeps: after Warmup
// iterations, every Thin-th state, Draws per chain (Stan's warm-up, draws
// and thinning). The zero value keeps only the final states.
type Keep struct {
	// Warmup is the number of iterations discarded first.
	Warmup int `json:"warmup"`
	// Draws is the number of states kept per chain.
	Draws int `json:"draws"`
	// Thin keeps every Thin-th state after the warm-up. Default (0) is 1.
	Thin int `json:"thin"`
	// Target, when > 0, makes the run adaptive: the chains run until
	// every quantity's bulk- and tail-ESS reach Target and no R̂ exceeds
	// its limit, checked at 2·Draws iterations and at each doubling; the
	// Draws of each chain are those of the second half of the run, evenly
	// thinned (Warmup and Thin must be 0: the run sets them). MaxIters
	// (0: DefaultMaxIters windows) and MaxTime bound it (see adaptive).
	Target float64 `json:"ess_target"`
	// MaxIters is the most iterations per chain an adaptive run makes:
	// it stops at the last doubling within it.
	MaxIters int `json:"-"`
	// MaxTime, when > 0, ends an adaptive run at the first iteration past
	// it once a window of draws is complete (the draws of the last
	// complete window are kept; the result then depends on the machine's
	// speed).
	MaxTime time.Duration `json:"-"`
	// Budget, when > 0, ends the run at a number of model evaluations
	// (all chains together) instead of an iteration count: the last
	// stage runs until its sampler has stopped tuning, measures the cost
	// of an iteration, and ends when the budget is spent, its Draws per
	// chain evenly thinned over the second half (see budgeted). Warmup,
	// Thin and Target must be 0. It is how the benchmark suite runs
	// samplers whose cost per iteration is chosen during the run at the
	// same cost as the others.
	Budget int64 `json:"-"`
	// Stopped says why an adaptive run ended (in the output's layout):
	// StopTarget, StopIters or StopTime.
	Stopped string `json:"stopped"`
}

// Why an adaptive run stopped.
const (
	StopTarget = "ess"       // every quantity reached the target
	StopIters  = "max-iters" // the next doubling would pass MaxIters
	StopTime   = "max-time"  // MaxTime passed
)

// DefaultWindows is the number of doublings an adaptive run may make when
// MaxIters is 0: up to 2·Draws·2^DefaultWindows iterations (8000 for the
// default's 250 draws per chain, about the tempering preset's fixed run of
// 7250), and at least DefaultMaxIters.
const DefaultWindows = 4

// DefaultMaxIters is the least iteration limit of an adaptive run when
// MaxIters is 0: with few draws per chain (the default's 50 at n = 200),
// 2·Draws·2^DefaultWindows iterations would leave little beyond a
// tempering pilot of 200–800 iterations.
const DefaultMaxIters = 8000

func (k Keep) thin() int { return max(1, k.Thin) }

// maxEnd is the last window end of an adaptive run: the largest
// 2·Draws·2^j within MaxIters.
func (k Keep) maxEnd() int {
	end := 2 * k.Draws
	limit := k.iterLimit()
	for 2*end <= limit {
		end *= 2
	}
	return end
}

// iterLimit is the iteration limit per chain of an adaptive run: MaxIters,
// or when it is 0 the default (DefaultWindows, DefaultMaxIters). The run
// ends at the last doubling of 2·Draws within it (maxEnd).
func (k Keep) iterLimit() int {
	if k.MaxIters > 0 {
		return k.MaxIters
	}
	return max((2*k.Draws)<<DefaultWindows, DefaultMaxIters)
}

// Iters returns the iterations a run that keeps these draws makes:
// Warmup + Draws·Thin, or for an adaptive run the most it may make.
func (k Keep) Iters() int {
	if k.Target > 0 {
		return k.maxEnd()
	}
	if k.Budget > 0 {
		// A bound: every iteration costs at least one evaluation.
		return int(min(k.Budget, 1<<40))
	}
	return k.Warmup + k.Draws*k.thin()
}

// Validate reports counts that cannot be used.
func (k Keep) Validate() error {
	switch {
	case k.Draws < 1:
		return fmt.Errorf("the number of draws per chain must be at least 1, got %d", k.Draws)
	case k.Warmup < 0:
		return fmt.Errorf("the warm-up must be at least 0 iterations, got %d", k.Warmup)
	case k.Thin < 0:
		return fmt.Errorf("the thinning must be at least 1, got %d", k.Thin)
	case k.Draws > (1<<31)/k.thin()-k.Warmup/k.thin():
		return fmt.Errorf("%d draws thinned by %d after %d warm-up iterations are more iterations than a run can count", k.Draws, k.thin(), k.Warmup)
	case math.IsNaN(k.Target) || k.Target < 0 || math.IsInf(k.Target, 0):
		return fmt.Errorf("the ESS target must be a number of at least 0, got %v", k.Target)
	case k.MaxIters < 0 || k.MaxTime < 0:
		return fmt.Errorf("the iteration and time limits must be at least 0, got %d and %v", k.MaxIters, k.MaxTime)
	case k.Target == 0 && (k.MaxIters > 0 || k.MaxTime > 0):
		return fmt.Errorf("the iteration and time limits bound a run with an ESS target; this run keeps %d draws after %d warm-up iterations", k.Draws, k.Warmup)
	case k.Target > 0 && (k.Warmup > 0 || k.Thin > 1):
		return fmt.Errorf("a run with an ESS target chooses its own warm-up and thinning (the second half of the run, thinned to %d draws per chain); got warm-up %d and thinning %d", k.Draws, k.Warmup, k.Thin)
	case k.Target > 0 && k.MaxIters > 0 && k.MaxIters < 2*k.Draws:
		return fmt.Errorf("at most %d iterations per chain cannot hold a warm-up and %d draws (at least %d)", k.MaxIters, k.Draws, 2*k.Draws)
	case k.Target > 0 && k.Draws < diag.MinDraws:
		return fmt.Errorf("an ESS target needs at least %d draws per chain to measure it, got %d", diag.MinDraws, k.Draws)
	case k.Budget < 0:
		return fmt.Errorf("the evaluation budget must be at least 0, got %d", k.Budget)
	case k.Budget > 0 && (k.Target > 0 || k.Warmup > 0 || k.Thin > 1 || k.MaxIters > 0 || k.MaxTime > 0):
		return fmt.Errorf("a run with an evaluation budget chooses its own length, warm-up and thinning; it takes no ESS target, warm-up, thinning or limits")
	case k.Target > 0 && k.Draws > 1<<28:
		return fmt.Errorf("%d draws per chain are more than an adaptive run can count", k.Draws)
	}
	return nil
}

// index reports whether the state after iteration iter (1-based) is kept,
// and as which draw (0-based).
func (k Keep) index(iter int) (int, bool) {
	a := iter - k.Warmup
	if a <= 0 || a%k.thin() != 0 {
		return 0, false
	}
	t := a/k.thin() - 1
	return t, t < k.Draws
}

// keepDraw copies the n chains' current states (n×d) into draw t of each
// chain in dst, laid out chain by chain: row c·draws + t.
func keepDraw(dst, cur []int, n, draws, t, d int) {
	for c := range n {
		copy(dst[(c*draws+t)*d:(c*draws+t+1)*d], cur[c*d:(c+1)*d])
	}
}

// LayoutKind names how a run's samples are grouped.
type LayoutKind string

// The layouts.
const (
	// LayoutChains: draws of MCMC chains, chain by chain.
	LayoutChains LayoutKind = "chains"
	// LayoutReplicates: the particles or final states of independent
	// replicates, replicate by replicate.
	LayoutReplicates LayoutKind = "replicates"
	// LayoutSingle: the n particles or chains' final states of one run.
	LayoutSingle LayoutKind = "single"
)

// Layout says how the rows of a run's samples are grouped: Groups groups
// (chains or replicates) of Length consecutive rows each.
type Layout struct {
	Kind           LayoutKind
	Groups, Length int
	// Warmup and Thin are those of kept draws (LayoutChains).
	Warmup, Thin int
	// Target and Stopped are an adaptive run's ESS target and why it
	// stopped (Keep.Target, Keep.Stopped).
	Target  float64
	Stopped string
}
