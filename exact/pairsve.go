package exact

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model/factorgraph"
)

// vePassCost is the work of one variable-elimination pass per clique table
// entry in the units of MaxPairsWork (nanoseconds: it measures about 200 ns
// per entry, the exponentials and logarithms of both passes).
const vePassCost = 200

// FactorGraphPairs returns the exact pair marginals of a factor graph by
// VEPairs with the default width limit.
func FactorGraphPairs(ctx context.Context, g *factorgraph.Graph, budget memlimit.Budget) (*Pairs, error) {
	vals := make([][]float64, g.Dim())
	for i := range vals {
		vals[i] = g.States(i)
	}
	return VEPairs(ctx, g.Cards(), factorList(g), vals, DefaultMaxWidth, budget)
}

// VEPairs returns the exact pair marginals of the factor graph (card,
// factors; values as for NewVE) by variable elimination with clamping:
// P(z_i = s, z_j = t) = P(z_i = s)·P(z_j = t | z_i = s), the conditional
// from one all-marginals pass (NewVE's two passes) over the factors plus a
// unary factor that is zero outside z_i = s. Clamping adds no edge, so every
// pass reuses one min-fill elimination order.
//
// Passes are run for every variable but the last and every state of
// positive probability but one, the state r_i of largest marginal, whose
// row follows by difference, P(z_i = r_i, z_j = t) = P(z_j = t) −
// Σ_{s≠r_i} P(z_i = s, z_j = t) (rounded into [0, 1]; absolute error about
// 1e−16·K_i): Σ_{i<d−1} (K_i − 1) passes, 99 for a 10×10 Ising grid
// (width 14: about 1 s on one core, 0.6 s on two, where the clamped
// transfer of GridPairs takes 20 ms). The passes run concurrently, as many
// as GOMAXPROCS and the memory budget allow (16 bytes per clique entry
// each); each pass's results are its own, so nothing depends on GOMAXPROCS.
// VEPairs refuses what NewVE refuses, and work over MaxPairsWork.
func VEPairs(ctx context.Context, card []int, factors []Factor, values [][]float64, maxWidth int, budget memlimit.Budget) (*Pairs, error) {
	if maxWidth <= 0 {
		maxWidth = DefaultMaxWidth
	}
	if err := checkFactors(card, factors, values); err != nil {
		return nil, err
	}
	pl, err := planElimination(ctx, card, factors)
	if err != nil {
		return nil, err
	}
	switch {
	case pl.width > maxWidth:
		return nil, tooLarge("exact: elimination width %d exceeds the limit %d", pl.width, maxWidth)
	case pl.maxEntries > MaxTableEntries:
		return nil, tooLarge("exact: the largest intermediate factor of the min-fill elimination order would have %.4g entries, over the limit of %d (2^25)", pl.maxEntries, MaxTableEntries)
	case pl.totalEntries > MaxTotalEntries:
		return nil, tooLarge("exact: the intermediate factors of the min-fill elimination order would have %.4g entries in all, over the limit of %d (2^27)", pl.totalEntries, MaxTotalEntries)
	}
	d := len(card)
	passes := 0
	for _, k := range card[:d-1] {
		passes += k - 1
	}
	if work := vePassCost * float64(passes+1) * pl.totalEntries; work > MaxPairsWork {
		return nil, fmt.Errorf("exact: %d clamped variable-elimination passes over %.3g table entries each cost about %.3g operations, over MaxPairsWork = %.3g", passes+1, pl.totalEntries, work, float64(MaxPairsWork))
	}
	fixed := memlimit.Base + pairsBytes(card)
	pass := vePassBytes(pl.totalEntries)
	if err := budget.Check(fmt.Sprintf("pair marginals by variable elimination (width %d, %.3g table entries per pass)", pl.width, pl.totalEntries), fixed+pass); err != nil {
		return nil, err
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), passes))
	if budget.Limit > 0 {
		workers = max(1, min(workers, int((float64(budget.Limit)-fixed)/pass)))
	}

	// The unclamped pass: marginals and the reference states.
	base, err := vePass(ctx, card, factors, values, pl)
	if err != nil {
		return nil, err
	}
	p := newPairs(card, values, "variable-elimination")
	ref := make([]int, d)
	var jobs [][2]int
	for i := range d {
		p.marg[i] = base.Marginals[i]
		for s, q := range base.Marginals[i] {
			if q > base.Marginals[i][ref[i]] {
				ref[i] = s
			}
		}
		for s, q := range base.Marginals[i] {
			if i < d-1 && s != ref[i] && q > 0 {
				jobs = append(jobs, [2]int{i, s})
			}
		}
	}

	var next atomic.Int64
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			fs := make([]Factor, len(factors)+1)
			copy(fs, factors)
			for {
				q := int(next.Add(1) - 1)
				if q >= len(jobs) || ctx.Err() != nil {
					return
				}
				i, s := jobs[q][0], jobs[q][1]
				tab := make([]float64, card[i])
				for t := range tab {
					if t != s {
						tab[t] = math.Inf(-1)
					}
				}
				fs[len(factors)] = Factor{Scope: []int{i}, LogTable: tab}
				res, err := vePass(ctx, card, fs, nil, pl)
				if err != nil {
					errs[q] = err
					return
				}
				ps := p.marg[i][s]
				for j := i + 1; j < d; j++ {
					tj := p.Joint(i, j)[s*card[j] : (s+1)*card[j]]
					for t, c := range res.Marginals[j] {
						tj[t] = ps * c
					}
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for q, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("exact: clamping variable %d to state %d: %w", jobs[q][0], jobs[q][1], err)
		}
	}
	for i := range d - 1 {
		r := ref[i]
		for j := i + 1; j < d; j++ {
			tab := p.Joint(i, j)
			kj := card[j]
			for t := range kj {
				v := p.marg[j][t]
				for s := range card[i] {
					if s != r {
						v -= tab[s*kj+t]
					}
				}
				tab[r*kj+t] = clampProb(v)
			}
		}
	}
	return p, nil
}

// vePass runs both passes of variable elimination with a given plan, for
// the marginals only.
func vePass(ctx context.Context, card []int, factors []Factor, values [][]float64, pl vePlan) (*Result, error) {
	b := newVEBuild(card, factors, pl)
	b.noCDF = true
	if err := b.upward(ctx); err != nil {
		return nil, err
	}
	return b.downward(ctx, values)
}

// vePassBytes is the memory of one variable-elimination pass: the clique
// tables and, at the peak of the upward pass, their messages.
func vePassBytes(totalEntries float64) float64 { return 8 * 2 * totalEntries }

// vePairsBytes estimates the least memory VEPairs needs beyond the pair
// tables for these factors: one pass (more run at once when the budget
// allows). Above vePlanMaxVars variables, where planning alone would be
// slow, it is the bound NewVE enforces.
func vePairsBytes(card []int, factors []Factor) float64 {
	if len(card) > vePlanMaxVars {
		return vePassBytes(MaxTotalEntries)
	}
	for _, f := range factors {
		for _, u := range f.Scope {
			if u < 0 || u >= len(card) {
				return 0 // VEPairs will refuse the factors
			}
		}
	}
	pl, _ := planElimination(context.Background(), card, factors)
	return vePassBytes(pl.totalEntries)
}

// vePlanMaxVars is the most variables for which PairsMemory plans the
// elimination order to estimate its tables.
const vePlanMaxVars = 4096
