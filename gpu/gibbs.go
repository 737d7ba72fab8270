package gpu

import (
	"context"
	_ "embed"
	"fmt"
	"math"

	"github.com/dstein/dstein/internal/cuda"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gibbs"
)

//go:embed gibbs.cu
var gibbsSource string

// gibbsKernels are the kernels of gibbs.cu.
var gibbsKernels = []string{"colour", "spins", "energy", "units", "joint"}

// maxStates is gibbs.cu's MAX_STATES: the most states of a Potts model's
// variable on the GPU.
const maxStates = 64

func init() {
	registerPath(gibbs.Name, NewGibbs, func(p *sampler.Problem, set gibbs.Settings) error { return SupportsGibbs(p.Model, set) })
}

// SupportsGibbs says why Gibbs sampling of m with set cannot run on a GPU,
// or nil: an Ising or a Potts model (any graph: the sites are updated by
// the colour classes of a greedy proper colouring, a checkerboard on a
// grid of even sides), independent categorical variables (one class:
// every variable of every chain at once; DISCS's categorical target) or
// an RBM (block Gibbs); not stratified or multi-spin sweeps, not a
// systematic scan of an RBM.
func SupportsGibbs(m model.Model, set gibbs.Settings) error {
	switch set.Scan {
	case gibbs.Auto:
	case gibbs.Block:
		if _, ok := m.(*rbm.RBM); !ok {
			return fmt.Errorf("gibbs: block Gibbs needs a model with latent units (an RBM)")
		}
	default:
		if _, ok := m.(*rbm.RBM); ok {
			return fmt.Errorf("gibbs on the GPU sweeps an RBM by blocks (--scan auto or block), not %s", set.Scan)
		}
	}
	if err := hasHidden(gibbs.Name, m); err != nil {
		return err
	}
	if set.Stratified || set.MultiSpin {
		return fmt.Errorf("gibbs on the GPU has no stratified or multi-spin sweeps (each chain draws its own uniforms); use --device cpu")
	}
	switch m.(type) {
	case *rbm.RBM, *ising.Ising:
	case *potts.Potts, *categorical.Categorical:
		if q := mostStates(m); q > maxStates {
			return fmt.Errorf("gibbs on the GPU handles variables of up to %d states, not %d", maxStates, q)
		}
	default:
		return fmt.Errorf("gibbs on the GPU samples Ising, Potts, categorical and RBM models (this model is a %T); use --device cpu", m)
	}
	return nil
}

// Gibbs is many independent Gibbs chains on a GPU: colour classes of a
// pairwise model's sites, or an RBM's two blocks, updated in every chain
// at once. Its draws differ from the CPU's (other uniforms, and the
// colour order instead of the systematic one); its chains have the same
// stationary distribution. It is not safe for concurrent use; Close
// frees its device memory.
type Gibbs struct {
	dev    *Device
	m      model.Model
	n, d   int
	k      map[string]*cuda.Func
	mem    arena
	k0, k1 uint32
	sweeps int
	evals  int64
	cur    []int
	fresh  bool
	failed error // a failed sweep or read: every later Step returns it

	// Pairwise models.
	q       int
	ising   bool
	colours []cuda.Ptr // each colour's sites
	counts  []int      // each colour's number of sites
	states  cuda.Ptr   // bytes, site-major d×n
	hstates []byte
	pair    [4]cuda.Ptr // start, nbr, cpl, fields

	// RBMs.
	rbm *rbm.RBM
	precision
	z, h, pre cuda.Ptr  // n×d and n×M of ±1, and the products
	spins     []float64 // the host's copy of z, read by Current
	wts, b, c cuda.Ptr
}

var (
	_ sampler.Sampler = (*Gibbs)(nil)
	_ sampler.Failer  = (*Gibbs)(nil)
)

// GibbsMemory returns the device memory, in bytes, of n chains on m.
func GibbsMemory(m model.Model, n int, f32 bool) uint64 {
	N, D := uint64(n), uint64(m.Dim())
	if r, ok := m.(*rbm.RBM); ok {
		es := uint64(8)
		if f32 {
			es = 4
		}
		M := uint64(r.Hidden())
		return es*(N*D+2*N*M+N*D+D*M+D+M) + 64
	}
	var edges uint64
	for i := range m.Dim() {
		nb, _ := neighbours(m, i)
		edges += uint64(len(nb))
	}
	q := uint64(mostStates(m))
	return N*D + 4*(D+1) + 12*edges + 8*D*q + 4*D + 64
}

