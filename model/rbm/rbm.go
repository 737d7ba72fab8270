package rbm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/dstein/dstein/internal/gemm"
	"github.com/dstein/dstein/internal/numeric"
	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/internal/vec"
	"github.com/dstein/dstein/internal/vexp"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
)

// Why one file of about 680 lines: the RBM's density, free energy, conditionals, exact
// hidden-unit enumeration and generators share its weight layout and scratch buffers.

// RBM is a Bernoulli RBM with ±1 units. It is immutable and safe for
// concurrent use.
type RBM struct {
	d, m int
	// cosh(2W) and sinh(2W) for trackers, built on first use.
	flipOnce     sync.Once
	coshW, sinhW []float64
	// wt holds Wᵀ row-major: wt[k*d+i] = W[i][k], so that the weights of
	// hidden unit k are contiguous.
	wt []float64
	// wtp is wt packed for the matrix kernel once, for the batches'
	// products of every chunk of rows with Wᵀ (built on first use).
	wtpOnce sync.Once
	wtp     *gemm.PackedB
	b, c    []float64
	// binary marks an RBM read with {0, 1} units (NewBinary): its
	// variables report the state values 0 and 1.
	binary bool
}

var (
	_ model.Model       = (*RBM)(nil)
	_ model.Conditional = (*RBM)(nil)
	_ model.Delta       = (*RBM)(nil)
	_ model.Relaxed     = (*RBM)(nil)
	_ model.Incremental = (*RBM)(nil)

	_ model.RelaxedIncremental = (*RBM)(nil)
)

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// checkShapes returns the visible and hidden sizes of W (d rows of M
// entries), and refuses an empty or ragged W and biases of other lengths
// (nil biases are zeros).
func checkShapes(W [][]float64, b, c []float64) (d, m int, err error) {
	d = len(W)
	if d == 0 {
		return 0, 0, fmt.Errorf("rbm has no visible units (W has no rows)")
	}
	m = len(W[0])
	for i, row := range W {
		if len(row) != m {
			return 0, 0, fmt.Errorf("rbm W row %d has %d entries, row 0 has %d; W must be visible × hidden", i, len(row), m)
		}
	}
	if b != nil && len(b) != d {
		return 0, 0, fmt.Errorf("rbm has %d visible units (rows of W) but b has %d entries", d, len(b))
	}
	if c != nil && len(c) != m {
		return 0, 0, fmt.Errorf("rbm has %d hidden units (columns of W) but c has %d entries", m, len(c))
	}
	return d, m, nil
}

// New returns the RBM with weights W (d rows of M entries), visible biases b
// (length d) and hidden biases c (length M). b and c may be nil for zeros;
// M may be zero (then p* is a product of independent spins).
func New(W [][]float64, b, c []float64) (*RBM, error) {
	d, m, err := checkShapes(W, b, c)
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = make([]float64, d)
	}
	if c == nil {
		c = make([]float64, m)
	}
	r := &RBM{d: d, m: m, wt: make([]float64, d*m), b: append([]float64(nil), b...), c: append([]float64(nil), c...)}
	for i, row := range W {
		for k, w := range row {
			if !finite(w) {
				return nil, fmt.Errorf("rbm W[%d][%d] is %v; want a finite number", i, k, w)
			}
			r.wt[k*d+i] = w
		}
	}
	for i, v := range b {
		if !finite(v) {
			return nil, fmt.Errorf("rbm b[%d] is %v; want a finite number", i, v)
		}
	}
	for k, v := range c {
		if !finite(v) {
			return nil, fmt.Errorf("rbm c[%d] is %v; want a finite number", k, v)
		}
	}
	// log p*(z) = bᵀz + Σ_k log 2cosh(W_kᵀz + c_k) ≤ Σ|b| + Σ_k (Σ_i |W_ik| + |c_k| + log 2).
	bound := 0.0
	for _, v := range r.b {
		bound += math.Abs(v)
	}
	for k := range m {
		bound += math.Abs(r.c[k]) + math.Ln2
		for _, w := range r.wt[k*d : (k+1)*d] {
			bound += math.Abs(w)
		}
	}
	if err := model.CheckLogBound("the RBM", bound); err != nil {
		return nil, err
	}
	return r, nil
}

