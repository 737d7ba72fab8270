package stein

import (
	"fmt"
	"math"

	"github.com/dstein/dstein/internal/numeric"
	"github.com/dstein/dstein/model"
)

// Balanced are n states prepared for the balanced Stein kernel
// (BalancedKernel), row-major n×d: the states and, for each variable, its
// neighbouring states along the cycle (the next and, when it differs, the
// previous possible state; −1 for none) with their Barker rates
// r(z, y) = p(y)/(p(z) + p(y)) ∈ [0, 1].
type Balanced struct {
	N, D       int
	Z          []int32
	Next, Prev []int32
	RN, RP     []float64
}

// PrepareBalanced computes the neighbours and rates of n states z
// (row-major n×d state indices) of m. It fails on a state of probability
// zero (a rate out of it is not defined), naming its row.
func PrepareBalanced(m model.Model, z []int, n int) (*Balanced, error) {
	d := m.Dim()
	if len(z) != n*d {
		return nil, fmt.Errorf("stein: %d state indices for %d states of %d variables", len(z), n, d)
	}
	c := NewCycle(m)
	nd := n * d
	b := &Balanced{N: n, D: d, Z: make([]int32, nd), Next: make([]int32, nd), Prev: make([]int32, nd),
		RN: make([]float64, nd), RP: make([]float64, nd)}
	mv := NewMover(m)
	rate := func(row []int, l, s int) (float64, error) {
		delta := mv.Delta(row, l, s)
		if math.IsNaN(delta) || math.IsInf(delta, 1) {
			return 0, fmt.Errorf("log p changes by %v when variable %d moves to state %d", delta, l, s)
		}
		return numeric.Sigmoid(delta), nil // p(y)/(p(z)+p(y)); 0 for an impossible y
	}
	for i := range n {
		row := z[i*d : (i+1)*d]
		if err := checkRow(m, row, i); err != nil {
			return nil, err
		}
		mv.At(row)
		for l, v := range row {
			k := i*d + l
			b.Z[k] = int32(v)
			b.Next[k], b.Prev[k] = -1, -1
			nx, pv := c.Next[l][v], c.Prev[l][v]
			if nx < 0 {
				continue
			}
			r, err := rate(row, l, nx)
			if err != nil {
				return nil, fmt.Errorf("stein: state %d: %w", i, err)
			}
			b.Next[k], b.RN[k] = int32(nx), r
			if pv != nx {
				if r, err = rate(row, l, pv); err != nil {
					return nil, fmt.Errorf("stein: state %d: %w", i, err)
				}
				b.Prev[k], b.RP[k] = int32(pv), r
			}
		}
	}
	return b, nil
}

// BalancedKernel evaluates the Stein kernel of the Barker jump process's
// generator with the base kernel exp(−H/ℓ) on d variables:
//
//	A f(z) = Σ_l Σ_{y ∈ N_l(z)} r(z, y) (f(y) − f(z)),  r(z, y) = p(y)/(p(z) + p(y)),
//
// N_l(z) the states one step along variable l's cycle either way.
// p(z) r(z, y) = p(z)p(y)/(p(z)+p(y)) is symmetric in z and y and the
// neighbour relation is symmetric, so E_p A f = 0 for every f, and
// κ(z, z') = A_z A_z' k(z, z') has mean 0 under p. Unlike DKSD's score
// 1 − p(¬z)/p(z), the rates lie in [0, 1], so κ is bounded (by (2d+1)²
// in absolute value, about): no state's ratio can dominate the statistic,
// and states of probability zero next to the samples need no care.
type BalancedKernel struct {
	*Kernel // the base kernel's tables
}

// NewBalancedKernel returns the balanced Stein kernel of exp(−H/ℓ) on d
// variables; ℓ must be positive and finite.
func NewBalancedKernel(d int, ell float64) (*BalancedKernel, error) {
	k, err := NewKernel(d, ell)
	if err != nil {
		return nil, err
	}
	return &BalancedKernel{k}, nil
}

// ratio returns c(s, v)/c(u, v) for c(a, b) = e^(−[a≠b]/ℓ), s ≠ u: the
// base kernel's factor of one variable moved from u to s, against v.
func (k *BalancedKernel) ratio(u, s, v int32) float64 {
	switch {
	case u == v:
		return k.em
	case s == v:
		return k.ep
	}
	return 1
}

// Eval returns κ(z_i, z_j) for points i of a and j of b. With A_l, R_l
// the moves of z_i along variable l (their rates, times the base kernel's
// ratio against z_j, and alone), B_l, R'_l those of z_j, and C_l the
// pairs of moves of both along l:
//
//	κ / k = A·B − Σ_l A_l B_l + Σ_l C_l − R'·A − R·B + R·R'
//
// (A = Σ_l A_l, …), each term a sum over the variables: O(d). It
// allocates nothing.
func (k *BalancedKernel) Eval(a *Balanced, i int, b *Balanced, j int) float64 {
	d := k.d
	zi, ni, pi, rni, rpi := a.Z[i*d:(i+1)*d], a.Next[i*d:(i+1)*d], a.Prev[i*d:(i+1)*d], a.RN[i*d:(i+1)*d], a.RP[i*d:(i+1)*d]
	zj, nj, pj, rnj, rpj := b.Z[j*d:(j+1)*d], b.Next[j*d:(j+1)*d], b.Prev[j*d:(j+1)*d], b.RN[j*d:(j+1)*d], b.RP[j*d:(j+1)*d]
	var sA, sB, sR, sRp, sAB, sC float64
	eq := 0
	for l := range zi {
		u, v := zi[l], zj[l]
		if u == v {
			eq++
		}
		var al, bl, cl, rl, rlp float64
		// Moves of z_i along l, against z_j's v.
		if ni[l] >= 0 {
			al += rni[l] * k.ratio(u, ni[l], v)
			rl += rni[l]
			if pi[l] >= 0 {
				al += rpi[l] * k.ratio(u, pi[l], v)
				rl += rpi[l]
			}
		}
		if nj[l] >= 0 {
			bl += rnj[l] * k.ratio(v, nj[l], u)
			rlp += rnj[l]
			if pj[l] >= 0 {
				bl += rpj[l] * k.ratio(v, pj[l], u)
				rlp += rpj[l]
			}
			if ni[l] >= 0 {
				// Both moved along l: c(s, s')/c(u, v).
				cl += k.pair(u, v, ni[l], nj[l], rni[l], rnj[l])
				if pj[l] >= 0 {
					cl += k.pair(u, v, ni[l], pj[l], rni[l], rpj[l])
				}
				if pi[l] >= 0 {
					cl += k.pair(u, v, pi[l], nj[l], rpi[l], rnj[l])
					if pj[l] >= 0 {
						cl += k.pair(u, v, pi[l], pj[l], rpi[l], rpj[l])
					}
				}
			}
		}
		sA += al
		sB += bl
		sR += rl
		sRp += rlp
		sAB += al * bl
		sC += cl
	}
	v := sA*sB - sAB + sC - sRp*sA - sR*sB + sR*sRp
	return v * k.kOf[d-eq]
}

// pair returns r·r'·c(s, s')/c(u, v): z_i's variable moved from u to s
// and z_j's from v to s'.
func (k *BalancedKernel) pair(u, v, s, sp int32, r, rp float64) float64 {
	f := 1.0 // 1/c(u, v)
	if u != v {
		f = k.ep
	}
	if s != sp { // c(s, s')
		f *= k.em
	}
	return r * rp * f
}