// mostStates is the largest number of states of m's variables.
func mostStates(m model.Model) int {
	q := 0
	for i := range m.Dim() {
		q = max(q, len(m.States(i)))
	}
	return q
}

// neighbours returns a pairwise model's neighbours of i and couplings
// (none for independent variables).
func neighbours(m model.Model, i int) ([]int, []float64) {
	switch v := m.(type) {
	case *ising.Ising:
		return v.Neighbors(i)
	case *potts.Potts:
		return v.Neighbors(i)
	}
	return nil, nil
}

// NewGibbs starts n = p.N chains of Gibbs sampling on dev at the states
// p.Z. The uniforms come from a Philox key drawn from p.Key's sampling
// stream; the device memory is checked against the free memory before
// any is allocated.
func NewGibbs(dev *Device, p *sampler.Problem, set gibbs.Settings) (*Gibbs, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("gibbs: %w", err)
	}
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("gibbs: %w", err)
	}
	if err := SupportsGibbs(p.Model, set); err != nil {
		return nil, err
	}
	n, d := p.N, p.Model.Dim()
	// The kernels take the counts as C ints: 2³¹ or more chains (parallel
	// tempering passes chains × temperatures) would wrap to a negative
	// count, and every thread would return at once.
	if n > math.MaxInt32 || d > math.MaxInt32 {
		return nil, fmt.Errorf("gibbs on the GPU: %d chains of %d variables: over 2³¹ − 1 of either", n, d)
	}
	key := p.Key.For(rng.Sample).Rand().Uint64()
	g := &Gibbs{dev: dev, m: p.Model, n: n, d: d, mem: arena{ctx: dev.ctx}, k0: uint32(key), k1: uint32(key >> 32),
		precision: precision{ctx: dev.ctx, blas: dev.blas, f32: set.Precision == sampler.Float32}}
	what := fmt.Sprintf("gibbs with %d chains of %d variables", n, d)
	if err := g.mem.check(GibbsMemory(p.Model, n, g.f32), what); err != nil {
		return nil, err
	}
	opts := []string{"-DDSTEIN_F32=0"}
	if g.f32 {
		opts = []string{"-DDSTEIN_F32=1"}
	}
	k, err := dev.kernels(gibbsSource, "gibbs.cu", opts, gibbsKernels...)
	if err != nil {
		return nil, err
	}
	g.k = k
	if r, ok := p.Model.(*rbm.RBM); ok {
		err = g.startRBM(r, p.Z)
	} else {
		err = g.startPairwise(p.Z)
	}
	if err != nil {
		g.Close()
		return nil, fmt.Errorf("gibbs on %s: %w", dev, err)
	}
	return g, nil
}

// Close frees the chains' device memory; the sampler is not used after.
func (g *Gibbs) Close() error {
	g.mem.free()
	return nil
}