// Random returns an RBM with d visible and m hidden units whose parameters
// are drawn from rng.NewKey(seed).For(rng.Model).Rand() in this order: W[i][k] =
// wStd·N(0,1) for i = 0..d−1 (outer) and k = 0..m−1 (inner), then b[i] =
// biasStd·N(0,1) for each i, then c[k] = biasStd·N(0,1) for each k, each
// normal from (*rand.Rand).NormFloat64. A seed therefore names the same model
// in the CLI, the library and the experiments.
func Random(d, m int, wStd, biasStd float64, seed uint64) (*RBM, error) {
	W, b, c, err := RandomParams(d, m, wStd, biasStd, seed)
	if err != nil {
		return nil, err
	}
	return New(W, b, c)
}

// RandomParams returns the parameters that Random draws, for New or
// NewBinary.
func RandomParams(d, m int, wStd, biasStd float64, seed uint64) (W [][]float64, b, c []float64, err error) {
	if d < 1 {
		return nil, nil, nil, fmt.Errorf("rbm needs at least one visible unit, got %d", d)
	}
	if m < 0 {
		return nil, nil, nil, fmt.Errorf("rbm hidden units must be ≥ 0, got %d", m)
	}
	if !finite(wStd) || wStd < 0 || !finite(biasStd) || biasStd < 0 {
		return nil, nil, nil, fmt.Errorf("rbm w_std and bias_std must be finite and ≥ 0, got %v and %v", wStd, biasStd)
	}
	r := rng.NewKey(seed).For(rng.Model).Rand()
	W = make([][]float64, d)
	for i := range W {
		W[i] = make([]float64, m)
		for k := range W[i] {
			W[i][k] = wStd * r.NormFloat64()
		}
	}
	b = make([]float64, d)
	for i := range b {
		b[i] = biasStd * r.NormFloat64()
	}
	c = make([]float64, m)
	for k := range c {
		c[k] = biasStd * r.NormFloat64()
	}
	return W, b, c, nil
}

// Dim returns the number of visible units d.
func (r *RBM) Dim() int { return r.d }

// Hidden returns the number of hidden units M.
func (r *RBM) Hidden() int { return r.m }

// States returns {−1, +1}, or {0, 1} for an RBM made by NewBinary. State
// index 0 is −1 (or 0) and index 1 is +1 (or 1) either way.
func (r *RBM) States(int) []float64 {
	if r.binary {
		return Bits
	}
	return model.Spins
}

// Weight returns W[i][k] of the ±1 form (for an RBM made by NewBinary, the
// converted weight W'[i][k]/4).
func (r *RBM) Weight(i, k int) float64 { return r.wt[k*r.d+i] }

// HiddenWeights returns the weights of hidden unit k (column k of W, length
// d). The caller must not modify the slice.
func (r *RBM) HiddenWeights(k int) []float64 { return r.wt[k*r.d : (k+1)*r.d] }

// VisibleBias returns b of the ±1 form (converted for NewBinary). The
// caller must not modify the slice.
func (r *RBM) VisibleBias() []float64 { return r.b }

// HiddenBias returns c of the ±1 form (converted for NewBinary). The caller
// must not modify the slice.
func (r *RBM) HiddenBias() []float64 { return r.c }

// preact returns c_k + Σ_i W_ik z_i.
func (r *RBM) preact(z []int, k int) float64 {
	a := r.c[k]
	for i, w := range r.wt[k*r.d : (k+1)*r.d] {
		a += w * model.Spin(z[i])
	}
	return a
}

// LogProb returns bᵀz + Σ_k log 2cosh((Wᵀz)_k + c_k).
func (r *RBM) LogProb(z []int) float64 {
	var f float64
	for i, bi := range r.b {
		f += bi * model.Spin(z[i])
	}
	for k := range r.m {
		f += numeric.Log2Cosh(r.preact(z, k))
	}
	return f
}

// LogConditional writes log p*(z) with z_i = −1 and with z_i = +1, up to a
// common constant. It costs O(dM).
func (r *RBM) LogConditional(dst []float64, z []int, i int) []float64 {
	var lo, hi float64
	si := model.Spin(z[i])
	for k := range r.m {
		w := r.wt[k*r.d+i]
		a := r.preact(z, k) - w*si
		lo += numeric.Log2Cosh(a - w)
		hi += numeric.Log2Cosh(a + w)
	}
	return append(dst[:0], lo-r.b[i], hi+r.b[i])
}

