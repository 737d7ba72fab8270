package infer

import (
	"fmt"

	"github.com/dstein/dstein/sampler"
)

// budgeted keeps the draws of a run with an evaluation budget
// (Keep.Budget): the last stage runs until its chains have made about
// Budget model evaluations together, which is how samplers whose cost per
// iteration changes during the run (parallel tempering with an auto-sized
// ladder: 8 replicas and a shadow during the pilot, then 1 to 32) are
// compared at equal cost with the others. Every decision is taken at a
// fixed iteration from counts, so the same seed gives the same draws on
// any number of cores:
//
//   - at the first iteration t₀ after the sampler stopped tuning (its
//     Tuning(); samplers without it never tune), and budgetProbe
//     iterations later (t₁), the evaluations E₀ and E₁ give the cost per
//     iteration c = (E₁ − E₀)/budgetProbe (an even count, so that the
//     alternating swap phases of tempering are both in it);
//   - the run then ends at T = t₁ + ⌊(Budget − E₁)/c⌋, and its Draws per
//     chain are evenly thinned over its second half (or over t₁ … T when
//     tuning ended after T/2): thin = ⌊span/Draws⌋, warm-up T − Draws·thin;
//   - until then, and when that span holds fewer than Draws iterations,
//     states are kept in a reservoir: up to 2·Draws per chain, at every
//     stride-th iteration, the stride doubling (every other state dropped)
//     when it is full. The run then ends before the iteration that would
//     pass the budget (the cost of the last one predicting the next), with
//     the last Draws states of the reservoir (evenly spaced, ending at most
//     a stride before the end); Run warns when they include iterations
//     of tuning.
//
// The evaluations spent differ from Budget by less than one iteration's
// cost when c stays constant after tuning, as it does for every sampler of
// dstein.
type budgeted struct {
	keep  Keep
	n, d  int
	z     []int // the planned draws (Run's samples)
	t0    int   // the first iteration after tuning (0: not yet)
	e0    int64 // and the evaluations then
	prev  int64 // the evaluations after the previous iteration
	tuned int   // the last iteration of tuning (−1: none yet seen)

	planned       bool
	end           int // T
	warmup, thin  int
	res           []int // the reservoir: chain c's slot j at res[(c·2D + j)·d]
	stride, slots int   // its stride and the slots filled
	fromReservoir bool  // the draws are the reservoir's
}

// budgetProbe is the number of iterations over which the cost of an
// iteration is measured after tuning.
const budgetProbe = 2

func newBudgeted(keep Keep, n, d int, z []int) *budgeted {
	return &budgeted{keep: keep, n: n, d: d, z: z, tuned: -1, stride: 1, res: make([]int, n*2*keep.Draws*d)}
}

// observe follows the run after iteration iter of the last stage.
func (b *budgeted) observe(iter int, s sampler.Sampler) error {
	evals := s.Stats().Evaluations
	cost := evals - b.prev
	b.prev = evals
	if b.planned {
		if a := iter - b.warmup; a > 0 && a%b.thin == 0 {
			keepDraw(b.z, s.Current(), b.n, b.keep.Draws, a/b.thin-1, b.d)
		}
		if iter >= b.end {
			return sampler.ErrEnough
		}
		return nil
	}
	b.reserve(iter, s)
	tuning := false
	if t, ok := s.(interface{ Tuning() bool }); ok && t.Tuning() {
		tuning, b.tuned, b.t0 = true, iter, 0
	}
	if !tuning && b.t0 == 0 {
		b.t0, b.e0 = iter, evals
	} else if !tuning && iter == b.t0+budgetProbe && b.plan(iter, evals) {
		return nil
	}
	if evals+max(cost, 1) > b.keep.Budget {
		return b.fromReserve(iter)
	}
	return nil
}

// plan fixes the end of the run and its draws after iteration iter, with
// evals spent; it reports false, leaving the reservoir in charge, when the
// iterations the budget leaves cannot hold the draws.
func (b *budgeted) plan(iter int, evals int64) bool {
	cost := float64(evals-b.e0) / budgetProbe
	if cost <= 0 {
		return false
	}
	end := iter + max(0, int(float64(b.keep.Budget-evals)/cost))
	span := min(end-end/2, end-iter)
	if span < b.keep.Draws {
		return false
	}
	b.end, b.thin = end, span/b.keep.Draws
	b.warmup = end - b.keep.Draws*b.thin
	b.planned, b.res = true, nil
	return true
}

// reserve keeps the state after iteration iter in the reservoir when iter
// is a multiple of the stride, halving the reservoir first when it is full.
func (b *budgeted) reserve(iter int, s sampler.Sampler) {
	if iter%b.stride != 0 {
		return
	}
	per := 2 * b.keep.Draws
	if b.slots == per {
		// Keep the states at even multiples of the stride: slots 1, 3, ….
		for c := range b.n {
			row := b.res[c*per*b.d : (c+1)*per*b.d]
			for j := range per / 2 {
				copy(row[j*b.d:(j+1)*b.d], row[(2*j+1)*b.d:(2*j+2)*b.d])
			}
		}
		b.slots, b.stride = per/2, 2*b.stride
		if iter%b.stride != 0 {
			return
		}
	}
	keepDraw(b.res, s.Current(), b.n, per, b.slots, b.d)
	b.slots++
}

// fromReserve ends the run after iteration iter with the reservoir's last
// Draws states of each chain.
func (b *budgeted) fromReserve(iter int) error {
	if b.slots < b.keep.Draws {
		return fmt.Errorf("the evaluation budget (%d) ran out after %d iterations, fewer than the %d draws per chain it must keep; give it a larger budget or keep fewer draws", b.keep.Budget, iter, b.keep.Draws)
	}
	per, first := 2*b.keep.Draws, b.slots-b.keep.Draws
	for c := range b.n {
		copy(b.z[c*b.keep.Draws*b.d:(c+1)*b.keep.Draws*b.d], b.res[(c*per+first)*b.d:(c*per+b.slots)*b.d])
	}
	b.thin, b.warmup = b.stride, first*b.stride
	b.fromReservoir = true
	return sampler.ErrEnough
}

// tuningDraws reports whether the kept draws include iterations during
// which the sampler was tuning.
func (b *budgeted) tuningDraws() bool {
	return b.fromReservoir && b.tuned > b.warmup
}

// layout returns the layout of the draws.
func (b *budgeted) layout() Layout {
	return Layout{Kind: LayoutChains, Groups: b.n, Length: b.keep.Draws, Warmup: b.warmup, Thin: max(1, b.thin)}
}
