package infer

import (
	"context"
	"math"
	"time"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
)

// adaptive keeps the draws of a run with an ESS target (Keep.Target). The
// run is cut into windows: window j ends at iteration T_j = 2·D·2^j (D
// draws per chain) and holds the D states at T_j/2 + t·T_j/(2D), t = 1 …
// D, of each chain: the second half of the run so far, evenly thinned. At
// each window's end its draws are diagnosed as a run's would be; the run
// stops when, in ConfirmWindows consecutive windows (each the half of the
// run after the one before, so they share no iteration), every quantity
// reaches the target (quantities that are exact
// in every draw are left out) and no R̂ exceeds its limit, and the chains
// entered every rare state (one seen fewer than RareVisits times in the
// window's draws) at least RareVisits times over the window's iterations,
// every iteration counted, not only the kept ones (a rare indicator's ESS
// only counts how often the chains met the state, and a run that stops
// before the chains met it several times has not shown where its mass
// lies; the kept draws alone could never show a state of probability
// below RareVisits/draws that often), when the next window would end past
// Keep.MaxIters (a last window that passes alone then counts as reaching
// the target), or, with
// Keep.MaxTime, at the first iteration past it once a window is complete.
// One passing window is not enough: its ESS is an estimate, and stopping
// at the first window whose estimate passes keeps the runs whose chains
// happened to look well mixed. On a two-mode 4×5 Ising grid, a run that
// stopped at its first passing window gave 90% intervals that missed in
// 15.8% of 150 unwarned runs with rms z 1.34 (runs stopped at the first
// check: rms z 4.7); asking for two gave 14.5% and 1.08 (11.4% ± 1.0%
// and 1.04 over 1000 seeds).
// A window that began while the sampler was still tuning (parallel
// tempering's ladder, its sizing) does not stop the run unless the limit
// is reached. Checks happen at
// fixed iterations, so the same seed gives the same draws whatever the
// number of cores, unless MaxTime ends the run.
type adaptive struct {
	keep  Keep
	n, d  int
	m     model.Model
	pl    sampler.Pipeline // the run's, which says whether its estimates are Rao–Blackwellised
	ctx   context.Context
	start time.Time
	est   Estimates

	end, thin int   // the current window's end and thinning
	settled   int   // the iteration since which the sampler has not been tuning (−1: it is)
	buf       []int // its draws, chain by chain
	done      []int // the last complete window's draws (nil before the first)
	doneEnd   int   // and its end
	doneTuned bool  // and whether the sampler was tuning after its start
	stopped   string
	// What the last diagnosed window lacked: quantities short of the
	// target ESS or over the R̂ limit, and rare states the chains entered
	// fewer than RareVisits times (for the limit's warning).
	short     int
	unmetRare []string
	// passes counts the consecutive windows, after the sampler settled,
	// that reached the target.
	passes int

	// Entries into each state over the current window's iterations (the
	// second half of the run so far), summed over chains: entries[off[i]+s]
	// counts the iterations after which a chain was in state s of
	// variable i and had not been after the one before. prev holds the
	// chains' states after the previous iteration (nil before the first);
	// doneEntries the last complete window's counts.
	off                  []int
	entries, doneEntries []int
	prev                 []int
}

// ConfirmWindows is the number of consecutive windows that must reach an
// ESS target before the run stops (see adaptive).
const ConfirmWindows = 2

func newAdaptive(ctx context.Context, m model.Model, pl sampler.Pipeline, keep Keep, n int, est Estimates) *adaptive {
	d := m.Dim()
	off := make([]int, d+1)
	for i := range d {
		off[i+1] = off[i] + len(m.States(i))
	}
	return &adaptive{keep: keep, n: n, d: d, m: m, pl: pl, ctx: ctx, start: time.Now(), est: est,
		end: 2 * keep.Draws, thin: 1, buf: make([]int, n*keep.Draws*d), settled: 0,
		off: off, entries: make([]int, off[d]), doneEntries: make([]int, off[d])}
}