// DeltaLogProb returns the change of log p* when unit i takes state s.
func (r *RBM) DeltaLogProb(z []int, i, s int) float64 {
	if z[i] == s {
		return 0
	}
	var buf [2]float64
	lc := r.LogConditional(buf[:0], z, i)
	return lc[s] - lc[z[i]]
}

// RelaxedLogProb evaluates the free energy at soft spins u_i = m_i+ − m_i−:
// bᵀu + Σ_k log 2cosh((Wᵀu)_k + c_k), with gradient b_i + Σ_k W_ik
// tanh((Wᵀu)_k + c_k) with respect to u_i (and its negative with respect to
// m_i−).
func (r *RBM) RelaxedLogProb(grad, mem []float64) float64 {
	var f float64
	for i, bi := range r.b {
		f += bi * (mem[2*i+1] - mem[2*i])
		if grad != nil {
			grad[2*i+1] = bi
		}
	}
	for k := range r.m {
		wk := r.wt[k*r.d : (k+1)*r.d]
		a := r.c[k]
		for i, w := range wk {
			a += w * (mem[2*i+1] - mem[2*i])
		}
		f += numeric.Log2Cosh(a)
		if grad != nil {
			t := math.Tanh(a)
			for i, w := range wk {
				grad[2*i+1] += t * w
			}
		}
	}
	if grad != nil {
		for i := range r.d {
			grad[2*i] = -grad[2*i+1]
		}
	}
	return f
}

// tracker keeps one chain's configuration, its hidden preactivations
// a_k = c_k + Σ_i W_ik z_i and tanh(a_k), so that a one-unit change costs
// O(M) with one logarithm per hidden unit: flipping z_i shifts a_k by
// δ = ±2W_ik and log 2cosh(a+δ) − log 2cosh(a) = log(cosh δ + tanh(a)·sinh δ).
// For |δ| > maxFlipShift the direct difference is used instead, where the
// identity would cancel.
type tracker struct {
	r *RBM
	z []int
	a []float64
	t []float64
}

const maxFlipShift = 3

// flipTables returns cosh(2W_ik) and sinh(2W_ik), laid out like wt.
func (r *RBM) flipTables() (ch, sh []float64) {
	r.flipOnce.Do(func() {
		r.coshW = make([]float64, len(r.wt))
		r.sinhW = make([]float64, len(r.wt))
		for k, w := range r.wt {
			r.coshW[k] = math.Cosh(2 * w)
			r.sinhW[k] = math.Sinh(2 * w)
		}
	})
	return r.coshW, r.sinhW
}

// NewTracker returns a tracker at a copy of z.
func (r *RBM) NewTracker(z []int) model.Tracker {
	t := &tracker{r: r, z: make([]int, r.d), a: make([]float64, r.m), t: make([]float64, r.m)}
	r.flipTables()
	t.Reset(z)
	return t
}

func (t *tracker) State() []int { return t.z }

func (t *tracker) Reset(z []int) {
	copy(t.z, z)
	for k := range t.a {
		t.a[k] = t.r.preact(t.z, k)
	}
	vexp.Tanh(t.t, t.a)
}

func (t *tracker) Set(i, s int) {
	if t.z[i] == s {
		return
	}
	dz := model.Spin(s) - model.Spin(t.z[i])
	for k := range t.a {
		t.a[k] += t.r.wt[k*t.r.d+i] * dz
	}
	vexp.Tanh(t.t, t.a)
	t.z[i] = s
}

// LogConditional writes log p*(z) with z_i = −1 and +1 relative to the
// current state (which gets 0), in O(M).
func (t *tracker) LogConditional(dst []float64, i int) []float64 {
	dst = append(dst[:0], 0, 0)
	other := 1 - t.z[i]
	dst[other] = t.DeltaLogProb(i, other)
	return dst
}

// DeltaLogProb returns the change of log p* when unit i takes state s, in
// O(M).
func (t *tracker) DeltaLogProb(i, s int) float64 { return t.r.deltaFlip(t.z, t.a, t.t, i, s) }

