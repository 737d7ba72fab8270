package gemm

import (
	"context"
	"math"
	"sync"

	"github.com/dstein/dstein/internal/parallel"
)

// ABt holds the operands of one product. Mul does not retain or modify the
// struct (it works on a copy), so an ABt may live on the stack.
type ABt struct {
	// C (m×n, leading dimension Ldc) receives A·Bᵀ; A is m×K with
	// leading dimension Lda, B is n×K with leading dimension Ldb.
	C, A, B       []float64
	M, N, K       int
	Ldc, Lda, Ldb int
	// Lower restricts the product to the entries C[i][j] with j < i, for
	// symmetric products such as X·Xᵀ (M must equal N).
	Lower bool
	// BKxN says that B is stored as its transpose, K rows of N with
	// leading dimension Ldb (entry (j, k) of the B above at B[k·Ldb+j]),
	// so that C = A times the K×N matrix B as stored: products with an
	// operand held row by row need not transpose it (the assembly path
	// packs it with contiguous copies). The bits are those of the product
	// with B transposed. Not with Lower or Packed.
	BKxN bool
	// Ctx, when not nil, stops the product early once it is canceled:
	// every parallel chunk (at most a few million multiply-adds) looks at
	// it first, and C is then left partly computed, for the caller, which
	// checks Ctx after Mul, to discard. Uncanceled, the bits are the same.
	Ctx context.Context
	// Serial runs the product on the calling goroutine, for callers that
	// already split their work over the cores (rows of particles, each
	// chunk with its own product); the bits are the same.
	Serial bool
	// Packed, when not nil, is PackB of this product's B (the same slice,
	// N, K and Ldb; Mul panics otherwise): the assembly path then uses
	// its panels instead of packing B again, for the many products that
	// share one B, such as each chunk of rows' product with a model's
	// weights. The bits are the same.
	Packed *PackedB
}

// canceled reports whether the product's context is canceled.
func (p *ABt) canceled() bool { return p.Ctx != nil && p.Ctx.Err() != nil }

// asmMinWork is the size (M·N·K) below which Mul uses the pure-Go kernels
// even where the assembly kernel is available: packing costs more than it
// saves on tiny products (measured: the pure-Go path wins at 4×4×4, the
// assembly path at 8×8×8). Both paths give the same bits, so this is only a
// matter of speed (tests set it to 0 to exercise the assembly path).
var asmMinWork = 256

// Mul computes the product over the worker pool.
func (p *ABt) Mul() {
	if p.M <= 0 || p.N <= 0 {
		return
	}
	p.check()
	if useAsm && p.K > 0 && p.M*p.N*p.K >= asmMinWork {
		p.mulAsm()
		return
	}
	j := getJob()
	j.prod = *p
	j.mode = modePureGo
	blocks := (p.M + 3) / 4
	grain := 4
	if p.Lower {
		grain = 2
	}
	parallel.ForIf(!p.Serial, blocks, grain, j)
	putJob(j)
}

// check panics, as a programming mistake, when a slice is too short for the
// shape: the assembly kernel does not check bounds itself.
func (p *ABt) check() {
	if p.K < 0 || p.Lower && p.M != p.N || p.BKxN && (p.Lower || p.Packed != nil) {
		panic("gemm: bad shape")
	}
	switch {
	case !p.Lower:
		_ = p.C[(p.M-1)*p.Ldc+p.N-1]
	case p.M > 1:
		_ = p.C[(p.M-1)*p.Ldc+p.M-2]
	}
	if p.K > 0 {
		_ = p.A[(p.M-1)*p.Lda+p.K-1]
		if p.BKxN {
			_ = p.B[(p.K-1)*p.Ldb+p.N-1]
		} else {
			_ = p.B[(p.N-1)*p.Ldb+p.K-1]
		}
	}
}

// Do computes the row blocks [lo, hi) (blocks of 4 rows) with the pure-Go
// kernels.
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
				if p.BKxN {
					p.kernel4x2KxN(i0, j)
				} else {
					p.kernel4x2(i0, j)
				}
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

// one computes the single entry C[i][j].
func (p *ABt) one(i, j int) {
	a := p.A[i*p.Lda : i*p.Lda+p.K]
	if p.BKxN {
		var s float64
		for k, v := range a {
			s = math.FMA(v, p.B[k*p.Ldb+j], s)
		}
		p.C[i*p.Ldc+j] = s
		return
	}
	b := p.B[j*p.Ldb : j*p.Ldb+p.K]
	b = b[:len(a)]
	var s float64
	for k, v := range a {
		s = math.FMA(v, b[k], s)
	}
	p.C[i*p.Ldc+j] = s
}

// kernel4x2 computes the 4×2 block of C at (i, j), one accumulator per
// entry. The 4×2 block keeps 8 accumulators and 6 operands in the 15
// floating-point registers Go allocates on amd64; larger blocks spill.
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
		c00 = math.FMA(x0, y0, c00)
		c01 = math.FMA(x0, y1, c01)
		c10 = math.FMA(x1, y0, c10)
		c11 = math.FMA(x1, y1, c11)
		c20 = math.FMA(x2, y0, c20)
		c21 = math.FMA(x2, y1, c21)
		c30 = math.FMA(x3, y0, c30)
		c31 = math.FMA(x3, y1, c31)
	}
	c := p.C
	r0, r1, r2, r3 := i*p.Ldc+j, (i+1)*p.Ldc+j, (i+2)*p.Ldc+j, (i+3)*p.Ldc+j
	c[r0], c[r0+1] = c00, c01
	c[r1], c[r1+1] = c10, c11
	c[r2], c[r2+1] = c20, c21
	c[r3], c[r3+1] = c30, c31
}

