package exact

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"

	"github.com/dstein/dstein/internal/numeric"
	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
)

// Why one file of about 910 lines: the torus transfer (a plan per wrap, forward and
// backward passes, sampling in chunks, the mode mass) shares one plan, its buffers and its
// parallel tasks.

// MaxTorusSide is the largest shorter side of a periodic grid that
// IsingTorus accepts: it runs one transfer of 2^side numbers per site for
// each of the 2^side configurations of one line, about 2·(d − side)·4^side
// entry updates in all: about 0.5 s for the 10×10 torus and 8–11 s for
// 12×12 on one core of the project's machine (measured while another
// process loaded it); 13×13 would take about 45 s and 14×14 three minutes,
// and the pair marginals (TorusPairs) of a 12×12 torus are the largest
// within MaxPairsWork.
const MaxTorusSide = 12

// IsingTorus is the exact ground truth of an Ising model on a periodic
// rows×cols grid (a torus, as ising.Grid builds it with periodic set):
// log Z, every marginal and mean, and independent exact samples, for grids
// whose shorter side is at most MaxTorusSide whatever the longer side. It
// takes any subset of the torus's bonds with any couplings and fields, so
// cylinders and open grids too (IsingGrid is 2^side times cheaper on open
// grids); where a side has length 2, ising.GridEdges merges the wrap with
// the inner bond, and where it has length 1 there is no bond along it: the
// model's edges are taken as they are.
//
// The sites are visited line by line along the longer side, each line
// across the shorter side, as IsingGrid visits them; the frontier holds the
// last side = min(rows, cols) sites. Two kinds of bond close the torus: the
// wrap within a line joins its first and last sites, both in the frontier
// when the last one is added, so that step's factor also depends on the
// frontier's bit 0; the wrap along the longer side joins the last line L−1
// to the first. That one is handled by conditioning on the first line's
// configuration c (2^side of them): given c, the first line's bonds to the
// second and to the last line are fields, and the rest is a transfer over
// lines 1…L−1 started from the frontier c. Each conditional transfer gives
// log Z_c and, with its backward pass, the conditional marginals; log Z is
// the log-sum-exp over c of log w(c) + log Z_c, with w(c) the first line's
// own weight, and every marginal the mixture of the conditional ones with
// weights P(c) = w(c)·Z_c/Z. The conditionings are independent and run on
// the worker pool; their results are combined in the order of c, so nothing
// depends on GOMAXPROCS.
//
// A sample draws c from P(c) and then, given c, forward filtering and
// backward sampling as in IsingGrid. Keeping every conditioning's forward
// messages would take 8·(d − side)·4^side bytes (740 MB at 10×10), so none
// are kept: Sample works in chunks of 16·2^side samples (at most 16384,
// fewer where their uniforms would take more than 32 MiB), draws every
// uniform of a chunk first (the same numbers in the same order as one
// sample at a time, so that the samples do not depend on how a buffer is
// split between calls), groups the chunk's samples by c and recomputes
// each c's forward messages once for its group, the groups on the worker
// pool. A chunk costs at most min(chunk, 2^side) forward passes of
// (d − side)·2^side entry updates (0.13 ms at 10×10): a draw costs about a
// 16th of a pass when tens of thousands are drawn at once, and up to a
// whole pass when fewer than 2^side are (measured on one core: 20000 draws
// of the 10×10 torus in 0.3–0.35 s, 1000 in 55–110 ms, less the more P(c)
// is concentrated); each draws d − 2·side + 2 uniforms.
//
// Float64 stays exact under the bound of IsingGrid applied to the problem
// given c (see newTorusPlan). Memory (torusBytes): while it builds,
// 16·(d − side)·2^side bytes of conditional marginals and 8·(d − side)·2^side
// of messages per worker (1.5 MB and 0.7 MB at 10×10); while it samples,
// the messages per worker and a chunk's uniforms (13 MB for 16384 draws at
// 10×10); it keeps 16·2^side bytes and the steps' factors. It is immutable
// after construction and safe for concurrent use, given one *rand.Rand per
// goroutine.
type IsingTorus struct {
	p     *torusPlan
	logW  []float64 // log w(c) + log Z_c for every first-line configuration c
	cdf   []float64 // cumulative P(c)
	lastC int       // last c of positive probability
	res   *Result
}

var _ Truth = (*IsingTorus)(nil)

