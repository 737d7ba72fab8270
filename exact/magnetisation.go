package exact

import (
	"context"
	"fmt"
	"math"

	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
)

// SpinModel reports whether every variable of m has the two states −1 and +1 (in
// either order), so that the magnetisation M = Σ_i z_i is defined.
func SpinModel(m model.Model) bool {
	for i := range m.Dim() {
		st := m.States(i)
		if len(st) != 2 || st[0]*st[1] != -1 || math.Abs(st[0]) != 1 {
			return false
		}
	}
	return m.Dim() > 0
}

// ModeMass returns the exact mass of the positive-magnetisation mode of a
// model with ±1 variables, P(M > 0) + ½·P(M = 0) with M = Σ_i z_i (ties
// count half, so that a model symmetric under z → −z has mass ½). Routes:
//
//   - an open Ising grid with shorter side ≤ MaxGridSide: the transfer of
//     IsingGrid with the number of up spins carried along, (d+1)·2^side
//     numbers per step, about d²·2^side/2 entry updates (20 ms for 10×10,
//     1.4 s for 14×14);
//   - a periodic Ising grid with shorter side ≤ MaxTorusSide whose work
//     (d − side)²·4^side/4 is within MaxPairsWork: the conditional
//     transfers of IsingTorus with the count carried along (only the counts
//     that can still decide the sign, at most (d − side)/2 + 3 blocks of
//     2^side numbers per step), mixed over the first line's configurations
//     (3 s for the 10×10 torus on one core, 22 s for 11×11, the largest
//     square torus within the bound);
//   - an RBM with hidden enumeration within MaxHidden and MaxPairsWork:
//     given h the visible units are independent, and the distribution of
//     the number of up spins is built by a d²/2 recursion per configuration;
//   - any model with at most DefaultMaxStates joint states: enumeration.
//
// Otherwise it returns an error: P(M > 0) is a global quantity that
// variable elimination cannot split into factors, and must then be
// estimated from a large exact i.i.d. sample.
func ModeMass(ctx context.Context, m model.Model, budget memlimit.Budget) (float64, error) {
	if !SpinModel(m) {
		return 0, fmt.Errorf("exact: the magnetisation mode needs a model whose variables all take the values −1 and +1")
	}
	d := m.Dim()
	switch mm := m.(type) {
	case *ising.Ising:
		if rows, cols, periodic, ok := mm.GridShape(); ok && !periodic && min(rows, cols) <= MaxGridSide {
			n := float64(int(1) << min(rows, cols))
			if err := budget.Check("magnetisation distribution of the Ising grid", memlimit.Base+2*8*n*float64(d)+16*float64(d+1)*n); err != nil {
				return 0, err
			}
			g, err := isingGridContext(ctx, mm)
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			if err == nil {
				return g.modeMass(ctx)
			}
			if model.StateCount(m) > DefaultMaxStates {
				return 0, err
			}
		}
		if rows, cols, periodic, ok := mm.GridShape(); ok && periodic && min(rows, cols) <= MaxTorusSide && rows*cols == d {
			w := min(rows, cols)
			if work := torusMassWork(d, w); work > MaxPairsWork {
				if model.StateCount(m) > DefaultMaxStates {
					return 0, fmt.Errorf("exact: P(M > 0) on the periodic %d×%d Ising grid by transfer costs %.3g entry updates, over MaxPairsWork = %.3g; estimate it from a large exact i.i.d. sample", rows, cols, work, float64(MaxPairsWork))
				}
			} else {
				if err := budget.Check("magnetisation distribution of the periodic Ising grid", memlimit.Base+torusMassBytes(d, w)); err != nil {
					return 0, err
				}
				p, err := torusPlanOf(mm, 0)
				if err == nil {
					return p.modeMass(ctx)
				}
				if model.StateCount(m) > DefaultMaxStates {
					return 0, err
				}
			}
		}
	case *rbm.RBM:
		if rbmPairsApplies(mm) {
			if err := budget.Check("magnetisation distribution of the RBM", memlimit.Base+8*4*float64(d)*MaxHidden+1<<20+16*float64(d+1)); err != nil {
				return 0, err
			}
			t, err := newRBMTruthContext(ctx, mm, rbmChunkBits, false)
			if err != nil {
				return 0, err
			}
			return t.modeMass(ctx)
		}
	}
	if model.StateCount(m) > DefaultMaxStates {
		return 0, tooLarge("exact: no exact route to P(M > 0) for this model (it needs an open Ising grid with shorter side ≤ %d, a periodic one with shorter side ≤ %d, an RBM with few hidden units, or at most %d joint states); estimate it from a large exact i.i.d. sample", MaxGridSide, MaxTorusSide, DefaultMaxStates)
	}
	if err := budget.Check("magnetisation distribution by enumeration", memlimit.Base+8*float64(model.StateCount(m))); err != nil {
		return 0, err
	}
	lp, logZ, err := LogProbs(ctx, m, DefaultMaxStates)
	if err != nil {
		return 0, err
	}
	k := make([]int, d)
	for i := range k {
		k[i] = 2
	}
	z := make([]int, d)
	var mass float64
	for _, v := range lp {
		var mag float64
		for i, s := range z {
			mag += m.States(i)[s]
		}
		if !math.IsInf(v, -1) {
			mass += math.Exp(v-logZ) * modeWeight(mag)
		}
		odometer(z, k)
	}
	return min(mass, 1), nil
}

