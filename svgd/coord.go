package svgd

import (
	"math"

	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/kernel"
)

// coordState is the workspace of the coordinatewise kernel.
type coordState struct {
	xt    []float64 // d×n positions, coordinate by coordinate
	st    []float64 // d×|act| scores of the active particles, transposed
	wa    []float64 // weights of the active particles
	h     []float64 // bandwidth of each coordinate
	pairs []float64 // the n(n−1)/2 squared distances of one coordinate
}

func newCoordState(n, d int) *coordState {
	c := &coordState{xt: make([]float64, d*n), st: make([]float64, d*n), wa: make([]float64, n), h: make([]float64, d)}
	if n > 1 {
		c.pairs = make([]float64, n*(n-1)/2)
	}
	return c
}

// median2 returns the median squared distance over the distinct pairs of
// the n values v.
func (c *coordState) median2(v []float64) float64 {
	n := len(v)
	if n < 2 {
		return 0
	}
	k := 0
	for i := 1; i < n; i++ {
		for j := range i {
			e := v[i] - v[j]
			c.pairs[k] = e * e
			k++
		}
	}
	m := len(c.pairs)
	a, b := (m-1)/2, m/2
	vb := kernel.Select(c.pairs, b)
	va := vb
	if a != b {
		va = c.pairs[0]
		for _, x := range c.pairs[:b] {
			va = max(va, x)
		}
	}
	return (va + vb) / 2
}

// coordTask computes the coordinatewise direction of coordinates [lo, hi):
// Δx_iq = Σ_j w_j e_ijq [s_jq + (2/h_q)(x_iq − x_jq)], e_ijq =
// exp(−(x_iq − x_jq)²/h_q), over the active particles j.
type coordTask[T Float] struct {
	c   *Direction[T]
	dst []T
}

func (t *coordTask[T]) Do(lo, hi int) {
	c := t.c.coord
	act := t.c.act
	n, d, na := t.c.n, t.c.d, len(act)
	for q := lo; q < hi; q++ {
		if t.c.ctx.Err() != nil {
			return
		}
		xq := c.xt[q*n : (q+1)*n]
		sq := c.st[q*na : (q+1)*na]
		h := c.h[q]
		inv := 1 / h
		two := 2 / h
		for i := range n {
			xi := xq[i]
			var g float64
			for a, j := range act {
				e := xi - xq[j]
				u := e * e * inv
				if u > 700 {
					continue
				}
				g += c.wa[a] * math.Exp(-u) * (sq[a] + two*e)
			}
			t.dst[i*d+q] = T(g)
		}
	}
}

// coordDirection fills dst with the coordinatewise direction and returns
// the mean bandwidth.
func (t *Direction[T]) coordDirection(dst []T, x []float64, s []T, w []float64, bw kernel.Bandwidth) float64 {
	c := t.coord
	n, d, na := t.n, t.d, len(t.act)
	for j := range n {
		for q := range d {
			c.xt[q*n+j] = x[j*d+q]
		}
	}
	for a, j := range t.act {
		c.wa[a] = w[j]
		for q := range d {
			c.st[q*na+a] = float64(s[j*d+q])
		}
	}
	var hs float64
	for q := range d {
		if t.ctx.Err() != nil {
			return 0
		}
		med2 := 0.0
		if bw.NeedsMedian() {
			med2 = c.median2(c.xt[q*n : (q+1)*n])
		}
		c.h[q] = bw.FromMedian(med2, n)
		hs += c.h[q]
	}
	t.coordT.c, t.coordT.dst = t, dst
	parallel.For(d, 1, &t.coordT)
	t.coordT.dst = nil
	return hs / float64(d)
}
