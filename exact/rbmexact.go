package exact

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/model/rbm"
)

// MaxHidden is the largest number of hidden units NewRBM enumerates. Its
// cost is 2^M·d multiply-adds: at M = 25 and d = 100, 3.4·10⁹.
const MaxHidden = 25

const (
	// rbmChunkBits is the number of low hidden units enumerated inside one
	// chunk (fewer when M is smaller). It is fixed, so that chunk boundaries,
	// and with them every rounding, do not depend on GOMAXPROCS.
	rbmChunkBits = 12
	// rbmRound is how many chunks run in parallel before their sums are
	// folded, in chunk order, into the totals.
	rbmRound = 64
	// rbmMaxProd bounds the product Π(1+v_i) of the fast kernel; states over
	// it are redone by the slow per-state path. Below it, exp(lin−ref) =
	// w/Π(1+v_i) may be subnormal, but its absolute error stays under
	// 2^−1074·2^960 = 2^−114 of the largest weight.
	rbmMaxProd = 0x1p960
	// rbmMaxLogV bounds |log v_i| over a chunk for the fast kernel, so that
	// neither v_i nor its multipliers overflow or lose precision in
	// subnormals.
	rbmMaxLogV = 690
	// rbmMaxFastDim is the largest d for the fast kernel: beyond it Π(1+v_i)
	// reaches rbmMaxProd even when every v_i ≤ 1.
	rbmMaxFastDim = 900
	// rbmLogBlock is how many factors 1+e ∈ (1, 2] the slow path multiplies
	// before it takes a log, so that the product cannot overflow.
	rbmLogBlock = 512
)

// RBMTruth is exact ground truth for a Bernoulli RBM with ±1 visible and ±1
// hidden units, by enumeration of the 2^M hidden configurations.
//
// Summing the visible units out of p(z,h) ∝ exp(zᵀWh + bᵀz + cᵀh) gives
//
//	p(h) ∝ exp(cᵀh) Π_i 2cosh(a_i),  a = Wh + b,
//
// and given h the visible units are independent with P(z_i = +1 | h) =
// σ(2a_i), so that Z = Σ_h exp(cᵀh) Π_i 2cosh(a_i) (the normaliser of
// rbm.LogProb) and P(z_i = +1) = Σ_h p(h) σ(2a_i).
//
// # Algorithm
//
// The hidden configurations are cut into 2^(M−g) chunks of 2^g (g = min(M,
// 12)); chunk c fixes the hidden units k ≥ g to the bits of c. Chunks run on
// the worker pool in rounds of 64 and their sums are folded in chunk order,
// so the results are bit-identical on any number of cores. In a chunk, a is
// computed from scratch at the first configuration, each unit gets an
// orientation s_i = sign(a_i) there, and the kernel keeps v_i = exp(−2s_i·a_i)
// (about ≤ 1), with which
//
//	log 2cosh(a_i) = s_i·a_i + log(1 + v_i),  P(z_i = s_i | h) = 1/(1 + v_i).
//
// Σ_i s_i·a_i and cᵀh are linear in h, so they cost O(1) per configuration.
// The chunk walks the low two hidden units in all four combinations for each
// configuration of units 2..g−1 taken in Gray-code order: one flip of unit k
// multiplies each v_i by a precomputed exp(∓4s_i·W_ik), and the four
// combinations are v_i times precomputed factors, so a configuration costs
// O(d) multiplications and no exp or log per unit. One log per configuration
// gives its log-weight, kept relative to a running maximum per chunk (no
// overflow at any |W|). The sums Σ_h w(h)/(1+v_i(h)) for all i come from
// prefix and suffix products of the factors 1+v_j, without divisions. A chunk
// over which some |log v_i| could pass 690 (very large weights or biases),
// and every chunk when d > 900 or M < 2, takes a slow path that updates a
// additively along a Gray code and calls exp once per unit and
// configuration; a configuration whose product Π(1+v_i) passes 2^960 is
// recomputed from scratch. The total cost is about 2^M·d·(10 flops), plus
// 2^(M−g)·(M+3g)·d for the chunk starts.
//
// # Sampling
//
// Sample draws h by inverting the cumulative distribution over chunks (from
// the chunk totals kept by NewRBM, 2^(M−12) numbers), then re-walks only the
// chunks that the sorted uniforms hit, on the worker pool, to find each
// configuration inside its chunk, and then draws z | h. A call of n samples
// therefore costs at most min(n, 2^(M−12)) chunk walks (each about half a
// NewRBM chunk) plus O(n·d·M); memory is O(n + d·g) per worker, never 2^M.
type RBMTruth struct {
	d, m, g int
	wt      []float64 // Wᵀ row-major: wt[k*d+i] = W[i][k]
	b, c    []float64
	// lowLo[i], lowHi[i] bound Σ_{k<g} (h_k+1)·W_ik, the change of a_i
	// within a chunk.
	lowLo, lowHi []float64
	fastOK       bool // the fast kernel may be used at all (d, M)
	res          *Result
	// chunkCDF[c] is the probability of chunks 0..c (nondecreasing; the last
	// entry is 1 up to rounding).
	chunkCDF []float64
	pool     sync.Pool // *rbmWalker
}