// torusPlan is the sweep of a periodic grid with line rot visited first
// (rotations serve the pair marginals), and the factors of each step.
type torusPlan struct {
	rows, cols int
	w          int // frontier width: the shorter side
	lines      int // the longer side
	n, d       int // 2^w, rows·cols
	site       []int
	// Couplings of each step's site: field, upper (previous line, same
	// position), left (same line, previous position), wrap (from the last
	// site of a line to its first, bit 0) and long (from the last line to
	// the first, a field given c).
	h, jv, jh, jr, jl []float64
	steps             []torusStep // steps[t − w] for t = w…d−1
}

// torusStep holds the factors of one site t ≥ w. Bit b = t mod w of the
// frontier holds, before the step, the spin s of the upper neighbour and,
// after it, the spin z of site t; bit b−1 holds the left neighbour zl and
// bit 0 the first site of the line z0 (when the line wraps, b = w−1 ≥ 2).
type torusStep struct {
	// f[cb][z0][zl][z][s] = exp((h + jl·CB)·Z + jv·Z·S + jh·Z·ZL + jr·Z·Z0
	// − maxE), capitals the spin values, cb the spin of the first line at
	// position b, maxE = |h| + |jv| + |jh| + |jr| + |jl|, so that f ≤ 1.
	f    [2][2][2][2][2]float64
	g    [2][2]float64 // g[z][s] = exp(jv·Z·S − |jv|), for drawing s
	maxE float64
}

// NewIsingTorus returns the exact ground truth of m, which must have been
// built by ising.Grid or ising.NewGrid (periodic, or open: any subset of
// the torus's bonds) and have a shorter side of at most MaxTorusSide. It
// refuses couplings and fields so strong that float64 arithmetic could
// lose probability mass (see newTorusPlan: the bound of NewIsingGrid,
// which allows a uniform |J| up to about 18 on a 10×10 torus without
// fields).
func NewIsingTorus(m *ising.Ising) (*IsingTorus, error) {
	return isingTorusContext(context.Background(), m)
}

// isingTorusContext is NewIsingTorus that stops with ctx's error when ctx
// is canceled.
func isingTorusContext(ctx context.Context, m *ising.Ising) (*IsingTorus, error) {
	p, err := torusPlanOf(m, 0)
	if err != nil {
		return nil, err
	}
	return newIsingTorusPlan(ctx, p)
}

// torusPlanOf returns the plan of a grid model with line rot first.
func torusPlanOf(m *ising.Ising, rot int) (*torusPlan, error) {
	if m == nil {
		return nil, fmt.Errorf("exact: NewIsingTorus needs a model, got nil")
	}
	rows, cols, _, ok := m.GridShape()
	if !ok {
		return nil, fmt.Errorf("exact: NewIsingTorus needs an Ising model built by ising.Grid on a rows×cols grid; this model has no grid shape (use Enumerate for small models)")
	}
	if rows*cols != m.Dim() {
		return nil, fmt.Errorf("exact: the model has %d spins but its grid is %d×%d", m.Dim(), rows, cols)
	}
	return newTorusPlan(rows, cols, m.Edges(), m.Fields(), rot)
}

