package bnn

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/dstein/dstein/internal/parallel"
)

// gemmWork is the smallest product (multiply-adds) worth splitting.
const gemmWork = 1 << 16

// gemmShort and gemmLong bound the sides of a block: gonum runs a product
// serially when it has fewer than four 64×64 tiles, and starts goroutines of
// its own (and allocates) otherwise. Blocks of at most 64 × 192 stay serial.
const (
	gemmShort = 64
	gemmLong  = 192
)

// gemm computes C = op(A)·op(B) + beta·C for row-major matrices, with C of
// size m×n and inner dimension k. op(A) is A (m×k) or, when ta, Aᵀ with A
// stored k×m; likewise for B (k×n, or n×k when tb).
//
// C is cut into blocks of at most gemmShort × gemmLong that run in
// parallel. The blocks depend only on the shape, never on the number of
// cores, and every element of C is computed by one serial product over the
// full inner dimension, so results do not depend on scheduling. A gemm value
// is reused between calls so that a product does not allocate.
type gemm struct {
	ta, tb     bool
	m, n, k    int
	a, b, c    []float32
	beta       float32
	rowB, colB int // number of row and column blocks
}

func (g *gemm) run(ta, tb bool, m, n, k int, a, b []float32, beta float32, c []float32) {
	if m == 0 || n == 0 {
		return
	}
	rs, cs := gemmShort, gemmLong
	if m > n {
		rs, cs = gemmLong, gemmShort
	}
	*g = gemm{ta: ta, tb: tb, m: m, n: n, k: k, a: a, b: b, c: c, beta: beta,
		rowB: (m + rs - 1) / rs, colB: (n + cs - 1) / cs}
	if m*n*k < gemmWork {
		g.rowB, g.colB = 1, 1
	}
	if g.rowB*g.colB == 1 && m*n*k >= 2*gemmWork && max(m, n) > 1 {
		// One block, but worth two tasks: split the longer side in two.
		if m >= n {
			g.rowB = 2
		} else {
			g.colB = 2
		}
	}
	if parts := g.rowB * g.colB; parts == 1 {
		g.Do(0, 1)
	} else {
		parallel.For(parts, 1, g)
	}
	g.a, g.b, g.c = nil, nil, nil
}

// Do computes blocks [lo, hi) (a parallel task).
func (g *gemm) Do(lo, hi int) {
	for p := lo; p < hi; p++ {
		bi, bj := p/g.colB, p%g.colB
		g.block(bi*g.m/g.rowB, (bi+1)*g.m/g.rowB, bj*g.n/g.colB, (bj+1)*g.n/g.colB)
	}
}

// block computes C[r0:r1, c0:c1].
func (g *gemm) block(r0, r1, c0, c1 int) {
	k, m, n := g.k, g.m, g.n
	rows, cols := r1-r0, c1-c0
	var A blas32.General
	tA := blas.NoTrans
	if g.ta {
		// A is k×m; rows r0..r1 of op(A) are its columns r0..r1.
		A = blas32.General{Rows: k, Cols: rows, Stride: m, Data: g.a[r0:]}
		tA = blas.Trans
	} else {
		A = blas32.General{Rows: rows, Cols: k, Stride: k, Data: g.a[r0*k:]}
	}
	var B blas32.General
	tB := blas.NoTrans
	if g.tb {
		// B is n×k; columns c0..c1 of op(B) are its rows c0..c1.
		B = blas32.General{Rows: cols, Cols: k, Stride: k, Data: g.b[c0*k:]}
		tB = blas.Trans
	} else {
		B = blas32.General{Rows: k, Cols: cols, Stride: n, Data: g.b[c0:]}
	}
	C := blas32.General{Rows: rows, Cols: cols, Stride: n, Data: g.c[r0*n+c0:]}
	blas32.Gemm(tA, tB, 1, A, B, g.beta, C)
}