// deltaFlip returns the change of log p* when unit i of z takes state s,
// given the preactivations a of z and their tanh t, in O(M).
func (r *RBM) deltaFlip(z []int, a, t []float64, i, s int) float64 {
	if z[i] == s {
		return 0
	}
	dz := model.Spin(s) - model.Spin(z[i]) // ±2
	f := r.b[i] * dz
	// The logarithms of a block of hidden units are taken together
	// (vexp.Log, math.Log's bits), then added in order.
	var buf [flipBlock]float64
	for k0 := 0; k0 < len(a); k0 += flipBlock {
		args := buf[:min(flipBlock, len(a)-k0)]
		for j := range args {
			idx := (k0+j)*r.d + i
			sh := r.sinhW[idx]
			if dz < 0 {
				sh = -sh
			}
			args[j] = r.coshW[idx] + t[k0+j]*sh
		}
		vexp.Log(args, args)
		for j, l := range args {
			k := k0 + j
			if w := r.wt[k*r.d+i]; math.Abs(2*w) > maxFlipShift {
				f += numeric.Log2Cosh(a[k]+w*dz) - numeric.Log2Cosh(a[k])
				continue
			}
			f += l
		}
	}
	return f
}

// flipBlock is the number of hidden units whose logarithms deltaFlip takes
// together.
const flipBlock = 64

// gradTracker keeps one chain's configuration, its hidden preactivations
// a = Wᵀz + c with their tanh, and the relaxed gradient b + W tanh(a) (with
// respect to u; its negative for the memberships of −1). A Try updates the
// M preactivations in O(M) but, since every tanh changes, rewrites the
// whole gradient in O(dM), in the order of RelaxedLogProb; DeltaLogProb
// costs O(M) with one logarithm per 64 hidden units. The preactivations
// are updated in place, so every d commits they and the gradient are
// recomputed from scratch, which bounds their rounding error by that of d
// additions. (The gradient at a configuration therefore depends, in its
// last bits, on the path to it; the other models' trackers are exact.)
type gradTracker struct {
	r       *RBM
	z       []int
	a, t    []float64 // preactivations and their tanh at z
	a2, t2  []float64 // the same at the tried configuration
	g, g2   []float64 // gradient at z and at the tried configuration
	u       []float64 // scratch for gradient
	all     []int     // 0, 1, …, d−1
	ti, ts  int       // the pending Try (ti < 0: none)
	commits int       // commits since a and g were last computed from scratch
}

// NewGradientTracker returns a gradient tracker at a copy of z.
func (r *RBM) NewGradientTracker(z []int) model.GradientTracker {
	r.flipTables()
	t := &gradTracker{
		r: r, z: make([]int, r.d),
		a: make([]float64, r.m), t: make([]float64, r.m), a2: make([]float64, r.m), t2: make([]float64, r.m),
		g: make([]float64, 2*r.d), g2: make([]float64, 2*r.d), u: make([]float64, r.d), all: make([]int, r.d), ti: -1,
	}
	for i := range t.all {
		t.all[i] = i
	}
	t.Reset(z)
	return t
}

func (t *gradTracker) State() []int    { return t.z }
func (t *gradTracker) Grad() []float64 { return t.g }
func (t *gradTracker) DeltaLogProb(i, s int) float64 {
	return t.r.deltaProduct(t.z, t.a, t.t, i, s)
}

// deltaProduct is deltaFlip with one logarithm per 64 hidden units: the
// factors cosh 2W_ik ± tanh(a_k) sinh 2W_ik lie in [e^−3, e^3] where the
// identity is used, so the product of 64 of them neither overflows nor
// underflows, and its logarithm differs from the sum of theirs by rounding
// (at most about 64 ulp of the product: below 1e-14).
func (r *RBM) deltaProduct(z []int, a, t []float64, i, s int) float64 {
	if z[i] == s {
		return 0
	}
	dz := model.Spin(s) - model.Spin(z[i]) // ±2
	f := r.b[i] * dz
	prod, n := 1.0, 0
	for k, ak := range a {
		idx := k*r.d + i
		w := r.wt[idx]
		if math.Abs(2*w) > maxFlipShift {
			f += numeric.Log2Cosh(ak+w*dz) - numeric.Log2Cosh(ak)
			continue
		}
		sh := r.sinhW[idx]
		if dz < 0 {
			sh = -sh
		}
		prod *= r.coshW[idx] + t[k]*sh
		if n++; n == 64 {
			f += math.Log(prod)
			prod, n = 1, 0
		}
	}
	return f + math.Log(prod)
}

