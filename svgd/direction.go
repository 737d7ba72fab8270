package svgd

import (
	"context"
	"fmt"
	"math"

	"github.com/dstein/dstein/internal/gemm"
	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/kernel"
)

// Float is the element type of particles: float64 for the sampler, float32
// for network weights.
type Float interface{ ~float32 | ~float64 }

// Kernel selects the kernel of the direction.
type Kernel int

const (
	// RBF is k(x, y) = exp(−‖x − y‖²/h) on R^d (the default).
	RBF Kernel = iota
	// Coordinatewise is the diagonal matrix-valued kernel
	// K(x, y) = diag_q exp(−(x_q − y_q)²/h_q): coordinate q of the
	// direction is Σ_j w_j [k_q s_jq + ∂_{x_jq} k_q], with h_q from the
	// bandwidth rule applied to coordinate q's own pairwise distances. Its
	// fixed points satisfy the Stein identity of every one-dimensional
	// conditional, and the kernel does not flatten as d grows.
	Coordinatewise
)

// String returns "rbf" or "coordinatewise".
func (k Kernel) String() string {
	if k == Coordinatewise {
		return "coordinatewise"
	}
	return "rbf"
}

// MarshalText implements encoding.TextMarshaler.
func (k Kernel) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText parses "rbf" or "coordinatewise".
func (k *Kernel) UnmarshalText(b []byte) error {
	switch string(b) {
	case "rbf":
		*k = RBF
	case "coordinatewise":
		*k = Coordinatewise
	default:
		return fmt.Errorf("unknown kernel %q: want rbf or coordinatewise", b)
	}
	return nil
}

// Direction is the workspace of the SVGD direction of n particles in R^d.
// It is not safe for concurrent use.
type Direction[T Float] struct {
	n, d int
	kind Kernel

	// Diagnose makes Compute also measure RepulsionRatio and
	// KernelOffDiagonal (RBF kernel only).
	Diagnose bool

	rbf   *kernel.RBF
	dk    *directKernel // float32 particles: pairwise work without n×d buffers
	xf    []float64     // float64 copy of the particles (unused)
	act   []int         // particles with positive weight
	sx    []float64     // |act|×2d: scores then positions of the active particles
	a     []float64     // n×|act| kernel times weights
	rsum  []float64     // row sums of a
	prod  []float64     // n×2d: a·[scores positions] of the active particles
	mul   gemm.ABt
	ratio []float64 // per particle ‖repulsive‖/‖driving‖ when Diagnose
	coord *coordState

	aT     aTask[T]
	dirT   dirTask[T]
	coordT coordTask[T]
	dDist  directDist[T]
	dDir   directDir[T]

	repulsion, offdiag float64

	ctx context.Context // the context of the Compute in progress
}

// New returns the workspace for n ≥ 1 particles in d ≥ 1 dimensions.
func New[T Float](n, d int, kind Kernel) *Direction[T] {
	c := &Direction[T]{n: n, d: d, kind: kind,
		act: make([]int, 0, n), ratio: make([]float64, n), ctx: context.Background()}
	var zero T
	_, f64 := any(zero).(float64)
	switch {
	case kind == Coordinatewise:
		c.coord = newCoordState(n, d)
		if !f64 {
			c.xf = make([]float64, n*d)
		}
	case !f64:
		// Network weights: few particles, very many coordinates. The
		// distances and the direction stream over the coordinates, so the
		// workspace is O(n²), not O(n·d).
		c.dk = newDirectKernel(n, d)
		c.a = make([]float64, n*n)
		c.rsum = make([]float64, n)
	default:
		c.rbf = kernel.NewRBF(n, d)
		c.sx = make([]float64, n*2*d)
		c.a = make([]float64, n*n)
		c.rsum = make([]float64, n)
		c.prod = make([]float64, n*2*d)
	}
	c.aT.c, c.dirT.c = c, c
	return c
}

// Kernel returns the n×n kernel matrix of the last Compute (RBF only; the
// caller must not modify it).
func (c *Direction[T]) Kernel() []float64 {
	switch {
	case c.rbf != nil:
		return c.rbf.K
	case c.dk != nil:
		return c.dk.k
	}
	return nil
}

// RepulsionRatio returns the mean over particles of ‖repulsive term‖ /
// ‖driving term‖ of the last Compute with Diagnose set (particles whose
// driving term is zero are counted as 0).
func (c *Direction[T]) RepulsionRatio() float64 { return c.repulsion }

// KernelOffDiagonal returns the mean of k(x_i, x_j) over pairs i ≠ j of the
// last Compute with Diagnose set (0 for n = 1).
func (c *Direction[T]) KernelOffDiagonal() float64 { return c.offdiag }

// Compute writes the direction of the particles x (row-major n×d) with
// surrogate scores s and normalised weights w into dst (n×d), and returns
// the bandwidth h (for Coordinatewise, the mean over coordinates).
// Particles of weight zero exert no force but are moved.
func (c *Direction[T]) Compute(dst, x, s []T, w []float64, bw kernel.Bandwidth) float64 {
	h, _ := c.ComputeContext(context.Background(), dst, x, s, w, bw)
	return h
}