var _ Truth = (*RBMTruth)(nil)

// NewRBM enumerates the hidden configurations of r and returns its exact
// log normaliser (of r.LogProb), visible marginals and means. It refuses
// more than MaxHidden hidden units.
func NewRBM(r *rbm.RBM) (*RBMTruth, error) {
	return newRBMTruth(r, rbmChunkBits, false)
}

// newRBMTruth is NewRBM with the chunk size and the choice of kernel open to
// tests: chunkBits is the g above (before the cap at M), forceSlow disables
// the fast kernel.
func newRBMTruth(r *rbm.RBM, chunkBits int, forceSlow bool) (*RBMTruth, error) {
	if r == nil {
		return nil, fmt.Errorf("exact: nil RBM")
	}
	d, m := r.Dim(), r.Hidden()
	if m > MaxHidden {
		return nil, fmt.Errorf("exact: the RBM has %d hidden units; hidden enumeration is limited to MaxHidden = %d (it costs 2^M·d = %.3g unit updates)",
			m, MaxHidden, math.Ldexp(float64(d), m))
	}
	if d < 1 {
		return nil, fmt.Errorf("exact: the RBM has no visible units")
	}
	g := min(m, max(chunkBits, 0))
	t := &RBMTruth{
		d: d, m: m, g: g,
		wt:    make([]float64, m*d),
		b:     append([]float64(nil), r.VisibleBias()...),
		c:     append([]float64(nil), r.HiddenBias()...),
		lowLo: make([]float64, d),
		lowHi: make([]float64, d),
	}
	t.fastOK = !forceSlow && g >= 2 && d <= rbmMaxFastDim
	for k := range m {
		copy(t.wt[k*d:(k+1)*d], r.HiddenWeights(k))
	}
	for k := range g {
		for i, w := range t.wt[k*d : (k+1)*d] {
			if w < 0 {
				t.lowLo[i] += 2 * w
			} else {
				t.lowHi[i] += 2 * w
			}
		}
	}
	t.pool.New = func() any { return newRBMWalker(t) }

	nChunks := 1 << (m - g)
	chunkLogT := make([]float64, nChunks)
	// Running totals over the folded chunks, relative to exp(ref).
	ref := math.Inf(-1)
	var tot float64
	accP := make([]float64, d) // Σ w·P(z_i = +1 | h)
	accM := make([]float64, d) // Σ w·P(z_i = −1 | h)
	task := &rbmPass{t: t}
	outs := make([]rbmChunkSum, min(rbmRound, nChunks))
	for j := range outs {
		outs[j] = rbmChunkSum{accP: make([]float64, d), accM: make([]float64, d)}
	}
	for lo := 0; lo < nChunks; lo += rbmRound {
		hi := min(lo+rbmRound, nChunks)
		task.first = lo
		task.out = outs[:hi-lo]
		parallel.For(hi-lo, 1, task)
		for j := range task.out {
			cs := &task.out[j]
			chunkLogT[lo+j] = cs.ref + math.Log(cs.tot)
			if cs.ref > ref {
				scale := math.Exp(ref - cs.ref)
				tot *= scale
				for i := range accP {
					accP[i] *= scale
					accM[i] *= scale
				}
				ref = cs.ref
			}
			f := math.Exp(cs.ref - ref)
			tot += f * cs.tot
			for i := range accP {
				accP[i] += f * cs.accP[i]
				accM[i] += f * cs.accM[i]
			}
		}
	}
	if !(tot > 0) || math.IsInf(ref, 0) || math.IsNaN(ref) {
		return nil, fmt.Errorf("exact: RBM enumeration failed (total weight %v at scale %v)", tot, ref)
	}
	res := &Result{LogZ: ref + math.Log(tot), Marginals: make([][]float64, d), Means: make([]float64, d)}
	for i := range d {
		pm, pp := min(accM[i]/tot, 1), min(accP[i]/tot, 1)
		res.Marginals[i] = []float64{pm, pp}
		res.Means[i] = pp - pm
	}
	t.res = res
	t.chunkCDF = make([]float64, nChunks)
	var cum float64
	for ci, lt := range chunkLogT {
		cum += math.Exp(lt - res.LogZ)
		t.chunkCDF[ci] = cum
	}
	return t, nil
}

