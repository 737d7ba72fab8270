package infer

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/pt"
)

// A run with an evaluation budget spends the budget to within one
// iteration's cost and keeps its draws over the second half of the run:
// for Gibbs (never tuning, n·d evaluations an iteration) the draws are
// those of a fixed run with the planned warm-up and thinning; for parallel
// tempering with an auto-sized ladder (whose iterations cost K + 1 sweeps
// in the pilot and K after) the warm-up covers the pilot and the tuning,
// and the draws are the same on one core and on two. A budget that runs
// out while the ladder is being sized, or leaves fewer iterations than
// draws, ends with the reservoir's draws and a warning that they include
// tuning iterations; fewer iterations than draws is an error.
func TestEvaluationBudget(t *testing.T) {
	grid, err := ising.Grid(4, 4, false, 0.5, []float64{0.1, -0.1, 0.2, 0, 0, 0.1, -0.2, 0.1, 0, 0, 0.1, 0, -0.1, 0.2, 0, 0.1})
	if err != nil {
		t.Fatal(err)
	}
	const n, draws = 4, 50
	d := int64(grid.Dim())
	gibbs, err := sampler.Single("gibbs", nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	budget := int64(1000) * n * d // 1000 sweeps per chain
	out, err := Run(context.Background(), grid, Spec{Pipeline: gibbs, N: n, Key: rng.NewKey(3), Keep: Keep{Draws: draws, Budget: budget}})
	if err != nil {
		t.Fatal(err)
	}
	lay := out.Layout
	if out.Evaluations > budget || out.Evaluations <= budget-n*d || out.Iters != 1000 {
		t.Errorf("gibbs: %d evaluations in %d iterations; want the budget %d (1000 iterations)", out.Evaluations, out.Iters, budget)
	}
	if lay.Thin != 500/draws || lay.Warmup != 1000-draws*lay.Thin {
		t.Errorf("gibbs: warm-up %d, thinning %d; want the second half, %d and %d", lay.Warmup, lay.Thin, 500, 500/draws)
	}
	fixed, err := Run(context.Background(), grid, Spec{Pipeline: gibbs, N: n, Key: rng.NewKey(3), Keep: Keep{Warmup: lay.Warmup, Draws: draws, Thin: lay.Thin}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Samples.Z, fixed.Samples.Z) {
		t.Error("gibbs: the budgeted run's draws differ from a fixed run's with its warm-up and thinning")
	}

	auto, err := sampler.Single("pt", &pt.Settings{Auto: true, Kernel: pt.Best}, 1)
	if err != nil {
		t.Fatal(err)
	}
	budget = 20000 * n * d
	var outs [3]*Output
	for k, procs := range []int{1, 2, 16} {
		old := runtime.GOMAXPROCS(procs)
		outs[k], err = Run(context.Background(), grid, Spec{Pipeline: auto, N: n, Key: rng.NewKey(5), Keep: Keep{Draws: draws, Budget: budget}})
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
	}
	out, lay = outs[0], outs[0].Layout
	if !slices.Equal(out.Samples.Z, outs[1].Samples.Z) || !slices.Equal(out.Samples.Z, outs[2].Samples.Z) {
		t.Error("pt auto: the draws differ between GOMAXPROCS 1, 2 and 16")
	}
	k, _ := out.Stages[0].Stats.Value("temperatures")
	perIter := int64(k)*n*d + 2*n*int64(k) // K sweeps and at most K swap evaluations per chain
	if out.Evaluations > budget || out.Evaluations <= budget-perIter {
		t.Errorf("pt auto (K = %v): %d evaluations; want within one iteration (%d) of the budget %d", k, out.Evaluations, perIter, budget)
	}
	if pilot := pt.DefaultAutoTune; lay.Warmup < pilot || lay.Warmup+draws*lay.Thin != out.Iters || lay.Thin < 1 {
		t.Errorf("pt auto: warm-up %d, thinning %d over %d iterations; want a warm-up past the pilot (%d) and the draws ending the run", lay.Warmup, lay.Thin, out.Iters, pilot)
	}
	t.Logf("pt auto: K = %v, %d iterations, warm-up %d, thinning %d, %d of %d evaluations", k, out.Iters, lay.Warmup, lay.Thin, out.Evaluations, budget)

	// 100 sweeps per chain: the pilot's 9 sweeps an iteration end the
	// budget after 11 iterations, before tuning is over and with fewer
	// iterations than draws.
	if _, err := Run(context.Background(), grid, Spec{Pipeline: auto, N: n, Key: rng.NewKey(5), Keep: Keep{Draws: draws, Budget: 100 * n * d}}); err == nil || !strings.Contains(err.Error(), "fewer than the 50 draws") {
		t.Errorf("a budget of 11 pilot iterations: error %v; want fewer iterations than draws", err)
	}
	// 1000 sweeps per chain: the pilot (200 iterations of 9) outlasts the
	// budget; the draws are the reservoir's, with a warning.
	out, err = Run(context.Background(), grid, Spec{Pipeline: auto, N: n, Key: rng.NewKey(5), Keep: Keep{Draws: draws, Budget: 1000 * n * d}})
	if err != nil {
		t.Fatal(err)
	}
	lay = out.Layout
	if out.Evaluations > 1000*n*d || lay.Warmup+draws*lay.Thin > out.Iters || out.Samples.N != n*draws ||
		!slices.ContainsFunc(out.Diagnostics.Warnings, func(w string) bool { return strings.Contains(w, "the draws include tuning iterations") }) {
		t.Errorf("a budget that ends in the pilot: %d evaluations, %d iterations, warm-up %d, thinning %d, %d samples; warnings %q",
			out.Evaluations, out.Iters, lay.Warmup, lay.Thin, out.Samples.N, out.Diagnostics.Warnings)
	}
	// The reservoir (halved once: stride 2) holds the states of a fixed
	// run with that warm-up and thinning.
	fixed, err = Run(context.Background(), grid, Spec{Pipeline: auto, N: n, Key: rng.NewKey(5), Keep: Keep{Warmup: lay.Warmup, Draws: draws, Thin: lay.Thin}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Samples.Z, fixed.Samples.Z) || lay.Thin != 2 {
		t.Errorf("the reservoir's draws (warm-up %d, thinning %d) differ from a fixed run's", lay.Warmup, lay.Thin)
	}
	// Gibbs with a budget of 60 sweeps: 30 iterations in the second half
	// cannot hold 50 draws, so the reservoir's last 50 states (stride 1)
	// are kept, without a warning (Gibbs never tunes).
	out, err = Run(context.Background(), grid, Spec{Pipeline: gibbs, N: n, Key: rng.NewKey(5), Keep: Keep{Draws: draws, Budget: 60 * n * d}})
	if err != nil {
		t.Fatal(err)
	}
	if lay := out.Layout; out.Iters != 60 || lay.Thin != 1 || lay.Warmup != 10 || len(out.Diagnostics.Warnings) > 0 && strings.Contains(strings.Join(out.Diagnostics.Warnings, " "), "tuning") {
		t.Errorf("gibbs, 60 sweeps: %d iterations, warm-up %d, thinning %d; want 60, 10, 1", out.Iters, lay.Warmup, lay.Thin)
	}
	if err := (Keep{Draws: draws, Budget: 10, Target: 100}).Validate(); err == nil || !strings.Contains(err.Error(), "evaluation budget") {
		t.Errorf("a budget with an ESS target: %v", err)
	}
}