// newTorusPlan checks the grid, classifies its edges for the sweep that
// starts at line rot and builds the factors of every step.
func newTorusPlan(rows, cols int, edges []ising.Edge, fields []float64, rot int) (*torusPlan, error) {
	if rows < 1 || cols < 1 {
		return nil, fmt.Errorf("exact: Ising grid must have at least one row and one column, got %d×%d", rows, cols)
	}
	w, lines := min(rows, cols), max(rows, cols)
	if w > MaxTorusSide {
		return nil, tooLarge("exact: the periodic %d×%d Ising grid has shorter side %d; exact transfer on a torus supports a shorter side of at most %d (any longer side)", rows, cols, w, MaxTorusSide)
	}
	d := rows * cols
	fields, err := gridFields(rows, cols, fields)
	if err != nil {
		return nil, err
	}
	p := &torusPlan{rows: rows, cols: cols, w: w, lines: lines, n: 1 << w, d: d, site: make([]int, d),
		h: make([]float64, d), jv: make([]float64, d), jh: make([]float64, d), jr: make([]float64, d), jl: make([]float64, d)}
	transposed := cols > rows // lines are columns
	step := make([]int, d)
	for t := range d {
		a, b := (t/w+rot)%lines, t%w
		s := a*cols + b
		if transposed {
			s = b*cols + a
		}
		p.site[t] = s
		step[s] = t
		p.h[t] = fields[s]
	}

	// Each edge joins step tj to an earlier step ti: its upper, left,
	// wrap or long neighbour. Where a side has length 2, the wrap joins
	// the same pair as the inner bond and is found as that; where it has
	// length 1 there is none.
	seen := make([]bool, 4*d)
	for k, e := range edges {
		if err := checkGridEdge(k, e, rows, cols); err != nil {
			return nil, err
		}
		ti, tj := step[e.I], step[e.J]
		if ti > tj {
			ti, tj = tj, ti
		}
		ai, bi, aj, bj := ti/w, ti%w, tj/w, tj%w
		var kind int
		var slot []float64
		switch {
		case bi == bj && aj == ai+1:
			kind, slot = 0, p.jv
		case ai == aj && bj == bi+1:
			kind, slot = 1, p.jh
		case ai == aj && bi == 0 && bj == w-1 && w >= 3:
			kind, slot = 2, p.jr
		case bi == bj && ai == 0 && aj == lines-1 && lines >= 3:
			kind, slot = 3, p.jl
		default:
			return nil, fmt.Errorf("exact: edge %d joins spins %d (%d, %d) and %d (%d, %d), which are not neighbours on the periodic %d×%d grid", k, e.I, e.I/cols, e.I%cols, e.J, e.J/cols, e.J%cols, rows, cols)
		}
		if seen[4*tj+kind] {
			return nil, fmt.Errorf("exact: spins %d and %d are joined by more than one edge (edge %d repeats one)", e.I, e.J, k)
		}
		seen[4*tj+kind] = true
		slot[tj] = e.Coupling
	}

	// Float64 safety: the bound of newIsingGrid for the problem given c,
	// whose variables are the sites after the first line. Its backward
	// message β_t depends on the frontier through the bonds that cross
	// from those sites ≤ t to sites > t: the left bond of t+1, the upper
	// bonds of t+1…t+w from sites outside the first line, and the wrap of
	// t's line unless t ends it (bonds to the first line are fields there).
	// So β_t's entries lie within exp(2·cut) of each other; with maxE the
	// largest |h| + |jv| + |jh| + |jr| + |jl| of a step, 2·cut + 2·maxE ≤
	// 600 keeps every β entry and every product of a step far from
	// underflow, and forward entries that underflow carry less than e^−100
	// of the mass. The first line's weights and the mixture over c are
	// computed in log space.
	var maxStep, maxCut float64
	for t := w; t < d; t++ {
		maxStep = max(maxStep, math.Abs(p.h[t])+math.Abs(p.jv[t])+math.Abs(p.jh[t])+math.Abs(p.jr[t])+math.Abs(p.jl[t]))
		if t+1 < d {
			var cut float64
			if (t+1)%w != 0 {
				cut += math.Abs(p.jh[t+1])
			}
			for u := max(t+1, 2*w); u <= min(t+w, d-1); u++ {
				cut += math.Abs(p.jv[u])
			}
			if end := t - t%w + w - 1; t < end {
				cut += math.Abs(p.jr[end])
			}
			maxCut = max(maxCut, cut)
		}
	}
	if bound := 2*maxCut + 2*maxStep; bound > maxTransferNats {
		return nil, fmt.Errorf("exact: couplings and fields of the periodic %d×%d Ising grid are too strong for exact transfer in float64 (2·%.4g across the frontier + 2·%.4g at a site = %.4g nats > %d)", rows, cols, maxCut, maxStep, bound, maxTransferNats)
	}

	p.steps = make([]torusStep, d-w)
	for t := w; t < d; t++ {
		st := &p.steps[t-w]
		h, jv, jh, jr, jl := p.h[t], p.jv[t], p.jh[t], p.jr[t], p.jl[t]
		st.maxE = math.Abs(h) + math.Abs(jv) + math.Abs(jh) + math.Abs(jr) + math.Abs(jl)
		for cb := range 2 {
			for z0 := range 2 {
				for zl := range 2 {
					for z := range 2 {
						for s := range 2 {
							Z := model.Spin(z)
							e := (h+jl*model.Spin(cb))*Z + jv*Z*model.Spin(s) + jh*Z*model.Spin(zl) + jr*Z*model.Spin(z0)
							st.f[cb][z0][zl][z][s] = math.Exp(e - st.maxE)
						}
					}
				}
			}
		}
		st.g = upperFactors(jv)
	}
	return p, nil
}

// lineWeight returns log w(c): the fields and bonds within the first line
// in configuration c.
func (p *torusPlan) lineWeight(c int) float64 {
	var e float64
	for b := range p.w {
		z := model.Spin(c >> b & 1)
		e += p.h[b] * z
		if b > 0 {
			e += p.jh[b] * z * model.Spin(c>>(b-1)&1)
		}
	}
	if p.w >= 3 {
		e += p.jr[p.w-1] * model.Spin(c&1) * model.Spin(c>>(p.w-1)&1)
	}
	return e
}