// Result returns log Z, the marginals and the means.
func (t *RBMTruth) Result() *Result { return t.res }

// Sample fills dst (length a multiple of d) with independent exact samples,
// row-major state indices (0 for −1, 1 for +1). It draws len(dst)/d uniforms
// from r to choose the hidden configurations (one per row, in row order),
// then one uniform per visible unit, row by row, for z | h. It is safe for
// concurrent use with different r.
func (t *RBMTruth) Sample(dst []int, r *rand.Rand) {
	d := t.d
	if len(dst)%d != 0 {
		panic(fmt.Sprintf("exact: sample buffer of length %d for dimension %d", len(dst), d))
	}
	n := len(dst) / d
	if n == 0 {
		return
	}
	total := t.chunkCDF[len(t.chunkCDF)-1]
	u := make([]float64, n)
	for j := range u {
		u[j] = r.Float64() * total
	}
	order := make([]int, n)
	for j := range order {
		order[j] = j
	}
	slices.SortFunc(order, func(x, y int) int {
		return cmp.Or(cmp.Compare(u[x], u[y]), cmp.Compare(x, y))
	})
	// Group the sorted uniforms by chunk: each row's u becomes its position
	// in [0, 1) inside its chunk.
	task := &rbmSampleTask{t: t, order: order, target: u, hidx: make([]int, n)}
	c := 0
	for lo := 0; lo < n; {
		x := u[order[lo]]
		// The first chunk whose cumulative probability passes x; chunks
		// of probability zero have the cdf of their predecessor.
		for c < len(t.chunkCDF)-1 && t.chunkCDF[c] <= x {
			c++
		}
		hi := lo + 1
		for hi < n && (u[order[hi]] < t.chunkCDF[c] || c == len(t.chunkCDF)-1) {
			hi++
		}
		prev := 0.0
		if c > 0 {
			prev = t.chunkCDF[c-1]
		}
		width := t.chunkCDF[c] - prev
		for j := lo; j < hi; j++ {
			p := 0.0
			if width > 0 {
				p = min(max((u[order[j]]-prev)/width, 0), 1)
			}
			u[order[j]] = p
		}
		task.groups = append(task.groups, rbmGroup{chunk: c, lo: lo, hi: hi})
		lo = hi
	}
	parallel.For(len(task.groups), 1, task)
	// z | h, row by row.
	a := make([]float64, d)
	for j := range n {
		t.preact(a, task.hidx[j])
		row := dst[j*d : (j+1)*d]
		for i, ai := range a {
			// P(z_i = +1 | h) = σ(2a_i).
			if r.Float64() < rbmSigmoid2(ai) {
				row[i] = 1
			} else {
				row[i] = 0
			}
		}
	}
}

// rbmSigmoid2 returns σ(2a) = 1/(1+exp(−2a)).
func rbmSigmoid2(a float64) float64 {
	if a >= 0 {
		return 1 / (1 + math.Exp(-2*a))
	}
	e := math.Exp(2 * a)
	return e / (1 + e)
}

// preact writes a = Wh + b for the hidden configuration of global index hidx
// (bit k set: h_k = +1) and returns cᵀh.
func (t *RBMTruth) preact(a []float64, hidx int) float64 {
	d := t.d
	copy(a, t.b)
	var lin float64
	for k := range t.m {
		hk := -1.0
		if hidx>>k&1 == 1 {
			hk = 1
		}
		lin += hk * t.c[k]
		col := t.wt[k*d : (k+1)*d]
		col = col[:len(a)]
		for i := range a {
			a[i] += hk * col[i]
		}
	}
	return lin
}