// count adds the chains' entries into states after iteration iter
// (counted from the second half of the first window on).
func (a *adaptive) count(iter int, cur []int) {
	if a.prev == nil {
		a.prev = make([]int, len(cur))
		copy(a.prev, cur)
		return
	}
	if iter > a.end/2 {
		for c := range a.n {
			row, was := cur[c*a.d:(c+1)*a.d], a.prev[c*a.d:(c+1)*a.d]
			for i, z := range row {
				if z != was[i] {
					a.entries[a.off[i]+z]++
				}
			}
		}
	}
	copy(a.prev, cur)
}

// observe keeps the chains' states after iteration iter and decides, at
// a window's end, whether the run has what it needs (sampler.ErrEnough).
func (a *adaptive) observe(iter int, s sampler.Sampler) error {
	if t, ok := s.(interface{ Tuning() bool }); ok && t.Tuning() {
		a.settled = -1
	} else if a.settled < 0 {
		a.settled = iter
	}
	cur := s.Current()
	a.count(iter, cur)
	if off := iter - a.end/2; off > 0 && off%a.thin == 0 {
		keepDraw(a.buf, cur, a.n, a.keep.Draws, off/a.thin-1, a.d)
	}
	if iter == a.end {
		if a.done == nil {
			a.done = make([]int, len(a.buf))
		}
		a.buf, a.done = a.done, a.buf
		a.entries, a.doneEntries = a.doneEntries, a.entries
		clear(a.entries)
		a.doneEnd = a.end
		last := a.end >= a.keep.maxEnd()
		// A window that began while the sampler was still changing
		// (parallel tempering's ladder) does not end the run.
		steady := a.settled >= 0 && a.settled <= a.end/2
		a.doneTuned = !steady
		if steady || last {
			ok, mixed, err := a.enough()
			if err != nil {
				if a.ctx.Err() != nil {
					return nil // canceled: the run sees its context next
				}
				return err
			}
			if ok && steady {
				a.passes++
			} else {
				a.passes = 0
			}
			if ok && (a.passes >= ConfirmWindows || last) {
				a.stopped = StopTarget
				return sampler.ErrEnough
			}
			// Chains whose R̂ fails after the sampler settled: one that
			// chose plain chains over a ladder goes back to it (the
			// windows that begin while it tunes do not end the run).
			if e, can := s.(interface{ Escalate() bool }); can && !mixed && !last && e.Escalate() {
				a.settled = -1
			}
		}
		if !steady && !last {
			// A window of tuning breaks the run of passing windows.
			a.passes = 0
		}
		if last {
			a.stopped = StopIters
			return sampler.ErrEnough
		}
		a.end *= 2
		a.thin *= 2
	}
	if a.keep.MaxTime > 0 && a.done != nil && time.Since(a.start) > a.keep.MaxTime {
		a.stopped = StopTime
		return sampler.ErrEnough
	}
	return nil
}

// layout returns the layout of the last complete window.
func (a *adaptive) layout() Layout {
	thin := a.doneEnd / (2 * a.keep.Draws)
	return Layout{Kind: LayoutChains, Groups: a.n, Length: a.keep.Draws, Warmup: a.doneEnd / 2, Thin: thin, Target: a.keep.Target, Stopped: a.stopped}
}

// enough diagnoses the last complete window with the run's estimators:
// whether it reached the target, and whether every R̂ was within its
// limit.
func (a *adaptive) enough() (ok, mixed bool, err error) {
	rows := a.n * a.keep.Draws
	out := &Output{Pipeline: a.pl, N: a.n, Dim: a.d, Samples: &sampler.Samples{N: rows, D: a.d, Z: a.done}, Layout: a.layout()}
	out.Marginals = sampler.Marginals(a.m, out.Samples)
	if a.est == RaoBlackwell && out.raoBlackwellApplies(a.m) {
		if out.cond, err = conditionals(a.ctx, a.m, out.Samples); err != nil {
			return false, false, err
		}
		out.Marginals = out.cond.marginals(a.m)
	}
	out.Means = sampler.Means(a.m, out.Marginals)
	dg, err := Diagnose(a.ctx, a.m, out)
	if err != nil {
		return false, false, err
	}
	met := a.met()
	a.short, a.unmetRare = shortfall(dg, a.keep.Target, met)
	return reached(dg, a.keep.Target, met), withinRhat(dg), nil
}

