package gof

import (
	"context"
	"fmt"
	"math"

	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
)

// DKSD runs the discrete kernelized Stein discrepancy test of Yang et al.
// (2018) with the kernel exp(−H(z, z')/d).
//
// With ¬_l the cyclic move of coordinate l to its next possible state (in
// the model's state order, skipping states model.Support rules out) and ¬⁻¹_l
// its inverse, the score is s_l(z) = 1 − p(¬_l z)/p(z), the Stein operator
// T f(z) = s(z) f(z) − (f(z) − f(¬⁻¹ z)) (E_p T f = 0 for any f), and
//
//	κ(z, z') = Σ_l [s_l s'_l k − s_l Δ*_{z',l} k − s'_l Δ*_{z,l} k + Δ*_{z,l} Δ*_{z',l} k].
//
// For the Hamming kernel, k(¬⁻¹_l z, z')/k(z, z') is e^(−1/d) when z_l = z'_l,
// e^(1/d) when z'_l = ¬⁻¹ z_l and 1 otherwise, and k(¬⁻¹z, ¬⁻¹z') = k(z, z'),
// so κ is a sum over coordinates with no kernel evaluations beyond k itself:
// O(n²d) time and O(n²) memory. Like Yang et al., the Stein identity behind
// the test needs p > 0 on every state the cycles visit: states that are
// impossible only jointly (a zero factor between two variables) bias it.
func DKSD(ctx context.Context, m model.Model, s *sampler.Samples, o Options) (*Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := checkSamples(m, s, 2); err != nil {
		return nil, err
	}
	if bad := countImpossible(m, s); bad > 0 {
		return rejectImpossible("dksd", s.N, bad, o), nil
	}
	h, err := dksdMatrix(m, s)
	if err != nil {
		return nil, err
	}
	res, err := steinTest(ctx, "dksd", h, s.N, o)
	if err != nil {
		return nil, err
	}
	res.Bandwidth = float64(s.D)
	return res, nil
}

// cycle is the cyclic order ¬ of each variable's possible states: the
// states that model.Support allows (all states for other models). next[l][s]
// and prev[l][s] are −1 for an impossible state and for variables with
// fewer than two possible states, which have no move and score 0.
type cycle struct{ next, prev [][]int }

func newCycle(m model.Model) cycle {
	sup, _ := m.(model.Support)
	var c cycle
	for l := range m.Dim() {
		k := len(m.States(l))
		var poss []int
		for st := range k {
			if sup == nil || sup.Possible(l, st) {
				poss = append(poss, st)
			}
		}
		nx, pv := make([]int, k), make([]int, k)
		for st := range k {
			nx[st], pv[st] = -1, -1
		}
		if len(poss) >= 2 {
			for j, st := range poss {
				nx[st] = poss[(j+1)%len(poss)]
				pv[st] = poss[(j+len(poss)-1)%len(poss)]
			}
		}
		c.next = append(c.next, nx)
		c.prev = append(c.prev, pv)
	}
	return c
}

// DKSDScore writes the difference score s_l(z) = 1 − p(¬_l z)/p(z) of every
// coordinate into dst for a possible z, ¬_l moving variable l to its next
// possible state cyclically (0 for variables with one possible state).
func DKSDScore(dst []float64, m model.Model, z []int) error {
	return dksdScore(dst, m, newCycle(m), z)
}

func dksdScore(dst []float64, m model.Model, c cycle, z []int) error {
	dm, hasDelta := m.(model.Delta)
	var base float64
	var zz []int
	if !hasDelta {
		base = m.LogProb(z)
		zz = append([]int(nil), z...)
	}
	for l := range z {
		next := c.next[l][z[l]]
		if next < 0 {
			dst[l] = 0
			continue
		}
		var delta float64
		if hasDelta {
			delta = dm.DeltaLogProb(z, l, next)
		} else {
			zz[l] = next
			delta = m.LogProb(zz) - base
			zz[l] = z[l]
		}
		if math.IsNaN(delta) || math.IsInf(delta, 1) {
			return fmt.Errorf("dksd: log p changes by %v when variable %d moves to its next state", delta, l)
		}
		v := -math.Expm1(delta)
		if math.IsInf(v, 0) {
			return fmt.Errorf("dksd: p(¬z)/p(z) overflows (log ratio %.4g) at variable %d", delta, l)
		}
		dst[l] = v
	}
	return nil
}

func dksdMatrix(m model.Model, s *sampler.Samples) ([]float64, error) {
	n, d := s.N, s.D
	score := make([]float64, n*d)
	prev := make([]int32, n*d) // ¬⁻¹ z, −1 where variable l has no move
	zs := make([]int32, n*d)
	c := newCycle(m)
	for i := range n {
		z := s.Row(i)
		if err := dksdScore(score[i*d:(i+1)*d], m, c, z); err != nil {
			return nil, fmt.Errorf("sample %d: %w", i, err)
		}
		for l, v := range z {
			zs[i*d+l] = int32(v)
			prev[i*d+l] = int32(c.prev[l][v])
		}
	}
	t := &dksdTask{n: n, d: d, z: zs, prev: prev, s: score, h: make([]float64, n*n)}
	fd := float64(d)
	t.em, t.ep = math.Exp(-1/fd), math.Exp(1/fd)
	t.kOf = make([]float64, d+1)
	for hd := range t.kOf {
		t.kOf[hd] = math.Exp(-float64(hd) / fd)
	}
	parallel.For(n, 4, t)
	return t.h, nil
}

type dksdTask struct {
	n, d    int
	z, prev []int32
	s, h    []float64
	em, ep  float64
	kOf     []float64
}

// Do fills rows [lo, hi) of H for j ≤ i and mirrors them.
func (t *dksdTask) Do(lo, hi int) {
	d := t.d
	for i := lo; i < hi; i++ {
		zi, pi, si := t.z[i*d:(i+1)*d], t.prev[i*d:(i+1)*d], t.s[i*d:(i+1)*d]
		for j := 0; j <= i; j++ {
			zj, pj, sj := t.z[j*d:(j+1)*d], t.prev[j*d:(j+1)*d], t.s[j*d:(j+1)*d]
			var ss, eqI, eqJ, shI, shJ float64
			eq, eqMove, nA, nB := 0, 0, 0, 0
			for l := range zi {
				a, b := zi[l], zj[l]
				x, y := si[l], sj[l]
				ss += x * y
				if a == b {
					eq++
					if pi[l] >= 0 { // variables without a move add nothing
						eqMove++
						eqI += x
						eqJ += y
					}
					continue
				}
				if b == pi[l] { // z'_l = ¬⁻¹ z_l: A_l = e^(1/d), multiplies s'_l
					nA++
					shJ += y
				}
				if a == pj[l] { // z_l = ¬⁻¹ z'_l: B_l = e^(1/d), multiplies s_l
					nB++
					shI += x
				}
			}
			fe := float64(eqMove)
			v := ss -
				((1-t.em)*eqI + (1-t.ep)*shI) -
				((1-t.em)*eqJ + (1-t.ep)*shJ) +
				2*(1-t.em)*fe + (1-t.ep)*float64(nA+nB)
			v *= t.kOf[d-eq]
			t.h[i*t.n+j] = v
			t.h[j*t.n+i] = v
		}
	}
}