// rbmChunkSum is one chunk's sums relative to exp(ref).
type rbmChunkSum struct {
	ref, tot   float64
	accP, accM []float64
}

// rbmPass runs the chunks first..first+len(out)−1.
type rbmPass struct {
	t     *RBMTruth
	first int
	out   []rbmChunkSum
}

func (p *rbmPass) Do(lo, hi int) {
	w := p.t.pool.Get().(*rbmWalker)
	defer p.t.pool.Put(w)
	for j := lo; j < hi; j++ {
		cs := &p.out[j]
		cs.ref, cs.tot = w.chunk(p.first+j, nil)
		for i, s := range w.s {
			// The other state's sum is the difference, which rounding
			// could make slightly negative.
			other := max(cs.tot-w.acc[i], 0)
			if s > 0 {
				cs.accP[i], cs.accM[i] = w.acc[i], other
			} else {
				cs.accM[i], cs.accP[i] = w.acc[i], other
			}
		}
	}
}

// rbmGroup is the sorted uniforms order[lo:hi] that fall in one chunk.
type rbmGroup struct {
	chunk, lo, hi int
}

type rbmSampleTask struct {
	t      *RBMTruth
	order  []int
	target []float64 // per row, its position in [0, 1) inside its chunk
	hidx   []int     // per row, the chosen hidden configuration
	groups []rbmGroup
}

func (s *rbmSampleTask) Do(lo, hi int) {
	t := s.t
	w := t.pool.Get().(*rbmWalker)
	defer t.pool.Put(w)
	for gi := lo; gi < hi; gi++ {
		gr := s.groups[gi]
		lw := w.lw
		w.chunk(gr.chunk, lw)
		mx := math.Inf(-1)
		for _, x := range lw {
			mx = max(mx, x)
		}
		var sum float64
		for _, x := range lw {
			sum += math.Exp(x - mx)
		}
		// Walk the local configurations once for the sorted targets.
		var cum float64
		loc := 0
		last := len(lw) - 1
		for j := gr.lo; j < gr.hi; j++ {
			row := s.order[j]
			x := s.target[row] * sum
			for loc < last && cum+math.Exp(lw[loc]-mx) <= x {
				cum += math.Exp(lw[loc] - mx)
				loc++
			}
			s.hidx[row] = gr.chunk<<t.g | loc
		}
	}
}

// rbmWalker holds one worker's scratch for walking chunks.
type rbmWalker struct {
	t *RBMTruth
	a []float64 // a at the chunk start, then the slow path's running a
	s []float64 // orientation ±1 per visible unit
	v []float64
	// up[k*d+i] = exp(−4s_i·W_ik) and dn[k*d+i] = exp(4s_i·W_ik) for k < g.
	up, dn     []float64
	f1, f2, f3 []float64 // the factors of the other three low combinations
	ones       []float64
	dlin       []float64    // change of the linear term when unit k < g goes up
	pre, q     [][4]float64 // prefix products and factors of the four lanes
	acc        []float64    // Σ w·P(z_i = s_i | h), relative to exp(ref)
	ps         []float64    // slow path: P(z_i = s_i | h) of one configuration
	sa         []float64    // slow path: a of one configuration
	lw         []float64    // sampling: the log-weights of one chunk
}

func newRBMWalker(t *RBMTruth) *rbmWalker {
	d, g := t.d, t.g
	w := &rbmWalker{
		t: t, a: make([]float64, d), s: make([]float64, d), v: make([]float64, d),
		up: make([]float64, g*d), dn: make([]float64, g*d),
		f1: make([]float64, d), f2: make([]float64, d), f3: make([]float64, d),
		ones: make([]float64, d), dlin: make([]float64, g),
		pre: make([][4]float64, d), q: make([][4]float64, d), acc: make([]float64, d),
		ps: make([]float64, d), sa: make([]float64, d),
		lw: make([]float64, 1<<g),
	}
	for i := range w.ones {
		w.ones[i] = 1
	}
	return w
}