// shortfall counts the quantities that can reach the target ESS and do
// not, or whose R̂ is over its limit, and names the rare quantities whose
// state was not met often enough: what keeps reached false.
func shortfall(dg *Diagnostics, target float64, met func(string) bool) (short int, rare []string) {
	limit := rhatChanceLimit(dg.Groups, dg.Length, len(dg.Quantities))
	for _, q := range dg.Quantities {
		if q.Rare && !met(q.Name) {
			rare = append(rare, q.Name)
		}
		if q.SD == 0 && q.MCSE == 0 {
			continue
		}
		if float64(q.Rhat) > limit || math.IsNaN(float64(q.Rhat)) || min(q.BulkESS, q.TailESS) < target {
			short++
		}
	}
	return short, rare
}

// withinRhat reports whether no quantity's R̂ exceeds the limit of its
// groups' chance level (quantities exact in every draw left out).
func withinRhat(dg *Diagnostics) bool {
	limit := rhatChanceLimit(dg.Groups, dg.Length, len(dg.Quantities))
	for _, q := range dg.Quantities {
		if q.SD == 0 && q.MCSE == 0 {
			continue
		}
		if float64(q.Rhat) > limit || math.IsNaN(float64(q.Rhat)) {
			return false
		}
	}
	return true
}

// met returns, for the last complete window, whether the chains entered
// the less frequent side of a variable's quantity (named as in
// Diagnostics) at least RareVisits times: the entries into state 1 of a
// two-state variable (within one per chain of those into state 0), or
// into an indicator's state (within one per chain of its exits).
func (a *adaptive) met() func(name string) bool {
	qs := map[string]quantityFunc{}
	for _, q := range quantities(a.m) {
		if q.v >= 0 {
			qs[q.name] = q
		}
	}
	return func(name string) bool {
		q, ok := qs[name]
		if !ok {
			return true
		}
		s := q.state
		if s < 0 {
			s = 1
		}
		return a.doneEntries[a.off[q.v]+s] >= RareVisits
	}
}

// reached reports whether every rare quantity's state was met often
// enough (met, by name) and every quantity that can reach the target ESS
// (all but those exact in every draw) has both ESS at least target and R̂
// within the limit of its groups' chance level (the run's own warning's
// limit). A rare state keeps the run going: on an RBM with
// near-deterministic marginals (16 visible, 8 hidden units, W ~
// N(0, 1.5²)), parallel tempering with block sweeps reached the target on
// the other quantities within 2000–4000 iterations, and its intervals of
// the rare states' variables covered 0.70 of the time over 40 seeds; run
// on to the limit (8000 iterations), 0.85. Counting the rare states'
// entries over every iteration, not their visits in the kept draws, lets
// a run stop where the state is merely improbable (a weak RBM's unit of
// probability 0.005: 5 visits in 1000 draws whatever the run's length).
func reached(dg *Diagnostics, target float64, met func(name string) bool) bool {
	if len(dg.Quantities) == 0 {
		return false // nothing was measured
	}
	limit := rhatChanceLimit(dg.Groups, dg.Length, len(dg.Quantities))
	for _, q := range dg.Quantities {
		if q.Rare && !met(q.Name) {
			return false
		}
		if q.SD == 0 && q.MCSE == 0 {
			continue
		}
		if float64(q.Rhat) > limit || math.IsNaN(float64(q.Rhat)) || min(q.BulkESS, q.TailESS) < target {
			return false
		}
	}
	return true
}