// gradient writes b + W th into g[2i+1] and its negative into g[2i],
// using u (length d) as scratch. Each entry adds the hidden units' terms
// in order k = 0, 1, …, as RelaxedLogProb does; four hidden units are
// taken per pass over u.
func (r *RBM) gradient(g, th, u []float64) {
	d := r.d
	u = u[:d]
	copy(u, r.b)
	k := 0
	for ; k+4 <= len(th); k += 4 {
		// u[i] + t_k w_k[i] + … for four units at a time, each product
		// and sum rounded on its own (vec: AVX2 lanes, the same bits).
		vec.AddMul4(u, (*[4]float64)(th[k:k+4]), r.wt[k*d:(k+1)*d], r.wt[(k+1)*d:(k+2)*d], r.wt[(k+2)*d:(k+3)*d], r.wt[(k+3)*d:(k+4)*d])
	}
	for ; k < len(th); k++ {
		vec.AddMul(u, th[k], r.wt[k*d:(k+1)*d])
	}
	g = g[:2*d]
	for i, x := range u {
		g[2*i], g[2*i+1] = -x, x
	}
}

func (t *gradTracker) Try(i, s int) ([]int, []float64) {
	r := t.r
	dz := model.Spin(s) - model.Spin(t.z[i])
	for k, ak := range t.a {
		t.a2[k] = ak + r.wt[k*r.d+i]*dz
	}
	vexp.Tanh(t.t2, t.a2)
	r.gradient(t.g2, t.t2, t.u)
	t.ti, t.ts = i, s
	return t.all, t.g2
}

func (t *gradTracker) Commit() {
	if t.ti < 0 {
		panic("rbm: GradientTracker.Commit without a pending Try")
	}
	t.z[t.ti] = t.ts
	t.a, t.a2 = t.a2, t.a
	t.t, t.t2 = t.t2, t.t
	t.g, t.g2 = t.g2, t.g
	t.ti = -1
	if t.commits++; t.commits >= t.r.d {
		t.Reset(t.z)
	}
}

func (t *gradTracker) Reset(z []int) {
	copy(t.z, z)
	for k := range t.a {
		t.a[k] = t.r.preact(t.z, k)
	}
	vexp.Tanh(t.t, t.a)
	t.r.gradient(t.g, t.t, t.u)
	t.ti, t.commits = -1, 0
}

// SampleHidden draws h ~ p(h | z): P(h_k = +1 | z) = σ(2((Wᵀz)_k + c_k)),
// one uniform per hidden unit in order. h and z hold state indices.
func (r *RBM) SampleHidden(h, z []int, rnd *rand.Rand) {
	for k := range r.m {
		a := r.preact(z, k)
		h[k] = bernoulli(2*a, rnd)
	}
}

// SampleVisible draws z ~ p(z | h): P(z_i = +1 | h) = σ(2((Wh)_i + b_i)),
// one uniform per visible unit in order.
func (r *RBM) SampleVisible(z, h []int, rnd *rand.Rand) {
	for i := range r.d {
		a := r.b[i]
		for k := range r.m {
			a += r.wt[k*r.d+i] * model.Spin(h[k])
		}
		z[i] = bernoulli(2*a, rnd)
	}
}

// bernoulli returns 1 with probability σ(a).
func bernoulli(a float64, rnd *rand.Rand) int {
	if rnd.Float64() < numeric.Sigmoid(a) {
		return 1
	}
	return 0
}

// Bytes returns the model's size: Wᵀ, biases and, once trackers were made,
// the tabulated cosh and sinh of 2W, and once batches were made Wᵀ packed
// for the matrix kernel.
func (r *RBM) Bytes() int64 { return 8 * (4*int64(len(r.wt)) + int64(len(r.b)+len(r.c))) }

var _ model.RelaxedBatch = (*RBM)(nil)