// kernel4x2KxN is kernel4x2 for a B stored K×N (BKxN): the two entries of
// B of each step are adjacent.
func (p *ABt) kernel4x2KxN(i, j int) {
	K := p.K
	a0 := p.A[i*p.Lda : i*p.Lda+K]
	a1 := p.A[(i+1)*p.Lda : (i+1)*p.Lda+K]
	a2 := p.A[(i+2)*p.Lda : (i+2)*p.Lda+K]
	a3 := p.A[(i+3)*p.Lda : (i+3)*p.Lda+K]
	a1, a2, a3 = a1[:len(a0)], a2[:len(a0)], a3[:len(a0)]
	var c00, c01, c10, c11, c20, c21, c30, c31 float64
	for k, x0 := range a0 {
		x1, x2, x3 := a1[k], a2[k], a3[k]
		y := p.B[k*p.Ldb+j : k*p.Ldb+j+2]
		y0, y1 := y[0], y[1]
		c00 = math.FMA(x0, y0, c00)
		c01 = math.FMA(x0, y1, c01)
		c10 = math.FMA(x1, y0, c10)
		c11 = math.FMA(x1, y1, c11)
		c20 = math.FMA(x2, y0, c20)
		c21 = math.FMA(x2, y1, c21)
		c30 = math.FMA(x3, y0, c30)
		c31 = math.FMA(x3, y1, c31)
	}
	c := p.C
	r0, r1, r2, r3 := i*p.Ldc+j, (i+1)*p.Ldc+j, (i+2)*p.Ldc+j, (i+3)*p.Ldc+j
	c[r0], c[r0+1] = c00, c01
	c[r1], c[r1+1] = c10, c11
	c[r2], c[r2+1] = c20, c21
	c[r3], c[r3+1] = c30, c31
}

// job is one call of Mul as a parallel task: a copy of the operands and the
// packing buffers. Jobs are recycled through a free list that never drops
// them, so Mul allocates nothing once the buffers have grown to the largest
// product seen (at most one job per concurrent call of Mul).
type job struct {
	prod   ABt
	mode   int
	jobAsm // the assembly path's state (empty where there is none)
}

const (
	modePureGo = iota // Do computes row blocks of 4 with the pure-Go kernels
	modePack          // Do packs panels of B (assembly path)
	modeKernel        // Do computes row blocks with the assembly kernel
)

func (j *job) Do(lo, hi int) {
	if j.prod.canceled() {
		return
	}
	switch j.mode {
	case modePureGo:
		j.prod.Do(lo, hi)
	default:
		j.doAsm(lo, hi)
	}
}

var jobs struct {
	sync.Mutex
	free []*job
}

func getJob() *job {
	jobs.Lock()
	defer jobs.Unlock()
	if n := len(jobs.free); n > 0 {
		j := jobs.free[n-1]
		jobs.free = jobs.free[:n-1]
		return j
	}
	return new(job)
}

func putJob(j *job) {
	j.prod = ABt{}
	jobs.Lock()
	jobs.free = append(jobs.free, j)
	jobs.Unlock()
}

// bufs is a free list of scratch buffers (each worker's packed rows of A),
// kept like the jobs.
var bufs struct {
	sync.Mutex
	free []*[]float64
}

// getBuf returns a buffer of at least n elements.
func getBuf(n int) *[]float64 {
	bufs.Lock()
	var b *[]float64
	if k := len(bufs.free); k > 0 {
		b = bufs.free[k-1]
		bufs.free = bufs.free[:k-1]
	}
	bufs.Unlock()
	if b == nil {
		b = new([]float64)
	}
	if cap(*b) < n {
		*b = make([]float64, n)
	}
	*b = (*b)[:n]
	return b
}

func putBuf(b *[]float64) {
	bufs.Lock()
	bufs.free = append(bufs.free, b)
	bufs.Unlock()
}

// PackedB is an operand B packed once for the assembly kernel, for many
// products that share it (Mul's Packed). It is read-only once made, so
// products on many goroutines may share it.
type PackedB struct {
	b         []float64
	n, k, ldb int
	wide      bool        // packed for the AVX-512 kernel (else AVX2)
	ncb, kc   int         // the blocks' columns and depth
	blocks    [][]float64 // the panels of each block of columns and slice of k, in Mul's order
}

// PackB packs B (n×k, leading dimension ldb) for products A·Bᵀ with any
// A. It keeps b, which must not change while the PackedB is used; where
// there is no assembly kernel it packs nothing and products pack as
// usual. It holds about 8·n·k bytes (n rounded up to the kernel's width).
func PackB(b []float64, n, k, ldb int) *PackedB {
	pb := &PackedB{b: b, n: n, k: k, ldb: ldb}
	if useAsm && n > 0 && k > 0 {
		_ = b[(n-1)*ldb+k-1]
		packAll(pb)
	}
	return pb
}

// check panics, as a programming mistake, when pb is not p's B.
func (pb *PackedB) check(p *ABt) {
	if p.BKxN || pb.n != p.N || pb.k != p.K || pb.ldb != p.Ldb || len(pb.b) == 0 || len(p.B) == 0 || &pb.b[0] != &p.B[0] {
		panic("gemm: Packed does not hold this product's B")
	}
}
