package svgd

import (
	"math"

	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/kernel"
)

// directKernel is the RBF workspace for float32 particles: a few particles
// (networks) with very many coordinates. Squared distances are summed
// directly in float64 over the coordinates, and the direction is computed
// coordinate block by coordinate block from the n×n matrix a_ij =
// k(x_i, x_j) w_j, so nothing of size n·d is allocated.
type directKernel struct {
	n       int
	sq      []float64 // n×n squared distances
	k       []float64 // n×n kernel
	pairs   []float64 // distinct-pair distances, for the median
	partial []float64 // per coordinate block: pair distances, then n·2 norms
	nd, nr  []float64
}

func newDirectKernel(n, d int) *directKernel {
	blocks := (d + directBlock - 1) / directBlock
	np := n * (n - 1) / 2
	dk := &directKernel{n: n, sq: make([]float64, n*n), k: make([]float64, n*n),
		partial: make([]float64, blocks*np), nd: make([]float64, blocks*n), nr: make([]float64, blocks*n)}
	if n > 1 {
		dk.pairs = make([]float64, np)
	}
	return dk
}

// directBlock is the coordinate block of the parallel passes.
const directBlock = 4096

// distTask sums the squared distances of every pair over the coordinate
// blocks [lo, hi) into per-block partial sums, combined in a fixed order.
type directDist[T Float] struct {
	c       *Direction[T]
	x       []T
	partial []float64 // blocks × n(n−1)/2
}

func (t *directDist[T]) Do(lo, hi int) {
	c := t.c
	n, d := c.n, c.d
	np := n * (n - 1) / 2
	for b := lo; b < hi; b++ {
		q0, q1 := b*directBlock, min((b+1)*directBlock, d)
		out := t.partial[b*np : (b+1)*np]
		k := 0
		for i := 1; i < n; i++ {
			xi := t.x[i*d+q0 : i*d+q1]
			for j := range i {
				xj := t.x[j*d+q0 : j*d+q1]
				var v float64
				for q, a := range xi {
					e := float64(a) - float64(xj[q])
					v += e * e
				}
				out[k] = v
				k++
			}
		}
	}
}

// directDir writes the direction of the coordinates of blocks [lo, hi).
type directDir[T Float] struct {
	c         *Direction[T]
	dst, x, s []T
	h         float64
	nd, nr    []float64 // blocks × n: per block sums of squares for Diagnose
}

func (t *directDir[T]) Do(lo, hi int) {
	c := t.c
	n, d := c.n, c.d
	two := 2 / t.h
	for b := lo; b < hi; b++ {
		q0, q1 := b*directBlock, min((b+1)*directBlock, d)
		for i := range n {
			ai := c.a[i*n : (i+1)*n]
			rs := c.rsum[i]
			var nd, nr float64
			for q := q0; q < q1; q++ {
				var drive, ax float64
				for j, aij := range ai {
					if aij == 0 {
						continue
					}
					drive += aij * float64(t.s[j*d+q])
					ax += aij * float64(t.x[j*d+q])
				}
				rep := two * (rs*float64(t.x[i*d+q]) - ax)
				t.dst[i*d+q] = T(drive + rep)
				nd += drive * drive
				nr += rep * rep
			}
			if t.nd != nil {
				t.nd[b*n+i], t.nr[b*n+i] = nd, nr
			}
		}
	}
}

// directDirection is Compute for float32 particles.
func (c *Direction[T]) directDirection(dst, x, s []T, w []float64, bw kernel.Bandwidth) float64 {
	n, d := c.n, c.d
	dk := c.dk
	blocks := (d + directBlock - 1) / directBlock
	np := n * (n - 1) / 2
	dist := &c.dDist
	dist.c, dist.x, dist.partial = c, x, dk.partial
	parallel.For(blocks, 1, dist)
	dist.x = nil
	k := 0
	for i := 1; i < n; i++ {
		for j := range i {
			var v float64
			for b := range blocks {
				v += dist.partial[b*np+k]
			}
			dk.sq[i*n+j], dk.sq[j*n+i] = v, v
			dk.pairs[k] = v
			k++
		}
	}
	med2 := 0.0
	if bw.NeedsMedian() && n > 1 {
		med2 = kernel.Median2(dk.pairs, n, bw.IncludeDiagonal)
	}
	h := bw.FromMedian(med2, n)
	for i := range n {
		var rs float64
		for j := range n {
			kv := 1.0
			if i != j {
				kv = math.Exp(-dk.sq[i*n+j] / h)
			}
			dk.k[i*n+j] = kv
			a := 0.0
			if w[j] > 0 {
				a = kv * w[j]
			}
			c.a[i*n+j] = a
			rs += a
		}
		c.rsum[i] = rs
	}
	dir := &c.dDir
	dir.c, dir.dst, dir.x, dir.s, dir.h = c, dst, x, s, h
	dir.nd, dir.nr = nil, nil
	if c.Diagnose {
		dir.nd, dir.nr = dk.nd, dk.nr
	}
	parallel.For(blocks, 1, dir)
	dir.dst, dir.x, dir.s = nil, nil, nil
	if c.Diagnose {
		c.repulsion, c.offdiag = 0, 0
		for i := range n {
			var nd, nr float64
			for b := range blocks {
				nd += dir.nd[b*n+i]
				nr += dir.nr[b*n+i]
			}
			if nd > 0 {
				c.repulsion += math.Sqrt(nr/nd) / float64(n)
			}
		}
		if n > 1 {
			for i := range n {
				for j := range n {
					if i != j {
						c.offdiag += dk.k[i*n+j] / float64(n*(n-1))
					}
				}
			}
		}
	}
	return h
}