// relaxedBatch evaluates the relaxation at n points with two matrix
// products: the hidden preactivations A = U·W + c (U the n×d matrix of
// m_i(1) − m_i(0)) and the gradient's T·Wᵀ, T = tanh(A).
type relaxedBatch struct {
	r       *RBM
	n       int
	u, a, g []float64 // n×d, n×M, n×d
	e       []float64 // n×2M: each point's exponentials and preactivations
	w       []float64 // W row-major, d×M: the second product's operand
	wp      *gemm.PackedB
	chunks  relaxedChunks
}

// NewRelaxedBatch returns an evaluator of the relaxation at n points; it
// holds 8(2nd + 3nM + 2dM) bytes (W, also packed for the matrix kernel).
func (r *RBM) NewRelaxedBatch(n int) model.RelaxedBatcher {
	b := &relaxedBatch{r: r, n: n, u: make([]float64, n*r.d), a: make([]float64, n*r.m), g: make([]float64, n*r.d), e: make([]float64, 2*n*r.m), w: make([]float64, r.d*r.m)}
	for k := range r.m {
		for i := range r.d {
			b.w[i*r.m+k] = r.wt[k*r.d+i]
		}
	}
	b.wp = gemm.PackB(b.w, r.d, r.m, r.m)
	return b
}

// packedWt returns Wᵀ packed for the matrix kernel, packing it on the
// first call.
func (r *RBM) packedWt() *gemm.PackedB {
	r.wtpOnce.Do(func() { r.wtp = gemm.PackB(r.wt, r.m, r.d, r.d) })
	return r.wtp
}

type rowTask struct {
	b     *relaxedBatch
	phase int
	f     []float64
	grad  []float64
	mem   []float64
}

func (t *rowTask) Do(lo, hi int) {
	b := t.b
	r, d, m := b.r, b.r.d, b.r.m
	for j := lo; j < hi; j++ {
		switch t.phase {
		case 0: // U from the memberships
			mj, uj := t.mem[j*2*d:(j+1)*2*d], b.u[j*d:(j+1)*d]
			for i := range uj {
				uj[i] = mj[2*i+1] - mj[2*i]
			}
		case 1: // f = b·u + Σ_k log 2cosh(a_k); A becomes tanh(A)
			var f float64
			for i, u := range b.u[j*d : (j+1)*d] {
				f += r.b[i] * u
			}
			// numeric.Log2Cosh and math.Tanh of every a_k, with their
			// exponentials taken together (vexp: the same bits).
			aj := b.a[j*m : (j+1)*m]
			ej, sj := b.e[2*j*m:(2*j+1)*m], b.e[(2*j+1)*m:(2*j+2)*m]
			for k := range aj {
				a := aj[k] + r.c[k]
				sj[k], ej[k] = a, -2*math.Abs(a)
			}
			vexp.Exp(ej, ej)
			for k, a := range sj {
				f += math.Abs(a) + math.Log1p(ej[k])
			}
			vexp.Tanh(aj, sj)
			t.f[j] = f
		case 2: // the gradient's layout: −g, g per unit
			gj, gr := b.g[j*d:(j+1)*d], t.grad[j*2*d:(j+1)*2*d]
			for i, g := range gj {
				v := r.b[i] + g
				gr[2*i], gr[2*i+1] = -v, v
			}
		}
	}
}

func (b *relaxedBatch) RelaxedLogProbs(f, grad, mem []float64) {
	b.chunks = relaxedChunks{b: b, f: f, grad: grad, mem: mem}
	parallel.For(b.n, parallel.GrainWork(b.n, b.RowWork()), &b.chunks)
	b.chunks = relaxedChunks{}
}

// RowWork is the multiply-adds of one point's two products (2dM) and its
// other operations (about 20 per hidden unit, 4 per visible one).
func (b *relaxedBatch) RowWork() float64 { return float64(2*b.r.d*b.r.m + 20*b.r.m + 4*b.r.d) }

// relaxedChunks hands chunks of points to RelaxedLogProbRows.
type relaxedChunks struct {
	b            *relaxedBatch
	f, grad, mem []float64
}

func (t *relaxedChunks) Do(lo, hi int) { t.b.RelaxedLogProbRows(lo, hi, t.f, t.grad, t.mem) }