// startPairwise uploads the graph (CSR adjacency, couplings, fields as
// log conditionals' constant parts), the colour classes and the states.
func (g *Gibbs) startPairwise(z []int) error {
	m, n, d := g.m, g.n, g.d
	var fields []float64
	switch v := m.(type) {
	case *ising.Ising:
		g.q, g.ising = 2, true
		fields = make([]float64, 2*d)
		for i, h := range v.Fields() {
			fields[2*i], fields[2*i+1] = -h, h
		}
	case *potts.Potts:
		g.q = v.Q()
		fields = v.Fields()
	case *categorical.Categorical:
		// The log probabilities, −Inf for a state a variable cannot take
		// and for the states past its own (the kernel's exp gives them 0).
		g.q = mostStates(v)
		fields = make([]float64, d*g.q)
		for i := range d {
			p := v.Probs(i)
			for s := range g.q {
				fields[i*g.q+s] = math.Inf(-1)
				if s < len(p) && p[s] > 0 {
					fields[i*g.q+s] = math.Log(p[s])
				}
			}
		}
	}
	start := make([]int32, d+1)
	var nbr []int32
	var cpl []float64
	for i := range d {
		nb, cp := neighbours(m, i)
		for k, j := range nb {
			nbr = append(nbr, int32(j))
			cpl = append(cpl, cp[k])
		}
		start[i+1] = int32(len(nbr))
	}
	classes := colouring(m, d)
	ptrs := make([]cuda.Ptr, 4)
	for k, size := range []uint64{4 * uint64(d+1), 4 * uint64(len(nbr)), 8 * uint64(len(cpl)), 8 * uint64(len(fields))} {
		p, err := g.mem.alloc(size)
		if err != nil {
			return err
		}
		ptrs[k] = p
	}
	c := g.mem.ctx
	if err := firstErr(cuda.Upload(c, ptrs[0], start), cuda.Upload(c, ptrs[1], nbr), cuda.Upload(c, ptrs[2], cpl), cuda.Upload(c, ptrs[3], fields)); err != nil {
		return err
	}
	g.pair = [4]cuda.Ptr{ptrs[0], ptrs[1], ptrs[2], ptrs[3]}
	for _, cl := range classes {
		p, err := g.mem.alloc(4 * uint64(len(cl)))
		if err != nil {
			return err
		}
		if err := cuda.Upload(c, p, cl); err != nil {
			return err
		}
		g.colours = append(g.colours, p)
		g.counts = append(g.counts, len(cl))
	}
	st, err := g.mem.alloc(uint64(n) * uint64(d))
	if err != nil {
		return err
	}
	g.states = st
	g.hstates = make([]byte, n*d)
	for ch := range n {
		for i := range d {
			g.hstates[i*n+ch] = byte(z[ch*d+i])
		}
	}
	return cuda.Upload(c, st, g.hstates)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// colouring returns the colour classes of a greedy proper colouring of
// m's graph, sites in increasing order: each site takes the smallest
// colour none of its lower neighbours has (two colours on a bipartite
// grid: the checkerboard).
func colouring(m model.Model, d int) [][]int32 {
	col := make([]int, d)
	var classes [][]int32
	for i := range d {
		used := map[int]bool{}
		nb, _ := neighbours(m, i)
		for _, j := range nb {
			if j < i {
				used[col[j]] = true
			}
		}
		c := 0
		for used[c] {
			c++
		}
		col[i] = c
		for len(classes) <= c {
			classes = append(classes, nil)
		}
		classes[c] = append(classes[c], int32(i))
	}
	return classes
}

// startRBM uploads the RBM's parameters and the chains' visible units.
func (g *Gibbs) startRBM(r *rbm.RBM, z []int) error {
	g.rbm = r
	n, d, m, es := uint64(g.n), uint64(g.d), uint64(r.Hidden()), g.size()
	if err := g.mem.allocAll([]buffer{{&g.z, es * n * d}, {&g.h, es * n * m}, {&g.pre, es * n * max(d, m)},
		{&g.wts, es * d * m}, {&g.b, es * d}, {&g.c, es * m}}); err != nil {
		return err
	}
	W := make([]float64, d*m)
	for i := range int(d) {
		for k := range int(m) {
			W[uint64(i)*m+uint64(k)] = r.Weight(i, k)
		}
	}
	spins := make([]float64, n*d)
	for k, v := range z {
		spins[k] = model.Spin(v)
	}
	for _, up := range []struct {
		dst cuda.Ptr
		v   []float64
	}{{g.wts, W}, {g.b, r.VisibleBias()}, {g.c, r.HiddenBias()}, {g.z, spins}} {
		if err := g.upload(up.dst, up.v); err != nil {
			return err
		}
	}
	return nil
}

// Step runs one sweep of every chain: each colour class in turn, or the
// RBM's hidden then visible block. The context is looked at before the
// sweep; a sweep runs to its end (it is one to a few kernels).
func (g *Gibbs) Step(ctx context.Context) error {
	if g.failed != nil {
		return g.failed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	sweep := uint32(g.sweeps)
	g.fresh = false
	var err error
	if g.rbm != nil {
		err = g.blockSweep(sweep, 0)
	} else {
		err = g.colourSweep(sweep, 0)
	}
	if err == nil {
		err = g.mem.ctx.Sync()
	}
	if err != nil {
		g.failed = fmt.Errorf("gibbs on %s: %w", g.dev, err)
		return g.failed
	}
	g.sweeps++
	if g.rbm != nil {
		g.evals += int64(g.n) * int64(g.rbm.Hidden()+g.d)
	} else {
		g.evals += int64(g.n) * int64(g.d)
	}
	return nil
}

// colourSweep queues one sweep of a pairwise model's chains, colour
// class by colour class; beta, when not 0, holds each chain's inverse
// temperature (float64). The arguments are listed in each call, not
// appended to a slice, so that a sweep allocates nothing.
func (g *Gibbs) colourSweep(sweep uint32, beta cuda.Ptr) error {
	start, nbr, cpl, fields := g.pair[0], g.pair[1], g.pair[2], g.pair[3]
	for k, p := range g.colours {
		grid, block := grid1(int64(g.counts[k]) * int64(g.n))
		n, c := int32(g.n), int32(g.counts[k])
		var err error
		if g.ising {
			err = g.k["spins"].Queue(grid, block, n, c, p, start, nbr, cpl, fields, beta, g.states, sweep, g.k0, g.k1)
		} else {
			err = g.k["colour"].Queue(grid, block, n, c, p, start, nbr, cpl, fields, int32(g.q), beta, g.states, sweep, g.k0, g.k1)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// blockSweep draws the hidden units given the visible (phase 0), then
// the visible given the hidden (phase 1); beta, when not 0, holds each
// chain's inverse temperature of the joint (float64).
func (g *Gibbs) blockSweep(sweep uint32, beta cuda.Ptr) error {
	n, d, m := g.n, g.d, g.rbm.Hidden()
	gh, bh := grid1(int64(n) * int64(m))
	gv, bv := grid1(int64(n) * int64(d))
	return firstErr(
		g.gemm(cuda.Gemm{M: n, N: m, K: d, A: g.z, B: g.wts, C: g.pre}),
		g.k["units"].Queue(gh, bh, int32(n), int32(m), g.pre, g.c, beta, g.h, sweep, uint32(0), g.k0, g.k1),
		g.gemm(cuda.Gemm{M: n, N: d, K: m, A: g.h, B: g.wts, TransB: true, C: g.pre}),
		g.k["units"].Queue(gv, bv, int32(n), int32(d), g.pre, g.b, beta, g.z, sweep, uint32(1), g.k0, g.k1),
	)
}

// joint writes L(z, h) of every chain into ll (float64, n): zW into the
// products' buffer, then one sum per chain.
func (g *Gibbs) joint(ll cuda.Ptr) error {
	n, d, m := g.n, g.d, g.rbm.Hidden()
	grid, block := grid1(int64(n))
	return firstErr(
		g.gemm(cuda.Gemm{M: n, N: m, K: d, A: g.z, B: g.wts, C: g.pre}),
		g.k["joint"].Queue(grid, block, int32(n), int32(d), int32(m), g.z, g.h, g.pre, g.b, g.c, ll),
	)
}

// Current returns the chains' states, n×d, copied from the device (once
// per sweep). After a failed copy it returns what it last read, and Err
// and every later Step return the failure.
func (g *Gibbs) Current() []int {
	if g.fresh {
		return g.cur
	}
	n, d := g.n, g.d
	if g.cur == nil {
		g.cur = make([]int, n*d)
	}
	if g.rbm != nil {
		if g.spins == nil {
			g.spins = make([]float64, n*d)
		}
		if err := g.download(g.spins, g.z); err != nil {
			return g.readFailed(err)
		}
		for k, v := range g.spins {
			g.cur[k] = boolInt(v > 0)
		}
	} else {
		if err := cuda.Download(g.mem.ctx, g.hstates, g.states); err != nil {
			return g.readFailed(err)
		}
		for i := range d {
			for c := range n {
				g.cur[c*d+i] = int(g.hstates[i*n+c])
			}
		}
	}
	g.fresh = true
	return g.cur
}

// readFailed records a failed read of the chains and returns what was
// last read.
func (g *Gibbs) readFailed(err error) []int {
	if g.failed == nil {
		g.failed = fmt.Errorf("gibbs on %s: reading the chains: %w", g.dev, err)
	}
	return g.cur
}

// Err returns the error that stopped the sampler: a failed sweep or a
// failed read of the chains.
func (g *Gibbs) Err() error { return g.failed }

// Stats reports the site updates or unit draws so far, as the CPU's.
func (g *Gibbs) Stats() sampler.Stats { return sampler.Stats{Evaluations: g.evals} }
