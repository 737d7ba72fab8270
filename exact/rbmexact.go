package exact

import (
	"cmp"
	"context"
	"fmt"
	"math"
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
	return newRBMTruthContext(context.Background(), r, rbmChunkBits, false)
}

// newRBMTruth is NewRBM with the chunk size and the choice of kernel open to
// tests: chunkBits is the g above (before the cap at M), forceSlow disables
// the fast kernel.
func newRBMTruth(r *rbm.RBM, chunkBits int, forceSlow bool) (*RBMTruth, error) {
	return newRBMTruthContext(context.Background(), r, chunkBits, forceSlow)
}

// newRBMTruthContext is newRBMTruth that looks at ctx before each chunk
// and stops with ctx's error when it is canceled.
func newRBMTruthContext(ctx context.Context, r *rbm.RBM, chunkBits int, forceSlow bool) (*RBMTruth, error) {
	if r == nil {
		return nil, fmt.Errorf("exact: nil RBM")
	}
	d, m := r.Dim(), r.Hidden()
	if m > MaxHidden {
		return nil, tooLarge("exact: the RBM has %d hidden units; hidden enumeration is limited to MaxHidden = %d (it costs 2^M·d = %.3g unit updates)",
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
	task := &rbmPass{t: t, ctx: ctx}
	outs := make([]rbmChunkSum, min(rbmRound, nChunks))
	for j := range outs {
		outs[j] = rbmChunkSum{accP: make([]float64, d), accM: make([]float64, d)}
	}
	for lo := 0; lo < nChunks; lo += rbmRound {
		hi := min(lo+rbmRound, nChunks)
		task.first = lo
		task.out = outs[:hi-lo]
		parallel.For(hi-lo, 1, task)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
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
		st := r.States(i) // ±1, or 0 and 1 for an RBM with {0, 1} units
		res.Means[i] = pm*st[0] + pp*st[1]
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
	_ = t.SampleContext(context.Background(), dst, r)
}

// SampleContext is Sample that stops with ctx's error when ctx is canceled
// (see Truth): it looks at ctx before each chunk walk, when the hidden
// configurations are chosen (before any row is written), and every few
// thousand visible units drawn.
func (t *RBMTruth) SampleContext(ctx context.Context, dst []int, r *rand.Rand) error {
	d := t.d
	if len(dst)%d != 0 {
		panic(fmt.Sprintf("exact: sample buffer of length %d for dimension %d", len(dst), d))
	}
	n := len(dst) / d
	if n == 0 {
		return nil
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
	task := &rbmSampleTask{t: t, ctx: ctx, order: order, target: u, hidx: make([]int, n)}
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
	if err := ctx.Err(); err != nil {
		return err
	}
	// z | h, row by row.
	a := make([]float64, d)
	work := 0
	for j := range n {
		if work += d * (t.m + 1); work >= pollDraws {
			work = 0
			if err := ctx.Err(); err != nil {
				return err
			}
		}
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
	return nil
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
	ctx   context.Context
	first int
	out   []rbmChunkSum
}

// Do walks chunks [lo, hi) of the round, none after the context is
// canceled.
func (p *rbmPass) Do(lo, hi int) {
	w := p.t.pool.Get().(*rbmWalker)
	defer p.t.pool.Put(w)
	for j := lo; j < hi; j++ {
		if p.ctx.Err() != nil {
			return
		}
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
	ctx    context.Context
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
		if s.ctx.Err() != nil {
			return
		}
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
