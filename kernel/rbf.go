package kernel

import (
	"context"
	"math"

	"github.com/dstein/dstein/internal/gemm"
	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/internal/vexp"
)

// RBF holds the workspace for the kernel matrix of n points in R^d. Create
// it with NewRBF and reuse it across iterations; it is not safe for
// concurrent use.
type RBF struct {
	n, d int
	// K is the n×n kernel matrix, row-major and symmetric, filled by
	// Compute.
	K     []float64
	norms []float64
	pairs []float64 // the n(n−1)/2 squared distances, reordered by the median
	x     []float64
	h     float64
	med2  float64
	tasks rbfTasks
	gram  gemm.ABt
}

type rbfTasks struct {
	norms  normsTask
	dist   distTask
	exp    expTask
	mirror mirrorTask
}

// NewRBF returns a workspace for n ≥ 1 points in d dimensions.
func NewRBF(n, d int) *RBF {
	r := &RBF{n: n, d: d, norms: make([]float64, n), K: make([]float64, n*n)}
	if n > 1 {
		r.pairs = make([]float64, n*(n-1)/2)
	}
	r.tasks = rbfTasks{normsTask{r}, distTask{r}, expTask{r}, mirrorTask{r}}
	r.gram = gemm.ABt{C: r.K, M: n, N: n, K: d, Ldc: n, Lda: d, Ldb: d, Lower: true}
	return r
}

// H returns the bandwidth chosen by the last Compute.
func (r *RBF) H() float64 { return r.h }

// Median2 returns the squared median distance found by the last Compute
// (0 for RuleFixed).
func (r *RBF) Median2() float64 { return r.med2 }

// Compute fills r.K with exp(−‖x_i − x_j‖²/h) for the n points stored
// row-major in x (length n·d), chooses h by bw, and returns h. Squared
// distances come from ‖x_i‖² + ‖x_j‖² − 2 x_i·x_j, clamped at 0.
func (r *RBF) Compute(x []float64, bw Bandwidth) float64 {
	h, _ := r.ComputeContext(context.Background(), x, bw)
	return h
}

// ComputeContext is Compute that looks at ctx inside the product of the
// points (gemm.ABt.Ctx) and between its phases, and returns ctx.Err(),
// with K partly computed, when ctx is canceled.
func (r *RBF) ComputeContext(ctx context.Context, x []float64, bw Bandwidth) (float64, error) {
	n := r.n
	r.x = x
	defer func() { r.x, r.gram.A, r.gram.B, r.gram.Ctx = nil, nil, nil, nil }()
	// Inner products x_i·x_j (j < i) into the lower triangle of K, then
	// squared distances in place.
	r.gram.A, r.gram.B, r.gram.Ctx = x, x, ctx
	r.gram.Mul()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	// Each task's grain holds parallel.MinWork: a row's norm costs 2d, its
	// distances and their copy about n (half a row), its exponentials
	// about 10 operations each.
	parallel.For(n, parallel.GrainWork(n, 2*float64(r.d)), &r.tasks.norms)
	parallel.For(n, parallel.GrainWork(n, float64(n)), &r.tasks.dist)
	r.med2 = 0
	if bw.NeedsMedian() && n > 1 {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		r.med2 = r.median2(bw.IncludeDiagonal)
	}
	r.h = bw.FromMedian(r.med2, n)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	parallel.For(n, parallel.GrainWork(n, 5*float64(n)), &r.tasks.exp)
	parallel.For((n+tile-1)/tile, parallel.GrainWork((n+tile-1)/tile, float64(tile*n)), &r.tasks.mirror)
	return r.h, nil
}

type normsTask struct{ r *RBF }

func (t normsTask) Do(lo, hi int) {
	r := t.r
	d := r.d
	for i := lo; i < hi; i++ {
		var s float64
		for _, v := range r.x[i*d : (i+1)*d] {
			s += v * v
		}
		r.norms[i] = s
	}
}

// distTask writes the squared distances of row i's lower triangle into K
// and into pairs.
type distTask struct{ r *RBF }