// wrap reports whether step t's factors depend on the frontier's bit 0:
// a wrap bond closes its line there.
func (p *torusPlan) wrap(t int) bool { return p.jr[t] != 0 }

// matrices returns step t's matrices for first-line spin cb times k, as
// m[z0][zl][u][v]: u the site's spin z and v the upper spin s, or the
// transpose (u = s, v = z) for the backward pass.
func (p *torusPlan) matrices(t, cb int, transpose bool, k float64) [2][2][2][2]float64 {
	f := &p.steps[t-p.w].f[cb]
	var m [2][2][2][2]float64
	for z0 := range 2 {
		m[z0] = scaled(f[z0], transpose, k)
	}
	return m
}

// forward runs the transfer given first-line configuration c from the
// frontier c, writing α_t for t = w…d−1 into alpha ((d − w)·2^w entries)
// with unit as scratch, and returns log Z_c (the mass of the other sites
// given c) or ctx's error, looking at ctx every pollEntries entries (work
// carries the count between calls).
func (p *torusPlan) forward(ctx context.Context, c int, alpha, unit []float64, work *int) (float64, error) {
	n, w := p.n, p.w
	clear(unit)
	unit[c] = 1
	prev, sum := unit, 1.0
	var logZ float64
	for t := w; t < p.d; t++ {
		if *work += n; *work >= pollEntries {
			*work = 0
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		b := t % w
		m := p.matrices(t, c>>b&1, false, 1/sum)
		cur := alpha[(t-w)*n : (t-w+1)*n]
		sum = transferKernel(cur, cur, prev, nil, b, p.wrap(t), &m, nil)
		logZ += p.steps[t-w].maxE + math.Log(sum)
		prev = cur
	}
	return logZ, nil
}

// backward runs the backward pass given c over the forward messages alpha
// and writes P_c(z_t = 0) and P_c(z_t = 1) for t = w…d−1 into out[2(t−w)]
// and out[2(t−w)+1]; beta and next are scratch of 2^w entries.
func (p *torusPlan) backward(ctx context.Context, c int, alpha, beta, next, out []float64, work *int) error {
	n, w := p.n, p.w
	for x := range beta {
		beta[x] = 1
	}
	sum := float64(n)
	for t := p.d - 1; t >= w; t-- {
		if *work += n; *work >= pollEntries {
			*work = 0
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		b := t % w
		m := p.matrices(t, c>>b&1, true, 1/sum)
		var dst []float64
		if t > w {
			dst = next
		}
		var q [2]float64
		sum = transferKernel(dst, dst, beta, alpha[(t-w)*n:(t-w+1)*n], b, p.wrap(t), &m, &q)
		tot := q[0] + q[1]
		out[2*(t-w)], out[2*(t-w)+1] = q[0]/tot, q[1]/tot
		beta, next = next, beta
	}
	return nil
}

// conditioned runs the transfer given each first-line configuration c on
// the worker pool and returns log w(c) + log Z_c for every c; when marg is
// not nil it also fills it with the conditional marginals (2(d − w)
// numbers per c, see backward). The workers' scratch comes from bufs
// (newTorusBufs), which successive calls on plans of one grid may share.
func (p *torusPlan) conditioned(ctx context.Context, marg []float64, bufs *torusBufs) ([]float64, error) {
	task := &torusTask{p: p, ctx: ctx, logW: make([]float64, p.n), marg: marg, pool: bufs}
	parallel.For(p.n, 1, task)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return task.logW, nil
}

// torusBufs is a free list of the workers' scratch for the conditional
// transfers (and the sampler's and the mode mass's): unlike a sync.Pool,
// whose items a garbage collection may drop between the sweeps or chunks
// that share it (TorusPairs makes one sweep per line, Sample one per chunk), it
// allocates a buffer only when none is free, so that a run allocates one
// per worker, as the memory estimates count (torusWorkers).
type torusBufs struct {
	free chan *[]float64
	size int
}

// newTorusBufs returns the free list for a grid of d sites and shorter side
// w: each buffer holds messages and three frontier vectors, (d − w + 3)·2^w
// numbers.
func newTorusBufs(d, w int) *torusBufs { return newFreeList((d - w + 3) << w) }

// newFreeList returns a free list of buffers of size numbers.
func newFreeList(size int) *torusBufs {
	return &torusBufs{free: make(chan *[]float64, 64), size: size}
}

// Get returns a free buffer, or a new one.
func (b *torusBufs) Get() any {
	select {
	case s := <-b.free:
		return s
	default:
		s := make([]float64, b.size)
		return &s
	}
}

// Put frees a buffer (dropped when 64 are free already).
func (b *torusBufs) Put(x any) {
	select {
	case b.free <- x.(*[]float64):
	default:
	}
}

// torusTask runs the conditional transfers of the configurations c in
// [lo, hi).
type torusTask struct {
	p    *torusPlan
	ctx  context.Context
	logW []float64
	marg []float64
	pool *torusBufs // *[]float64: see newTorusBufs
}

func (k *torusTask) Do(lo, hi int) {
	sp := k.pool.Get().(*[]float64)
	defer k.pool.Put(sp)
	p := k.p
	n, m := p.n, p.d-p.w
	buf := *sp
	alpha, unit, beta, next := buf[:m*n], buf[m*n:(m+1)*n], buf[(m+1)*n:(m+2)*n], buf[(m+2)*n:(m+3)*n]
	work := 0
	for c := lo; c < hi; c++ {
		if k.ctx.Err() != nil {
			return
		}
		lz, err := p.forward(k.ctx, c, alpha, unit, &work)
		if err != nil {
			return
		}
		k.logW[c] = p.lineWeight(c) + lz
		if k.marg != nil {
			if p.backward(k.ctx, c, alpha, beta, next, k.marg[2*m*c:2*m*(c+1)], &work) != nil {
				return
			}
		}
	}
}

// torusWeights returns log Z = log Σ_c exp(logW[c]) and P(c) for every c.
func torusWeights(logW []float64) (float64, []float64) {
	logZ := numeric.LogSumExp(logW)
	pc := make([]float64, len(logW))
	for c, v := range logW {
		pc[c] = math.Exp(v - logZ)
	}
	return logZ, pc
}

// newIsingTorusPlan builds the truth from its plan.
func newIsingTorusPlan(ctx context.Context, p *torusPlan) (*IsingTorus, error) {
	marg := make([]float64, 2*(p.d-p.w)*p.n)
	logW, err := p.conditioned(ctx, marg, newTorusBufs(p.d, p.w))
	if err != nil {
		return nil, err
	}
	return newIsingTorusFrom(p, logW, marg), nil
}

// newIsingTorusFrom builds the truth from the conditional transfers'
// results (see conditioned).
func newIsingTorusFrom(p *torusPlan, logW, marg []float64) *IsingTorus {
	logZ, pc := torusWeights(logW)
	d, w, n := p.d, p.w, p.n
	// The marginals: the first line's from P(c), the others mixtures of
	// the conditional ones, summed in the order of c.
	q := make([]float64, 2*d)
	m := d - w
	for c, pr := range pc {
		if pr == 0 {
			continue
		}
		for b := range w {
			q[2*b+(c>>b&1)] += pr
		}
		mc := marg[2*m*c : 2*m*(c+1)]
		for t := w; t < d; t++ {
			q[2*t] += pr * mc[2*(t-w)]
			q[2*t+1] += pr * mc[2*(t-w)+1]
		}
	}
	res := &Result{LogZ: logZ, Marginals: make([][]float64, d), Means: make([]float64, d)}
	probs := make([]float64, 2*d)
	for t := range d {
		i := p.site[t]
		tot := q[2*t] + q[2*t+1]
		mi := probs[2*i : 2*i+2 : 2*i+2]
		mi[0], mi[1] = q[2*t]/tot, q[2*t+1]/tot
		res.Marginals[i] = mi
		res.Means[i] = (q[2*t+1] - q[2*t]) / tot
	}
	g := &IsingTorus{p: p, logW: logW, cdf: make([]float64, n), res: res}
	var acc float64
	for c, pr := range pc {
		acc += pr
		g.cdf[c] = acc
		if pr > 0 {
			g.lastC = c
		}
	}
	return g
}

// Result returns log Z, the marginals and the means. The caller must not
// modify it.
func (g *IsingTorus) Result() *Result { return g.res }

// uniforms is the number of uniforms a sample draws: one for c, and given
// c one for the last line and one for each site of lines 1…L−2.
func (p *torusPlan) uniforms() int {
	if p.lines == 1 {
		return 1
	}
	return p.d - 2*p.w + 2
}

// sampleChunk is the number of samples Sample draws at a time: 16·2^side,
// at most 16384, and fewer where their uniforms would take more than
// 32 MiB.
func (p *torusPlan) sampleChunk() int {
	return max(1, min(16<<p.w, 16384, (32<<20)/(8*p.uniforms())))
}

// Sample fills dst (length a multiple of rows·cols) with independent exact
// samples, row-major state indices (0 for −1, 1 for +1), drawing
// rows·cols − 2·side + 2 uniforms from r per sample (1 for a 1×1 grid) and
// nothing else.
func (g *IsingTorus) Sample(dst []int, r *rand.Rand) {
	_ = g.SampleContext(context.Background(), dst, r)
}

// SampleContext is Sample that stops with ctx's error when ctx is canceled
// (see Truth): it looks at ctx before each conditioning's forward pass and
// every few thousand variables drawn, and writes a chunk of samples into
// dst only once the whole chunk is drawn. The groups of a chunk (one per
// first-line configuration drawn) run on the worker pool; each sample's
// draws depend only on its own uniforms, so the samples do not depend on
// GOMAXPROCS.
func (g *IsingTorus) SampleContext(ctx context.Context, dst []int, r *rand.Rand) error {
	p := g.p
	d, n := p.d, p.n
	if len(dst)%d != 0 {
		panic(fmt.Sprintf("exact: sample buffer of length %d for dimension %d", len(dst), d))
	}
	rows := len(dst) / d
	if rows == 0 {
		return nil
	}
	per := p.uniforms()
	chunk := min(rows, p.sampleChunk())
	task := &torusSampleTask{p: p, ctx: ctx, per: per, us: make([]float64, chunk*per), out: make([]uint8, chunk*d), order: make([]int32, chunk)}
	task.pool = newFreeList((d - p.w + 2) * n)
	cs := make([]int32, chunk)
	start := make([]int, n+1)
	for o := 0; o < rows; o += chunk {
		k := min(chunk, rows-o)
		for i := range task.us[:k*per] {
			task.us[i] = r.Float64()
		}
		// Each sample's c, then the samples grouped by c (counting sort).
		clear(start)
		for s := range k {
			c := searchCDF(g.cdf, task.us[s*per], g.lastC)
			cs[s] = int32(c)
			start[c+1]++
		}
		for c := range n {
			start[c+1] += start[c]
		}
		task.groups = task.groups[:0]
		for c := range n {
			if start[c+1] > start[c] {
				task.groups = append(task.groups, torusGroup{c: c, lo: start[c], hi: start[c+1]})
			}
		}
		for s := range k {
			c := cs[s]
			task.order[start[c]] = int32(s)
			start[c]++
		}
		parallel.For(len(task.groups), 1, task)
		if err := ctx.Err(); err != nil {
			return err
		}
		for i, v := range task.out[:k*d] {
			dst[o*d+i] = int(v)
		}
	}
	return nil
}

// torusGroup is the samples order[lo:hi] of a chunk, which share the
// first-line configuration c.
type torusGroup struct{ c, lo, hi int }

// torusSampleTask draws the samples of a chunk's groups [lo, hi).
type torusSampleTask struct {
	p      *torusPlan
	ctx    context.Context
	per    int
	us     []float64 // the chunk's uniforms, per for each sample
	out    []uint8   // the chunk's samples
	order  []int32
	groups []torusGroup
	pool   *torusBufs // *[]float64: messages, a unit vector, the last cdf
}

func (k *torusSampleTask) Do(lo, hi int) {
	sp := k.pool.Get().(*[]float64)
	defer k.pool.Put(sp)
	p := k.p
	d, w, n, per := p.d, p.w, p.n, k.per
	buf := *sp
	alpha, unit, last := buf[:(d-w)*n], buf[(d-w)*n:(d-w+1)*n], buf[(d-w+1)*n:(d-w+2)*n]
	work, drawn := 0, 0
	for _, gr := range k.groups[lo:hi] {
		if k.ctx.Err() != nil {
			return
		}
		c := gr.c
		lastPos := 0
		if p.lines > 1 {
			if _, err := p.forward(k.ctx, c, alpha, unit, &work); err != nil {
				return
			}
			var acc float64
			for x, v := range alpha[(d-w-1)*n:] {
				acc += v
				last[x] = acc
				if v > 0 {
					lastPos = x
				}
			}
		}
		for _, s := range k.order[gr.lo:gr.hi] {
			if drawn += d; drawn >= pollDraws {
				drawn = 0
				if k.ctx.Err() != nil {
					return
				}
			}
			row := k.out[int(s)*d : (int(s)+1)*d]
			for b := range w {
				row[p.site[b]] = uint8(c >> b & 1)
			}
			if p.lines == 1 {
				continue
			}
			u := k.us[int(s)*per+1 : (int(s)+1)*per]
			x := searchCDF(last, u[0], lastPos)
			for t := d - w; t < d; t++ {
				row[p.site[t]] = uint8(x >> (t % w) & 1)
			}
			// Going backwards, the upper neighbour of site t leaves the
			// frontier; draw it given the frontier after t.
			j := 1
			for t := d - 1; t >= 2*w; t-- {
				b := t % w
				bit := 1 << b
				z := x >> b & 1
				x0 := x &^ bit
				a := alpha[(t-1-w)*n : (t-w)*n]
				gz := &p.steps[t-w].g[z]
				w0 := a[x0] * gz[0]
				w1 := a[x0|bit] * gz[1]
				up := 0
				if u[j]*(w0+w1) < w1 {
					up = 1
				}
				j++
				x = x0 | up<<b
				row[p.site[t-w]] = uint8(up)
			}
		}
	}
}

// searchCDF returns the first x with cdf[x] > u·cdf[last entry], which
// skips zero-probability entries, and at most lastPos (the last entry of
// positive probability), which rounding in the cumulative sum could
// otherwise pass.
func searchCDF(cdf []float64, u float64, lastPos int) int {
	v := u * cdf[len(cdf)-1]
	lo, hi := 0, len(cdf)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if cdf[mid] > v {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return min(lo, lastPos)
}

// torusWorkers is the number of workers the conditional transfers may
// use at once, each holding one buffer of the free list: the caller and
// the GOMAXPROCS − 1 helpers a batch of internal/parallel's pool takes at
// most (not NumCPU: under a container's CPU quota that is the host's).
func torusWorkers() float64 { return float64(runtime.GOMAXPROCS(0)) }

// torusBytes estimates the bytes IsingTorus holds for a periodic grid of
// d sites and shorter side w: what it keeps (the weights of the first
// line's configurations, the steps' factors, the result) plus the larger
// of what it builds with (the conditional marginals, each worker's
// messages) and what Sample allocates (each worker's messages, a chunk's
// uniforms and samples).
func torusBytes(d, w int) float64 {
	n := float64(int(1) << w)
	m := float64(d - w)
	keep := 8*2*n + 8*48*float64(d) + 24*float64(d) + 64*float64(d)
	build := 8*2*m*n + 8*n + 8*(m+3)*n*torusWorkers()
	p := torusPlan{d: d, w: w, lines: d / w}
	chunk := float64(p.sampleChunk())
	per := float64(p.uniforms())
	sample := 8*(m+2)*n*torusWorkers() + chunk*(8*per+float64(d)+8) + 8*(n+1) + 24*chunk
	return keep + max(build, sample)
}

// modeMass returns P(M > 0) + ½P(M = 0) by the transfer given each
// first-line configuration c with the number of up spins among the other
// sites carried along ((d − w + 1)·2^w numbers per step), the conditional
// masses mixed with weights P(c) (from the plain conditional transfers).
func (p *torusPlan) modeMass(ctx context.Context) (float64, error) {
	logW, err := p.conditioned(ctx, nil, newTorusBufs(p.d, p.w))
	if err != nil {
		return 0, err
	}
	task := &torusMassTask{p: p, ctx: ctx, mass: make([]float64, p.n)}
	task.pool = newFreeList((2*(p.d-p.w+3) + 1) * p.n)
	parallel.For(p.n, 1, task)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	_, pc := torusWeights(logW)
	var mass float64
	for c, pr := range pc {
		if math.IsNaN(task.mass[c]) {
			return 0, fmt.Errorf("exact: internal error: the magnetisation transfer lost all mass given first-line configuration %d", c)
		}
		mass += pr * task.mass[c]
	}
	return min(mass, 1), nil
}

// torusMassWork is the number of entry updates of modeMass: after each
// site the counts that can still decide the sign of M span at most
// min(sites visited, sites left) + 1 blocks, plus the two settled ones.
func torusMassWork(d, w int) float64 {
	m := float64(d - w)
	return (m*m/4 + 3*m) * float64(int(1)<<w) * float64(int(1)<<w)
}

// torusMassBytes is the memory of modeMass: each worker's count blocks
// and its messages of the plain transfers (the pool's, perhaps not yet
// collected), the weights and mass of each c and the steps' factors.
func torusMassBytes(d, w int) float64 {
	n := float64(int(1) << w)
	return 8*(2*float64(d-w+3)+1+float64(d-w+3))*n*torusWorkers() + 8*3*n + 8*48*float64(d) + 16*float64(d)
}

// torusMassTask computes the conditional mode masses of the c in [lo, hi).
type torusMassTask struct {
	p    *torusPlan
	ctx  context.Context
	mass []float64
	pool *torusBufs // *[]float64: two sets of count blocks and a scratch vector
}

// Do runs, for each c, the transfer over the sites after the first line
// with the number j of up spins among them carried along, as blocks of
// 2^w weights. M > 0 when 2(k0 + j) > d at the end, k0 the up spins of c:
// a block whose count already exceeds d/2 − k0 is settled positive, and
// one that cannot reach it with the sites left settled negative, so those
// blocks merge into two that are transferred without a count.
func (k *torusMassTask) Do(lo, hi int) {
	sp := k.pool.Get().(*[]float64)
	defer k.pool.Put(sp)
	p := k.p
	n, w, d := p.n, p.w, p.d
	nb := d - w + 3 // counts 0…d−w, then the settled blocks
	pos, neg := d-w+1, d-w+2
	buf := *sp
	cur, nxt, tmp := buf[:nb*n], buf[nb*n:2*nb*n], buf[2*nb*n:(2*nb+1)*n]
	blk := func(s []float64, j int) []float64 { return s[j*n : (j+1)*n] }
configs:
	for c := lo; c < hi; c++ {
		if k.ctx.Err() != nil {
			return
		}
		k0 := bits.OnesCount(uint(c))
		// Count j is live while 2(k0 + j) ≤ d and 2(k0 + j + r) ≥ d,
		// with r sites left: j ≤ top and j ≥ low(r).
		top := d/2 - k0
		low := func(r int) int { return (d+1)/2 - k0 - r }
		jlo, jhi := 0, 0 // the live counts; empty when jlo > jhi
		posOn, negOn := false, false
		start := blk(cur, 0)
		switch {
		case top < 0:
			start, posOn, jlo = blk(cur, pos), true, 1
		case low(d-w) > 0:
			start, negOn, jlo = blk(cur, neg), true, 1
		}
		clear(start)
		start[c] = 1
		sum := 1.0
		for t := w; t < d; t++ {
			if k.ctx.Err() != nil {
				return
			}
			b := t % w
			m := p.matrices(t, c>>b&1, false, 1/sum)
			wrap := p.wrap(t)
			var s float64
			if posOn {
				s += transferKernel(blk(nxt, pos), blk(nxt, pos), blk(cur, pos), nil, b, wrap, &m, nil)
			}
			if negOn {
				s += transferKernel(blk(nxt, neg), blk(nxt, neg), blk(cur, neg), nil, b, wrap, &m, nil)
			}
			if jlo <= jhi {
				nlo, nhi := max(jlo, low(d-1-t)), min(jhi+1, top)
				// New blocks that get one half only: jlo (nothing from
				// jlo − 1) and jhi + 1 (nothing from itself).
				if jlo >= nlo {
					clear(blk(nxt, jlo))
				}
				if jhi+1 <= nhi {
					clear(blk(nxt, jhi+1))
				}
				for j := jlo; j <= jhi; j++ {
					d0, d1 := tmp, tmp
					if j >= nlo {
						d0 = blk(nxt, j)
					}
					if j+1 <= nhi {
						d1 = blk(nxt, j+1)
					}
					s += transferKernel(d0, d1, blk(cur, j), nil, b, wrap, &m, nil)
					if j < nlo { // spin −1: settled negative
						if !negOn {
							clear(blk(nxt, neg))
							negOn = true
						}
						addHalf(blk(nxt, neg), tmp, b, 0)
					}
					if j+1 > nhi { // spin +1: settled positive
						if !posOn {
							clear(blk(nxt, pos))
							posOn = true
						}
						addHalf(blk(nxt, pos), tmp, b, 1)
					}
				}
				jlo, jhi = nlo, nhi
			}
			if !(s > 0) {
				k.mass[c] = math.NaN() // reported by modeMass
				continue configs
			}
			sum = s
			cur, nxt = nxt, cur
		}
		// What is left live is M = 0 (2(k0 + j) = d).
		var up, down, tie float64
		for j := jlo; j <= jhi; j++ {
			for _, v := range blk(cur, j) {
				tie += v
			}
		}
		if posOn {
			for _, v := range blk(cur, pos) {
				up += v
			}
		}
		if negOn {
			for _, v := range blk(cur, neg) {
				down += v
			}
		}
		k.mass[c] = min((up+tie/2)/(up+down+tie), 1)
	}
}

// addHalf adds src[x] into dst[x] for the x whose bit b is u.
func addHalf(dst, src []float64, b, u int) {
	src = src[:len(dst)]
	for x := range dst {
		if x>>b&1 == u {
			dst[x] += src[x]
		}
	}
}