// RelaxedLogProbRows evaluates points [lo, hi) on the calling goroutine,
// with the products of their rows alone (the same bits as the whole
// batch's: each entry's multiply-adds run in the same order).
func (b *relaxedBatch) RelaxedLogProbRows(lo, hi int, f, grad, mem []float64) {
	if hi <= lo {
		return
	}
	r, d, m := b.r, b.r.d, b.r.m
	t := rowTask{b: b, f: f, grad: grad, mem: mem}
	t.phase = 0
	t.Do(lo, hi)
	(&gemm.ABt{C: b.a[lo*m:], A: b.u[lo*d:], B: r.wt, M: hi - lo, N: m, K: d, Ldc: m, Lda: d, Ldb: d, Serial: true, Packed: r.packedWt()}).Mul()
	t.phase = 1
	t.Do(lo, hi)
	(&gemm.ABt{C: b.g[lo*d:], A: b.a[lo*m:], B: b.w, M: hi - lo, N: d, K: m, Ldc: d, Lda: m, Ldb: m, Serial: true, Packed: b.wp}).Mul()
	t.phase = 2
	t.Do(lo, hi)
}

var _ model.LogProbBatch = (*RBM)(nil)

// logProbBatch evaluates log p* at n states with one matrix product: the
// hidden preactivations S·W + c of the n×d matrix of spins S.
type logProbBatch struct {
	r      *RBM
	n      int
	s, a   []float64 // n×d, n×M
	chunks logProbChunks
}

// NewLogProbBatch returns an evaluator of log p* at n states; it holds
// 8(nd + nM) bytes.
func (r *RBM) NewLogProbBatch(n int) model.LogProbBatcher {
	b := &logProbBatch{r: r, n: n, s: make([]float64, n*r.d), a: make([]float64, n*r.m)}
	return b
}

type logProbTask struct {
	b    *logProbBatch
	sums bool // false: spins; true: the sums
	lp   []float64
	z    []int
}

func (t *logProbTask) Do(lo, hi int) {
	b := t.b
	r, d, m := b.r, b.r.d, b.r.m
	for j := lo; j < hi; j++ {
		sj := b.s[j*d : (j+1)*d]
		if !t.sums {
			for i, v := range t.z[j*d : (j+1)*d] {
				sj[i] = model.Spin(v)
			}
			continue
		}
		var f float64
		for i, v := range sj {
			f += r.b[i] * v
		}
		for k, a := range b.a[j*m : (j+1)*m] {
			f += numeric.Log2Cosh(a + r.c[k])
		}
		t.lp[j] = f
	}
}

func (b *logProbBatch) LogProbs(lp []float64, z []int) {
	b.chunks = logProbChunks{b: b, lp: lp, z: z}
	parallel.For(b.n, parallel.GrainWork(b.n, b.RowWork()), &b.chunks)
	b.chunks = logProbChunks{}
}

// RowWork is the multiply-adds of one state's product (dM) and its other
// operations (about 20 per hidden unit, 3 per visible one).
func (b *logProbBatch) RowWork() float64 { return float64(b.r.d*b.r.m + 20*b.r.m + 3*b.r.d) }

// logProbChunks hands chunks of states to LogProbRows.
type logProbChunks struct {
	b  *logProbBatch
	lp []float64
	z  []int
}

func (t *logProbChunks) Do(lo, hi int) { t.b.LogProbRows(lo, hi, t.lp, t.z) }

// LogProbRows evaluates states [lo, hi) on the calling goroutine, with the
// product of their rows alone (the same bits as the whole batch's).
func (b *logProbBatch) LogProbRows(lo, hi int, lp []float64, z []int) {
	if hi <= lo {
		return
	}
	r, d, m := b.r, b.r.d, b.r.m
	t := logProbTask{b: b, lp: lp, z: z}
	t.Do(lo, hi)
	(&gemm.ABt{C: b.a[lo*m:], A: b.s[lo*d:], B: r.wt, M: hi - lo, N: m, K: d, Ldc: m, Lda: d, Ldb: d, Serial: true, Packed: r.packedWt()}).Mul()
	t.sums = true
	t.Do(lo, hi)
}

// Kind names the model's kind for messages (model.Kinder).
func (r *RBM) Kind() string { return "an RBM" }