func (t distTask) Do(lo, hi int) {
	r := t.r
	for i := lo; i < hi; i++ {
		ni := r.norms[i]
		row := r.K[i*r.n : i*r.n+i]
		for j, g := range row {
			v := ni + r.norms[j] - 2*g
			if v < 0 {
				v = 0
			}
			row[j] = v
		}
		copy(r.pairs[i*(i-1)/2:], row)
	}
}

// expTask fills the lower triangle and diagonal of K.
type expTask struct{ r *RBF }

func (t expTask) Do(lo, hi int) {
	r := t.r
	n := r.n
	inv := -1 / r.h
	for i := lo; i < hi; i++ {
		row := r.K[i*n : i*n+i+1]
		for j := range i {
			if a := row[j] * inv; a > -746 {
				row[j] = a
			} else {
				row[j] = math.Inf(-1) // exp underflows, or a is NaN: 0, as before
			}
		}
		vexp.Exp(row[:i], row[:i]) // math.Exp's bits, four at a time
		row[i] = 1
	}
}

const tile = 32

// mirrorTask copies the lower triangle to the upper one, one row of tiles
// per index: tile row I writes the tiles (J, I) for J ≤ I, which no other
// index touches.
type mirrorTask struct{ r *RBF }

func (t mirrorTask) Do(lo, hi int) {
	r := t.r
	n := r.n
	for I := lo; I < hi; I++ {
		i0, i1 := I*tile, min((I+1)*tile, n)
		for j0 := 0; j0 < i1; j0 += tile {
			j1 := min(j0+tile, n)
			for i := i0; i < i1; i++ {
				for j := j0; j < min(j1, i); j++ {
					r.K[j*n+i] = r.K[i*n+j]
				}
			}
		}
	}
}

// median2 returns the median of the squared pairwise distances (see
// Median2).
func (r *RBF) median2(includeDiagonal bool) float64 {
	return Median2(r.pairs, r.n, includeDiagonal)
}

// Median2 returns the median of the n(n−1)/2 squared distances of the
// distinct pairs in pairs (reordered), or, when includeDiagonal is set, of
// all n² ordered pairs (each distinct pair twice and n zeros). For an even
// count it is the mean of the two middle values, as numpy's median of the
// squared distance matrix in the common SVGD code.
func Median2(pairs []float64, n int, includeDiagonal bool) float64 {
	p := pairs
	m := len(p)
	// 0-based ranks of the two middle elements in the multiset, mapped to
	// ranks among the distinct pairs (−1 for one of the n zeros).
	var a, b int
	if includeDiagonal {
		N := n * n
		toPair := func(k int) int {
			if k < n {
				return -1
			}
			return (k - n) / 2
		}
		a, b = toPair((N-1)/2), toPair(N/2)
	} else {
		a, b = (m-1)/2, m/2
	}
	va, vb := 0.0, 0.0
	if b >= 0 {
		// a is b, b − 1, or −1 (one of the n zeros, va = 0).
		va, vb = ranks(p, b, a >= 0 && a < b)
		if a == b {
			va = vb
		}
	}
	return (va + vb) / 2
}

// Select partially sorts a so that a[k] is the element of rank k (0-based),
// everything before it is ≤ a[k] and everything after is ≥ a[k], and returns
// a[k]. It is deterministic (median-of-three pivots, no randomness) and runs
// in expected linear time.
func Select(a []float64, k int) float64 {
	lo, hi := 0, len(a)-1
	for hi > lo {
		if hi-lo < 16 {
			for i := lo + 1; i <= hi; i++ {
				for j := i; j > lo && a[j] < a[j-1]; j-- {
					a[j], a[j-1] = a[j-1], a[j]
				}
			}
			break
		}
		mid := lo + (hi-lo)/2
		if a[mid] < a[lo] {
			a[mid], a[lo] = a[lo], a[mid]
		}
		if a[hi] < a[lo] {
			a[hi], a[lo] = a[lo], a[hi]
		}
		if a[hi] < a[mid] {
			a[hi], a[mid] = a[mid], a[hi]
		}
		pivot := a[mid]
		i, j := lo, hi
		for i <= j {
			for a[i] < pivot {
				i++
			}
			for a[j] > pivot {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	return a[k]
}