// modeWeight is 1 for a positive magnetisation, ½ for zero, 0 otherwise.
func modeWeight(mag float64) float64 {
	switch {
	case mag > 0:
		return 1
	case mag == 0:
		return 0.5
	}
	return 0
}

// massFromUpCounts returns Σ_c P(c up spins)·modeWeight(value of M) from
// unnormalised weights of the counts, given the value of M for each count.
func massFromUpCounts(w []float64, mag func(c int) float64) float64 {
	var tot, mass float64
	for c, v := range w {
		tot += v
		mass += v * modeWeight(mag(c))
	}
	if !(tot > 0) {
		return 0
	}
	return min(mass/tot, 1)
}

// modeMass runs the forward transfer carrying the number of sites in state
// 1 (the spin +1 of ising models) among those visited.
func (g *IsingGrid) modeMass(ctx context.Context) (float64, error) {
	d, n, w := len(g.site), g.n, g.w
	cur := make([]float64, (d+1)*n)
	nxt := make([]float64, (d+1)*n)
	cur[0] = 1 // the placeholder frontier of newIsingGrid, no site up
	sum := 1.0
	for t := range d {
		if t&7 == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		mt := scaled(g.steps[t].f, false, 1/sum)
		b := t % w
		bit := 1 << b
		clear(nxt[:(t+2)*n])
		sum = 0
		for c := 0; c <= t; c++ {
			src := cur[c*n : (c+1)*n]
			d0 := nxt[c*n : (c+1)*n]
			d1 := nxt[(c+1)*n : (c+2)*n]
			for x0 := range n {
				if x0&bit != 0 {
					continue
				}
				x1 := x0 | bit
				zl := 0
				if b > 0 {
					zl = x0 >> (b - 1) & 1
				}
				v0, v1 := src[x0], src[x1]
				mz := &mt[zl]
				y0 := mz[0][0]*v0 + mz[0][1]*v1
				y1 := mz[1][0]*v0 + mz[1][1]*v1
				d0[x0] += y0
				d1[x1] += y1
				sum += y0 + y1
			}
		}
		if !(sum > 0) {
			return 0, fmt.Errorf("exact: internal error: the magnetisation transfer lost all mass at site %d", t)
		}
		cur, nxt = nxt, cur
	}
	counts := make([]float64, d+1)
	for c := range counts {
		for _, v := range cur[c*n : (c+1)*n] {
			counts[c] += v
		}
	}
	// State 1 is +1 for the models IsingGrid accepts.
	return massFromUpCounts(counts, func(c int) float64 { return float64(2*c - d) }), nil
}

// modeMass enumerates the hidden configurations; given h the number of up
// visible units has a Poisson-binomial distribution, built unit by unit.
func (t *RBMTruth) modeMass(ctx context.Context) (float64, error) {
	d := t.d
	dist := make([]float64, d+1)
	counts := make([]float64, d+1)
	blk := min(rbmPairBlock, 1<<t.m)
	err := t.walkHidden(ctx, t.res.LogZ, blk, func(_ int, tanh []float64, w float64) {
		clear(dist)
		dist[0] = 1
		for i, v := range tanh {
			pu := (1 + v) / 2 // P(z_i = +1 | h)
			for c := i + 1; c > 0; c-- {
				dist[c] = dist[c]*(1-pu) + dist[c-1]*pu
			}
			dist[0] *= 1 - pu
		}
		for c, v := range dist {
			counts[c] += w * v
		}
	}, func() {})
	if err != nil {
		return 0, err
	}
	return massFromUpCounts(counts, func(c int) float64 { return float64(2*c - d) }), nil
}
