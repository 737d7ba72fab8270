package exact

import (
	"context"
	"fmt"

	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
)

// TorusPairs returns the exact pair marginals of an Ising model on a
// periodic grid with shorter side at most MaxTorusSide (the models
// NewIsingTorus accepts), by the conditional transfers of IsingTorus with
// each line in turn as the first.
//
// Given the configuration c of line a, P(z_i = s, z_j = t) for i on line a
// is Σ_c P(c)·1[c_i = s]·P(z_j = t | c), and the conditional marginals are
// what IsingTorus computes anyway; so the sweep that starts at line a gives
// the pairs of line a's sites with each other and with every later line.
// The L sweeps (L the longer side; the last needs no backward pass) cost
// about (2L − 1)·(d − side)·4^side entry updates: 3 s for the 10×10 torus
// on one core (measured), about 100 s for 12×12 (from the cost of its
// build), which MaxPairsWork still allows. Results do not depend on
// GOMAXPROCS.
func TorusPairs(ctx context.Context, m *ising.Ising, budget memlimit.Budget) (*Pairs, error) {
	if m == nil {
		return nil, fmt.Errorf("exact: TorusPairs needs a model, got nil")
	}
	rows, cols, _, ok := m.GridShape()
	d := m.Dim()
	if ok && min(rows, cols) <= MaxTorusSide && rows*cols == d {
		w := min(rows, cols)
		if work := torusPairsWork(d, w); work > MaxPairsWork {
			return nil, fmt.Errorf("exact: the conditional transfers of the periodic %d×%d grid's pairs cost %.3g entry updates, over MaxPairsWork = %.3g", rows, cols, work, float64(MaxPairsWork))
		}
		card := make([]int, d)
		for i := range card {
			card[i] = 2
		}
		if err := budget.Check(fmt.Sprintf("pair marginals of the periodic %d×%d Ising grid", rows, cols), memlimit.Base+pairsBytes(card)+torusPairsBytes(d, w)); err != nil {
			return nil, err
		}
	}
	p0, err := torusPlanOf(m, 0)
	if err != nil {
		return nil, err
	}
	w, lines := p0.w, p0.lines
	card := make([]int, d)
	vals := make([][]float64, d)
	for i := range card {
		card[i], vals[i] = 2, model.Spins
	}
	pr := newPairs(card, vals, "ising-torus")
	marg := make([]float64, 2*(d-w)*p0.n)
	bufs := newTorusBufs(d, w)
	for a := range lines {
		p := p0
		if a > 0 {
			if p, err = torusPlanOf(m, a); err != nil {
				return nil, err
			}
		}
		mg := marg
		if a == lines-1 && a > 0 {
			mg = nil // only pairs within the line are left
		}
		logW, err := p.conditioned(ctx, mg, bufs)
		if err != nil {
			return nil, err
		}
		if a == 0 {
			res := newIsingTorusFrom(p, logW, marg).res
			for i := range d {
				pr.marg[i] = append([]float64(nil), res.Marginals[i]...)
			}
		}
		_, pc := torusWeights(logW)
		// The sites of lines a…L−1 (in the grid's own order) are the
		// steps before later of this sweep.
		later := (lines - a) * w
		span := 2 * (d - w)
		for c, q := range pc {
			if q == 0 {
				continue
			}
			for b := range w {
				i, u := p.site[b], c>>b&1
				for b2 := b + 1; b2 < w; b2++ {
					pr.addSpinPair(i, u, p.site[b2], c>>b2&1, q)
				}
				if mg == nil {
					continue
				}
				mc := mg[span*c : span*(c+1)]
				for t := w; t < later; t++ {
					j := p.site[t]
					pr.addSpinPair(i, u, j, 0, q*mc[2*(t-w)])
					pr.addSpinPair(i, u, j, 1, q*mc[2*(t-w)+1])
				}
			}
		}
	}
	for k, v := range pr.p {
		pr.p[k] = clampProb(v)
	}
	return pr, nil
}

// torusPairsWork is the number of entry updates of TorusPairs.
func torusPairsWork(d, w int) float64 {
	lines := d / w
	return float64(2*lines-1) * float64(d-w) * float64(int(1)<<w) * float64(int(1)<<w)
}

// torusPairsBytes is the memory of TorusPairs beyond the pair tables: the
// conditional marginals and weights of one sweep, each worker's messages
// and the steps' factors.
func torusPairsBytes(d, w int) float64 {
	n := float64(int(1) << w)
	m := float64(d - w)
	return 8*2*m*n + 8*2*n + 8*(m+3)*n*torusWorkers() + 8*48*float64(d) + 88*float64(d)
}

// addSpinPair adds x to P(z_i = u, z_j = v) for two-state variables i ≠ j.
func (p *Pairs) addSpinPair(i, u, j, v int, x float64) {
	if i < j {
		p.p[p.off(i, j)+2*u+v] += x
		return
	}
	p.p[p.off(j, i)+2*v+u] += x
}
