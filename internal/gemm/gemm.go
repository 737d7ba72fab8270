package gemm

import (
	"github.com/dstein/dstein/internal/parallel"
)

// ABt holds the operands of one product. Reuse it across calls to avoid
// allocation: Mul takes a pointer and runs it as a parallel task.
type ABt struct {
	// C (m×n, leading dimension Ldc) receives A·Bᵀ; A is m×K with
	// leading dimension Lda, B is n×K with leading dimension Ldb.
	C, A, B       []float64
	M, N, K       int
	Ldc, Lda, Ldb int
	// Lower restricts the product to the entries C[i][j] with j < i, for
	// symmetric products such as X·Xᵀ (M must equal N).
	Lower bool
}

// Mul computes the product over the worker pool.
func (p *ABt) Mul() {
	blocks := (p.M + 3) / 4
	grain := 4
	if p.Lower {
		grain = 2
	}
	parallel.For(blocks, grain, p)
}

// Do computes the row blocks [lo, hi) (blocks of 4 rows).
func (p *ABt) Do(lo, hi int) {
	for blk := lo; blk < hi; blk++ {
		i0 := blk * 4
		i1 := min(i0+4, p.M)
		full := p.N // columns that whole 4×2 blocks may cover: [0, full)
		if p.Lower {
			full = i0
		}
		j := 0
		if i1-i0 == 4 {
			for ; j+2 <= full; j += 2 {
				p.kernel4x2(i0, j)
			}
		}
		for i := i0; i < i1; i++ {
			end := p.N
			if p.Lower {
				end = i
			}
			for jj := j; jj < end; jj++ {
				p.one(i, jj)
			}
		}
	}
}

func (p *ABt) one(i, j int) {
	a := p.A[i*p.Lda : i*p.Lda+p.K]
	b := p.B[j*p.Ldb : j*p.Ldb+p.K]
	b = b[:len(a)]
	var s float64
	for k, v := range a {
		s += v * b[k]
	}
	p.C[i*p.Ldc+j] = s
}

func (p *ABt) kernel4x2(i, j int) {
	K := p.K
	a0 := p.A[i*p.Lda : i*p.Lda+K]
	a1 := p.A[(i+1)*p.Lda : (i+1)*p.Lda+K]
	a2 := p.A[(i+2)*p.Lda : (i+2)*p.Lda+K]
	a3 := p.A[(i+3)*p.Lda : (i+3)*p.Lda+K]
	b0 := p.B[j*p.Ldb : j*p.Ldb+K]
	b1 := p.B[(j+1)*p.Ldb : (j+1)*p.Ldb+K]
	a1, a2, a3 = a1[:len(a0)], a2[:len(a0)], a3[:len(a0)]
	b0, b1 = b0[:len(a0)], b1[:len(a0)]
	var c00, c01, c10, c11, c20, c21, c30, c31 float64
	for k, x0 := range a0 {
		x1, x2, x3 := a1[k], a2[k], a3[k]
		y0, y1 := b0[k], b1[k]
		c00 += x0 * y0
		c01 += x0 * y1
		c10 += x1 * y0
		c11 += x1 * y1
		c20 += x2 * y0
		c21 += x2 * y1
		c30 += x3 * y0
		c31 += x3 * y1
	}
	c := p.C
	r0, r1, r2, r3 := i*p.Ldc+j, (i+1)*p.Ldc+j, (i+2)*p.Ldc+j, (i+3)*p.Ldc+j
	c[r0], c[r0+1] = c00, c01
	c[r1], c[r1+1] = c10, c11
	c[r2], c[r2+1] = c20, c21
	c[r3], c[r3+1] = c30, c31
}