// ComputeContext is Compute that looks at ctx as it goes (inside the
// kernel matrix's and the direction's products, between their phases, and
// per coordinate of the coordinatewise kernel) and returns ctx.Err(), with
// dst partly written, when ctx is canceled. The float32 path of network
// weights does not look at ctx.
func (c *Direction[T]) ComputeContext(ctx context.Context, dst, x, s []T, w []float64, bw kernel.Bandwidth) (float64, error) {
	c.ctx = ctx
	h := c.compute(dst, x, s, w, bw)
	c.ctx = context.Background()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return h, nil
}

func (c *Direction[T]) compute(dst, x, s []T, w []float64, bw kernel.Bandwidth) float64 {
	n, d := c.n, c.d
	if len(dst) != n*d || len(x) != n*d || len(s) != n*d || len(w) != n {
		panic(fmt.Sprintf("svgd: Compute with %d, %d, %d values and %d weights for %d particles of dimension %d", len(dst), len(x), len(s), len(w), n, d))
	}
	c.act = c.act[:0]
	for j, v := range w {
		if v > 0 {
			c.act = append(c.act, j)
		}
	}
	if c.dk != nil {
		return c.directDirection(dst, x, s, w, bw)
	}
	xf := c.positions(x)
	if c.coord != nil {
		return c.coordDirection(dst, xf, s, w, bw)
	}
	na := len(c.act)
	h, err := c.rbf.ComputeContext(c.ctx, xf, bw)
	if err != nil {
		return 0
	}
	c.aT.w, c.aT.s, c.aT.x = w, s, xf
	parallel.For(n, parallel.GrainWork(n, 2*float64(na+d)), &c.aT)
	c.aT.s, c.aT.x = nil, nil
	// prod = a · sx, sx held row by row (K×N): no transposition.
	c.mul = gemm.ABt{C: c.prod, A: c.a, B: c.sx, M: n, N: 2 * d, K: na, Ldc: 2 * d, Lda: na, Ldb: 2 * d, BKxN: true, Ctx: c.ctx}
	c.mul.Mul()
	c.mul.Ctx = nil
	if c.ctx.Err() != nil {
		c.aT.w = nil
		return 0
	}
	c.dirT.h, c.dirT.dst, c.dirT.x = h, dst, xf
	parallel.For(n, parallel.GrainWork(n, 4*float64(d)), &c.dirT)
	c.dirT.dst, c.dirT.x, c.aT.w = nil, nil, nil
	if c.Diagnose {
		c.repulsion, c.offdiag = 0, 0
		for _, r := range c.ratio {
			c.repulsion += r / float64(n)
		}
		if n > 1 {
			for i := range n {
				for j := range n {
					if i != j {
						c.offdiag += c.rbf.K[i*n+j] / float64(n*(n-1))
					}
				}
			}
		}
	}
	return h
}

// positions returns the particles as float64: x itself for float64
// particles, else a converted copy.
func (c *Direction[T]) positions(x []T) []float64 {
	if c.xf == nil {
		return any(x).([]float64)
	}
	for k, v := range x {
		c.xf[k] = float64(v)
	}
	return c.xf
}

// aTask fills row i of a with k(x_i, x_j) w_j over the active particles j,
// and its sum, and row i of sx with the scores and position of the i-th
// active particle (i < |act|).
type aTask[T Float] struct {
	c *Direction[T]
	w []float64
	s []T
	x []float64
}

func (t *aTask[T]) Do(lo, hi int) {
	c := t.c
	n, na, d := c.n, len(c.act), c.d
	for a := lo; a < min(hi, na); a++ {
		j := c.act[a]
		row := c.sx[a*2*d : (a+1)*2*d]
		if s, ok := any(t.s).([]float64); ok {
			copy(row[:d], s[j*d:(j+1)*d])
		} else {
			for q, v := range t.s[j*d : (j+1)*d] {
				row[q] = float64(v)
			}
		}
		copy(row[d:], t.x[j*d:(j+1)*d])
	}
	for i := lo; i < hi; i++ {
		ai := c.a[i*na : (i+1)*na]
		ki := c.rbf.K[i*n : (i+1)*n]
		var rsum float64
		for a, j := range c.act {
			v := ki[j] * t.w[j]
			ai[a] = v
			rsum += v
		}
		c.rsum[i] = rsum
	}
}

// dirTask turns the products into the direction of particles [lo, hi):
// Δx_i = Σ_j a_ij s_j + (2/h)(x_i Σ_j a_ij − Σ_j a_ij x_j).
type dirTask[T Float] struct {
	c   *Direction[T]
	h   float64
	dst []T
	x   []float64
}

func (t *dirTask[T]) Do(lo, hi int) {
	c := t.c
	d := c.d
	k := 2 / t.h
	for i := lo; i < hi; i++ {
		xi := t.x[i*d : (i+1)*d]
		gi := t.dst[i*d : (i+1)*d]
		pi := c.prod[i*2*d : (i+1)*2*d]
		rs := c.rsum[i]
		if c.Diagnose {
			var nd, nr float64
			for q := range d {
				r := k * (rs*xi[q] - pi[d+q])
				nd += pi[q] * pi[q]
				nr += r * r
				gi[q] = T(pi[q] + r)
			}
			c.ratio[i] = 0
			if nd > 0 {
				c.ratio[i] = math.Sqrt(nr / nd)
			}
			continue
		}
		for q := range d {
			gi[q] = T(pi[q] + k*(rs*xi[q]-pi[d+q]))
		}
	}
}