// chunk walks chunk c. With lw nil it returns the chunk's reference ref and
// total Σ_h exp(log w(h) − ref), and leaves in w.acc the sums Σ_h exp(log
// w(h) − ref)·P(z_i = s_i | h) with w.s the orientation. With lw non-nil it
// only writes each configuration's log-weight log w(h) = cᵀh + Σ_i log
// 2cosh(a_i) into lw[local index] (bit k of the local index: h_k = +1).
func (w *rbmWalker) chunk(c int, lw []float64) (ref, tot float64) {
	t := w.t
	lin0 := t.preact(w.a, c<<t.g)
	fast := t.fastOK
	for i, ai := range w.a {
		if ai >= 0 {
			w.s[i] = 1
		} else {
			w.s[i] = -1
		}
		if fast {
			// log v_i = −2|a_i| − 2s_i·Δ_i, Δ_i ∈ [lowLo_i, lowHi_i].
			lo, hi := t.lowLo[i], t.lowHi[i]
			if w.s[i] < 0 {
				lo, hi = -hi, -lo
			}
			if -2*math.Abs(ai)-2*hi < -rbmMaxLogV || -2*math.Abs(ai)-2*lo > rbmMaxLogV {
				fast = false
			}
		}
	}
	for i := range w.acc {
		w.acc[i] = 0
	}
	if fast {
		return w.fastChunk(c, lin0, lw)
	}
	return w.slowChunk(c, lin0, lw)
}

// fastChunk is the multiplicative kernel described on RBMTruth.
func (w *rbmWalker) fastChunk(c int, lin0 float64, lw []float64) (ref, tot float64) {
	t := w.t
	d, g := t.d, t.g
	lin := lin0
	for i, ai := range w.a {
		lin += w.s[i] * ai
		w.v[i] = math.Exp(-2 * math.Abs(ai))
	}
	for k := range g {
		col := t.wt[k*d : (k+1)*d]
		var sw float64
		for i, wk := range col {
			x := 4 * w.s[i] * wk
			sw += w.s[i] * wk
			w.up[k*d+i] = math.Exp(-x)
			w.dn[k*d+i] = math.Exp(x)
		}
		w.dlin[k] = 2*t.c[k] + 2*sw
	}
	copy(w.f1, w.up[:d])
	copy(w.f2, w.up[d:2*d])
	for i := range w.f3 {
		w.f3[i] = math.Exp(-4 * w.s[i] * (t.wt[i] + t.wt[d+i]))
	}
	dl := [4]float64{0, w.dlin[0], w.dlin[1], w.dlin[0] + w.dlin[1]}
	ref = math.Inf(-1)
	gray := 0
	for j := range 1 << (g - 2) {
		gx := w.ones
		if j > 0 {
			kk := bits.TrailingZeros(uint(j))
			k := kk + 2
			if gray>>kk&1 == 0 {
				gx = w.up[k*d : (k+1)*d]
				lin += w.dlin[k]
			} else {
				gx = w.dn[k*d : (k+1)*d]
				lin -= w.dlin[k]
			}
			gray ^= 1 << kk
		}
		p := rbmForward(w.v, gx, w.f1, w.f2, w.f3, w.pre, w.q)
		var lws, cs [4]float64
		var slow [4]bool
		mx := math.Inf(-1)
		for l := range 4 {
			if p[l] <= rbmMaxProd {
				lws[l] = lin + dl[l] + math.Log(p[l])
			} else {
				slow[l] = true
				lws[l] = w.slowState(c<<g | gray<<2 | l)
			}
			mx = max(mx, lws[l])
		}
		if lw != nil {
			copy(lw[gray<<2:gray<<2+4], lws[:])
			continue
		}
		if mx > ref {
			scale := math.Exp(ref - mx)
			tot *= scale
			for i := range w.acc {
				w.acc[i] *= scale
			}
			ref = mx
		}
		for l := range 4 {
			if slow[l] {
				// w.slowState was called for lane l; redo it to refill
				// w.ps (rare). The lane's prefix products may be +Inf:
				// clear them so that the backward pass adds 0 for it.
				lws[l] = w.slowState(c<<g | gray<<2 | l)
				for i := range w.pre {
					w.pre[i][l] = 0
				}
				wt := math.Exp(lws[l] - ref)
				tot += wt
				for i, q := range w.ps {
					w.acc[i] += wt * q
				}
				continue
			}
			cs[l] = math.Exp(lin + dl[l] - ref)
			tot += cs[l] * p[l]
		}
		rbmBackward(w.acc, w.pre, w.q, cs)
	}
	return ref, tot
}

