package stein

import (
	"fmt"
	"math"

	"github.com/dstein/dstein/model"
)

// Cycle is the cyclic order ¬ of each variable's possible states: the
// states that model.Support allows (all states for other models). Next[l][s]
// and Prev[l][s] are −1 for an impossible state and for variables with
// fewer than two possible states, which have no move and score 0.
type Cycle struct{ Next, Prev [][]int }

// NewCycle returns the cycles of m's variables.
func NewCycle(m model.Model) Cycle {
	sup, _ := m.(model.Support)
	var c Cycle
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
		c.Next = append(c.Next, nx)
		c.Prev = append(c.Prev, pv)
	}
	return c
}

// Score writes the difference score s_l(z) = 1 − p(¬_l z)/p(z) of every
// variable into dst for a possible state z (0 for variables without a
// move), with model.Delta where m has it. It fails when a ratio is not
// finite (a move into a state of probability zero makes s_l = 1, which is
// finite; a move out of one is an error).
func (c Cycle) Score(dst []float64, m model.Model, z []int) error {
	mv := NewMover(m)
	mv.At(z)
	for l := range z {
		next := c.Next[l][z[l]]
		if next < 0 {
			dst[l] = 0
			continue
		}
		delta := mv.Delta(z, l, next)
		if math.IsNaN(delta) || math.IsInf(delta, 1) {
			return fmt.Errorf("log p changes by %v when variable %d moves to its next state", delta, l)
		}
		v := -math.Expm1(delta)
		if math.IsInf(v, 0) {
			return fmt.Errorf("p(¬z)/p(z) overflows (log ratio %.4g) at variable %d", delta, l)
		}
		dst[l] = v
	}
	return nil
}

// Mover gives the change of log p* when one variable of a configuration
// moves: by the model's model.Delta where it has one, else by two
// LogProbs on a copy. Call At with the configuration first. It is not safe
// for concurrent use.
type Mover struct {
	m    model.Model
	dm   model.Delta
	zz   []int
	base float64
}

// NewMover returns a Mover for m.
func NewMover(m model.Model) *Mover {
	dm, _ := m.(model.Delta)
	return &Mover{m: m, dm: dm}
}

// At makes z the configuration that Delta moves from.
func (v *Mover) At(z []int) {
	if v.dm == nil {
		v.base = v.m.LogProb(z)
		v.zz = append(v.zz[:0], z...)
	}
}

// Delta returns log p*(z with z_l = s) − log p*(z) for the z given to At,
// with model.Delta's conventions where the model has it (the difference
// of two −Inf otherwise: NaN).
func (v *Mover) Delta(z []int, l, s int) float64 {
	if v.dm != nil {
		return v.dm.DeltaLogProb(z, l, s)
	}
	v.zz[l] = s
	d := v.m.LogProb(v.zz) - v.base
	v.zz[l] = z[l]
	return d
}

// Points are n states prepared for the Stein kernel, row-major n×d: the
// states, their predecessors ¬⁻¹ z (−1 where a variable has no move) and
// their scores.
type Points struct {
	N, D  int
	Z     []int32
	Prev  []int32
	Score []float64
}

// Prepare computes the scores of n states z (row-major n×d state indices)
// of m. It fails on a state with an index out of range or whose score is
// not finite, naming its row.
func Prepare(m model.Model, z []int, n int) (*Points, error) {
	d := m.Dim()
	if len(z) != n*d {
		return nil, fmt.Errorf("stein: %d state indices for %d states of %d variables", len(z), n, d)
	}
	c := NewCycle(m)
	p := &Points{N: n, D: d, Z: make([]int32, n*d), Prev: make([]int32, n*d), Score: make([]float64, n*d)}
	for i := range n {
		row := z[i*d : (i+1)*d]
		if err := checkRow(m, row, i); err != nil {
			return nil, err
		}
		if err := c.Score(p.Score[i*d:(i+1)*d], m, row); err != nil {
			return nil, fmt.Errorf("stein: state %d: %w", i, err)
		}
		for l, v := range row {
			p.Z[i*d+l] = int32(v)
			p.Prev[i*d+l] = int32(c.Prev[l][v])
		}
	}
	return p, nil
}

// checkRow returns an error naming state i of m when one of its state
// indices is out of range.
func checkRow(m model.Model, row []int, i int) error {
	for l, v := range row {
		if k := len(m.States(l)); v < 0 || v >= k {
			return fmt.Errorf("stein: state %d, variable %d: state index %d, want 0…%d", i, l, v, k-1)
		}
	}
	return nil
}

// Kernel evaluates κ with the base kernel exp(−H/ℓ) on d variables.
type Kernel struct {
	d      int
	em, ep float64   // e^(−1/ℓ), e^(1/ℓ)
	kOf    []float64 // kOf[h] = e^(−h/ℓ)
}

// NewKernel returns the Stein kernel of exp(−H/ℓ) on d variables; ℓ must
// be positive and finite (ℓ = d is DKSD's choice).
func NewKernel(d int, ell float64) (*Kernel, error) {
	if d < 1 {
		return nil, fmt.Errorf("stein: a kernel on %d variables; want at least 1", d)
	}
	if !(ell > 0) || math.IsInf(ell, 0) {
		return nil, fmt.Errorf("stein: bandwidth ℓ = %v; want a positive finite number", ell)
	}
	k := &Kernel{d: d, em: math.Exp(-1 / ell), ep: math.Exp(1 / ell), kOf: make([]float64, d+1)}
	for h := range k.kOf {
		k.kOf[h] = math.Exp(-float64(h) / ell)
	}
	return k, nil
}

// Eval returns κ(z_i, z_j) for points i of a and j of b (which may be the
// same set). It allocates nothing.
func (k *Kernel) Eval(a *Points, i int, b *Points, j int) float64 {
	d := k.d
	zi, pi, si := a.Z[i*d:(i+1)*d], a.Prev[i*d:(i+1)*d], a.Score[i*d:(i+1)*d]
	zj, pj, sj := b.Z[j*d:(j+1)*d], b.Prev[j*d:(j+1)*d], b.Score[j*d:(j+1)*d]
	var ss, eqI, eqJ, shI, shJ float64
	eq, eqMove, nA, nB := 0, 0, 0, 0
	for l := range zi {
		x, y := si[l], sj[l]
		ss += x * y
		if zi[l] == zj[l] {
			eq++
			if pi[l] >= 0 { // variables without a move add nothing
				eqMove++
				eqI += x
				eqJ += y
			}
			continue
		}
		if zj[l] == pi[l] { // z'_l = ¬⁻¹ z_l: the ratio e^(1/ℓ) multiplies s'_l
			nA++
			shJ += y
		}
		if zi[l] == pj[l] { // z_l = ¬⁻¹ z'_l: e^(1/ℓ) multiplies s_l
			nB++
			shI += x
		}
	}
	v := ss -
		((1-k.em)*eqI + (1-k.ep)*shI) -
		((1-k.em)*eqJ + (1-k.ep)*shJ) +
		2*(1-k.em)*float64(eqMove) + (1-k.ep)*float64(nA+nB)
	return v * k.kOf[d-eq]
}