// rbmForward multiplies v by gx, writes the factors 1+v_i·f_l (f_0 = 1) of
// the four lanes into q and their prefix products into pre, and returns the
// full products.
func rbmForward(v, gx, f1, f2, f3 []float64, pre, q [][4]float64) [4]float64 {
	gx, f1, f2, f3, pre, q = gx[:len(v)], f1[:len(v)], f2[:len(v)], f3[:len(v)], pre[:len(v)], q[:len(v)]
	p0, p1, p2, p3 := 1.0, 1.0, 1.0, 1.0
	for i := range v {
		vb := v[i] * gx[i]
		v[i] = vb
		pre[i] = [4]float64{p0, p1, p2, p3}
		q0, q1, q2, q3 := 1+vb, 1+vb*f1[i], 1+vb*f2[i], 1+vb*f3[i]
		q[i] = [4]float64{q0, q1, q2, q3}
		p0 *= q0
		p1 *= q1
		p2 *= q2
		p3 *= q3
	}
	return [4]float64{p0, p1, p2, p3}
}

// rbmBackward adds Σ_l cs_l·Π_{j≠i} q_j,l to acc[i] for every i, with suffix
// products run backwards against the prefix products in pre.
func rbmBackward(acc []float64, pre, q [][4]float64, cs [4]float64) {
	pre, q = pre[:len(acc)], q[:len(acc)]
	s0, s1, s2, s3 := cs[0], cs[1], cs[2], cs[3]
	for i := len(acc) - 1; i >= 0; i-- {
		pr, qi := pre[i], q[i]
		acc[i] += pr[0]*s0 + pr[1]*s1 + pr[2]*s2 + pr[3]*s3
		s0 *= qi[0]
		s1 *= qi[1]
		s2 *= qi[2]
		s3 *= qi[3]
	}
}

// slowChunk walks the chunk along a Gray code over all g low units, updating
// a additively (from w.a, computed from scratch at the chunk start).
func (w *rbmWalker) slowChunk(c int, lin0 float64, lw []float64) (ref, tot float64) {
	t := w.t
	d, g := t.d, t.g
	a := w.sa
	copy(a, w.a)
	lin := lin0
	ref = math.Inf(-1)
	gray := 0
	for j := range 1 << g {
		if j > 0 {
			k := bits.TrailingZeros(uint(j))
			col := t.wt[k*d : (k+1)*d]
			col = col[:len(a)]
			if gray>>k&1 == 0 {
				lin += 2 * t.c[k]
				for i := range a {
					a[i] += 2 * col[i]
				}
			} else {
				lin -= 2 * t.c[k]
				for i := range a {
					a[i] -= 2 * col[i]
				}
			}
			gray ^= 1 << k
		}
		x := lin + w.stateFrom(a)
		if lw != nil {
			lw[gray] = x
			continue
		}
		if x > ref {
			scale := math.Exp(ref - x)
			tot *= scale
			for i := range w.acc {
				w.acc[i] *= scale
			}
			ref = x
		}
		wt := math.Exp(x - ref)
		tot += wt
		for i, q := range w.ps {
			w.acc[i] += wt * q
		}
	}
	return ref, tot
}

// slowState computes configuration hidx from scratch: it returns its
// log-weight and leaves P(z_i = s_i | h) in w.ps.
func (w *rbmWalker) slowState(hidx int) float64 {
	lin := w.t.preact(w.sa, hidx)
	return lin + w.stateFrom(w.sa)
}

// stateFrom returns Σ_i log 2cosh(a_i) and writes P(z_i = s_i | h) into w.ps,
// with one exp per unit: e = exp(−2|a_i|), log 2cosh(a_i) = |a_i| + log(1+e),
// σ(2|a_i|) = 1/(1+e).
func (w *rbmWalker) stateFrom(a []float64) float64 {
	s, ps := w.s[:len(a)], w.ps[:len(a)]
	var sum float64
	prod := 1.0
	for i, ai := range a {
		x := math.Abs(ai)
		e := math.Exp(-2 * x)
		sum += x
		q := 1 / (1 + e)
		if (ai >= 0) == (s[i] > 0) {
			ps[i] = q
		} else {
			ps[i] = e * q
		}
		prod *= 1 + e
		if i%rbmLogBlock == rbmLogBlock-1 {
			sum += math.Log(prod)
			prod = 1
		}
	}
	return sum + math.Log(prod)
}
