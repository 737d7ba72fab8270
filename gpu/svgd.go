package gpu

import (
	"context"
	_ "embed"
	"fmt"
	"math"

	"github.com/dstein/dstein/internal/cuda"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gfsvgd"
	"github.com/dstein/dstein/svgd"
	"github.com/dstein/dstein/transform"
)

//go:embed svgd.cu
var svgdSource string

// svgdKernels are the kernels of svgd.cu.
var svgdKernels = []string{"relax", "hidden", "rowstats", "scores", "norms", "sqdist", "hist", "hist1", "gather", "bracket", "kexp", "operand", "direction", "adam", "plain", "rowsum", "copyto"}

func init() {
	registerPath(gfsvgd.Name, NewSVGD, func(p *sampler.Problem, set gfsvgd.Settings) error {
		return SupportsSVGD(p.Model, p.Transform, set)
	})
}

// SupportsSVGD says why GF-SVGD on m over t with set cannot run on a GPU,
// or nil: the GPU path covers an RBM (±1 or {0, 1} units) over the
// binary transform with the normal base, the relaxed surrogate and the
// RBF kernel, with Adam or plain steps, any weights and bandwidth rule.
func SupportsSVGD(m model.Model, t *transform.Transform, set gfsvgd.Settings) error {
	if _, ok := m.(*rbm.RBM); !ok {
		return fmt.Errorf("gfsvgd on the GPU samples RBMs only (this model is a %T); use --device cpu", m)
	}
	if err := hasHidden(gfsvgd.Name, m); err != nil {
		return err
	}
	if _, ok := t.Base().(transform.Normal); !ok {
		return fmt.Errorf("gfsvgd on the GPU needs the normal base")
	}
	for i := range t.Dim() {
		if t.NumStates(i) != 2 || len(t.Cuts(i)) != 1 || t.StateOf(i, 0) != 0 || t.StateOf(i, 1) != 1 {
			return fmt.Errorf("gfsvgd on the GPU needs two bins per variable in state order (variable %d differs)", i)
		}
	}
	if set.Surrogate != "" && set.Surrogate != "relaxed" {
		return fmt.Errorf("gfsvgd on the GPU uses the relaxed surrogate, not %q", set.Surrogate)
	}
	if set.Kernel != svgd.RBF {
		return fmt.Errorf("gfsvgd on the GPU uses the RBF kernel, not %s", set.Kernel)
	}
	return nil
}

// hasHidden refuses an RBM without hidden units: its launches over the
// hidden units would have no blocks and its products a leading dimension
// of 0, both of which the CUDA driver and cuBLAS reject (the CPU samples
// such a model, independent variables, at once).
func hasHidden(method string, m model.Model) error {
	if r, ok := m.(*rbm.RBM); ok && r.Hidden() == 0 {
		return fmt.Errorf("%s on the GPU needs an RBM with hidden units (this one has none: its variables are independent); use --device cpu", method)
	}
	return nil
}

// SVGD is GF-SVGD on a GPU: sampler/gfsvgd's iteration with the particles,
// scores, kernel and optimizer state in device memory, the importance
// weights and the bandwidth's median decided on the host from what the
// device reports (n log weights, and histograms of the squared
// distances' bits). It is not safe for concurrent use; Close frees its
// device memory.
type SVGD struct {
	dev *Device
	t   *transform.Transform
	set gfsvgd.Settings
	precision
	n, d, m   int
	k         map[string]*cuda.Func
	mem       arena
	perEval   int64
	evals     int64
	iter      int
	last      gfsvgd.Diagnostics
	failed    error
	positions []float64 // the host's copy of x, valid when fresh
	states    []int
	fresh     bool

	// Device buffers (reals unless said).
	x, xprev, us, dl, pre, th, g, s, nrm, kmat, op, prod, dir, am, av, steps cuda.Ptr
	w, cut, wts, b, c                                                        cuda.Ptr
	logw, rows                                                               cuda.Ptr // float64
	counts, flag                                                             cuda.Ptr // uint32, int32
	sample, cand, inside                                                     cuda.Ptr // reals, reals, uint64

	// Host buffers.
	hlogw, hw, hrows []float64
	rank             []int
	hcounts          []uint32
	hflag            []int32
	hsample          []float64
	hinside          []uint64
	// bracketed counts the medians selected through a bracket, fallbacks
	// those whose bracket missed (selected over the whole matrix instead).
	bracketed, fallbacks int
}

var (
	_ sampler.Positioned = (*SVGD)(nil)
	_ sampler.Failer     = (*SVGD)(nil)
)

// SVGDMemory returns the device memory, in bytes, of GF-SVGD with n
// particles on an RBM of d visible and m hidden units, in float64 or
// float32.
func SVGDMemory(n, d, m int, f32 bool) uint64 {
	es := uint64(8)
	if f32 {
		es = 4
	}
	N, D, M := uint64(n), uint64(d), uint64(m)
	pairs := int64(n) * int64(n-1) / 2
	reals := N*N + 11*N*D + 3*N*M + 2*N*(2*D+1) + D*M + 2*D + M + 2*N + sampleSize + uint64(candidates(pairs))
	return es*reals + 8*2*N + 4*(1<<16) + 16 + 64
}

// NewSVGD starts GF-SVGD on dev for p (an RBM, see SupportsSVGD) from the
// n = p.N particles p.X, with set (Precision chooses float64 or float32).
// The device memory is checked against the free memory before any is
// allocated.
func NewSVGD(dev *Device, p *sampler.Problem, set gfsvgd.Settings) (*SVGD, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("gfsvgd: %w", err)
	}
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("gfsvgd: %w", err)
	}
	set = *set.Resolved().(*gfsvgd.Settings)
	if err := SupportsSVGD(p.Model, p.Transform, set); err != nil {
		return nil, err
	}
	if p.X == nil {
		return nil, fmt.Errorf("gfsvgd: no starting points")
	}
	r := p.Model.(*rbm.RBM)
	n, d, m := p.N, r.Dim(), r.Hidden()
	f32 := set.Precision == sampler.Float32
	s := &SVGD{dev: dev, t: p.Transform, set: set, precision: precision{ctx: dev.ctx, blas: dev.blas, f32: f32}, n: n, d: d, m: m, perEval: 2,
		mem:   arena{ctx: dev.ctx},
		hlogw: make([]float64, n), hw: make([]float64, n), hrows: make([]float64, n),
		hcounts: make([]uint32, 1<<16), hflag: make([]int32, 1), hinside: make([]uint64, 2)}
	if set.Weights == svgd.Rank {
		s.rank = make([]int, n)
	}
	for _, v := range p.X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("gfsvgd: an initial value is %v", v)
		}
	}
	what := fmt.Sprintf("gfsvgd with %d particles on an RBM of %d×%d units in %s", n, d, m, set.Precision)
	if err := s.mem.check(SVGDMemory(n, d, m, f32), what); err != nil {
		return nil, err
	}
	// After the memory check, so that a run too big for the GPU says so
	// first (an H200's 143 GB hold the n² kernel matrix of more
	// particles than the pair limit allows).
	if int64(n)*int64(n-1)/2 >= 1<<32 {
		return nil, fmt.Errorf("gfsvgd on the GPU: %d particles have 2³² pairs or more; at most 92682", n)
	}
	opts := []string{"-DDSTEIN_F32=0"}
	if f32 {
		opts = []string{"-DDSTEIN_F32=1"}
	}
	k, err := dev.kernels(svgdSource, "svgd.cu", opts, svgdKernels...)
	if err != nil {
		return nil, err
	}
	s.k = k
	if err := s.allocate(); err != nil {
		s.Close()
		return nil, err
	}
	// The model's parameters: W row-major d×M, b, c; the cuts.
	W := make([]float64, d*m)
	for i := range d {
		for kk := range m {
			W[i*m+kk] = r.Weight(i, kk)
		}
	}
	cuts := make([]float64, d)
	for i := range d {
		cuts[i] = p.Transform.Cuts(i)[0]
	}
	for _, up := range []struct {
		dst cuda.Ptr
		v   []float64
	}{{s.wts, W}, {s.b, r.VisibleBias()}, {s.c, r.HiddenBias()}, {s.cut, cuts}, {s.x, p.X}} {
		if err := s.upload(up.dst, up.v); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := s.mem.ctx.Fill32(s.am, 0, int(uint64(n*d)*s.size()/4)); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.mem.ctx.Fill32(s.av, 0, int(uint64(n*d)*s.size()/4)); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.evaluate(); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.check(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// allocate allocates every device buffer.
func (s *SVGD) allocate() error {
	n, d, m, es := uint64(s.n), uint64(s.d), uint64(s.m), s.size()
	return s.mem.allocAll([]buffer{
		{&s.x, es * n * d}, {&s.xprev, es * n * d}, {&s.us, es * 2 * n * d}, {&s.dl, es * n * d},
		{&s.pre, es * 2 * n * m}, {&s.th, es * n * m}, {&s.g, es * n * d}, {&s.s, es * n * d},
		{&s.nrm, es * n}, {&s.kmat, es * n * n}, {&s.op, es * n * (2*d + 1)}, {&s.prod, es * n * (2*d + 1)},
		{&s.dir, es * n * d}, {&s.am, es * n * d}, {&s.av, es * n * d}, {&s.steps, es * n * d},
		{&s.w, es * n}, {&s.cut, es * d}, {&s.wts, es * d * m}, {&s.b, es * d}, {&s.c, es * m},
		{&s.logw, 8 * n}, {&s.rows, 8 * n}, {&s.counts, 4 << 16}, {&s.flag, 4},
		{&s.sample, es * sampleSize}, {&s.cand, es * uint64(candidates(int64(s.n)*int64(s.n-1)/2))}, {&s.inside, 16},
	})
}

// Close frees the sampler's device memory; it is not used after.
func (s *SVGD) Close() error {
	s.mem.free()
	return nil
}

// run queues kernel name over total threads.
func (s *SVGD) run(name string, total int64, args ...any) error {
	grid, block := grid1(total)
	return s.k[name].Queue(grid, block, args...)
}

// run2 queues kernel name over the n×n matrix.
func (s *SVGD) run2(name string, args ...any) error {
	grid, block := grid2(s.n)
	return s.k[name].Queue(grid, block, args...)
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// evaluate computes, at the current particles, the memberships, the
// relaxation's hidden products, the log weights (copied to the host) and
// the scores, and counts the evaluations.
func (s *SVGD) evaluate() error {
	n, d, m := int32(s.n), int32(s.d), int32(s.m)
	nd := int64(s.n) * int64(s.d)
	s.fresh = false
	if err := firstErr(
		s.mem.ctx.Fill32(s.flag, 0, 1),
		s.run("relax", nd, n, d, s.x, s.cut, s.real(s.set.Temperature), s.us, s.dl),
		s.gemm(cuda.Gemm{M: 2 * s.n, N: s.m, K: s.d, A: s.us, B: s.wts, C: s.pre}),
		s.run("hidden", int64(s.n)*int64(s.m), n, m, s.pre, s.c, s.th),
		s.gemm(cuda.Gemm{M: s.n, N: s.d, K: s.m, A: s.th, B: s.wts, TransB: true, C: s.g}),
		s.run("rowstats", int64(s.n), n, d, m, s.x, s.us, s.pre, s.b, s.c, s.logw),
		s.run("scores", nd, n, d, s.x, s.dl, s.b, s.g, s.s, s.flag),
		cuda.Download(s.mem.ctx, s.hlogw, s.logw),
		cuda.Download(s.mem.ctx, s.hflag, s.flag),
	); err != nil {
		return fmt.Errorf("gfsvgd on %s: %w", s.dev, err)
	}
	s.evals += s.perEval * int64(s.n)
	return nil
}

// check reports a NaN log weight, a score that is not finite, and a
// surrogate that is zero at every particle, as the CPU's check does.
func (s *SVGD) check() error {
	carried := false
	for j, lw := range s.hlogw {
		if math.IsNaN(lw) || math.IsInf(lw, 1) {
			return fmt.Errorf("gfsvgd: the model or the surrogate returned NaN or +Inf at particle %d", j)
		}
		carried = carried || !math.IsInf(lw, -1)
	}
	if s.hflag[0] != 0 {
		return fmt.Errorf("gfsvgd: a surrogate score is not finite")
	}
	if !carried {
		return fmt.Errorf("gfsvgd: the surrogate density is zero at every particle")
	}
	return nil
}

// direction computes the GF-SVGD direction at the current particles
// with the weights in hw, and returns the bandwidth.
func (s *SVGD) direction() (float64, error) {
	n, d := int32(s.n), int32(s.d)
	nd := int64(s.n) * int64(s.d)
	if err := firstErr(
		s.upload(s.w, s.hw),
		s.gemm(cuda.Gemm{M: s.n, N: s.n, K: s.d, A: s.x, B: s.x, TransB: true, C: s.kmat}),
		s.run("norms", int64(s.n), n, d, s.x, s.nrm),
		s.run2("sqdist", n, s.nrm, s.kmat),
	); err != nil {
		return 0, err
	}
	var med2 float64
	if s.set.Bandwidth.NeedsMedian() && s.n > 1 {
		var err error
		if med2, err = s.median2(); err != nil {
			return 0, err
		}
	}
	h := s.set.Bandwidth.FromMedian(med2, s.n)
	width := 2*s.d + 1
	err := firstErr(
		s.run("kexp", int64(s.n)*int64(s.n), n, s.kmat, s.real(-1/h)),
		s.run("operand", int64(s.n)*int64(width), n, d, s.s, s.x, s.w, s.op),
		s.gemm(cuda.Gemm{M: s.n, N: width, K: s.n, A: s.kmat, B: s.op, C: s.prod}),
		s.run("direction", nd, n, d, s.prod, s.x, s.real(2/h), s.dir),
	)
	return h, err
}

// Step runs one GF-SVGD iteration (see gfsvgd.Sampler.Step). The context
// is looked at before the iteration and before the particles move; once
// they move, the iteration runs to its end (milliseconds on a GPU).
func (s *SVGD) Step(ctx context.Context) error {
	if s.failed != nil {
		return s.failed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.step(ctx)
	if err != nil && ctx.Err() == nil {
		s.failed = err
	}
	return err
}

func (s *SVGD) step(ctx context.Context) error {
	n, d := s.n, s.d
	nd := int64(n) * int64(d)
	ess := svgd.Weights(s.hw, s.hlogw, s.set.Weights, s.set.WeightPowerAt(s.iter), s.rank)
	h, err := s.direction()
	if err != nil {
		return fmt.Errorf("gfsvgd on %s: %w", s.dev, err)
	}
	if err := ctx.Err(); err != nil {
		return err // nothing has moved
	}
	s.iter++
	lr := s.set.LearningRate
	update := func() error {
		if s.set.Optimizer == gfsvgd.Plain {
			return s.run("plain", nd, nd, s.x, s.dir, s.real(lr), s.steps, s.flag)
		}
		c1 := 1 - math.Pow(s.set.Beta1, float64(s.iter))
		c2 := 1 - math.Pow(s.set.Beta2, float64(s.iter))
		return s.run("adam", nd, nd, s.x, s.dir, s.am, s.av, s.real(lr), s.real(s.set.Beta1), s.real(s.set.Beta2),
			s.real(s.set.Epsilon), s.real(c1), s.real(c2), s.steps, s.flag)
	}
	s.fresh = false
	if err := firstErr(
		s.run("copyto", nd, nd, s.x, s.xprev),
		s.mem.ctx.Fill32(s.flag, 0, 1),
		update(),
		cuda.Download(s.mem.ctx, s.hflag, s.flag),
	); err != nil {
		return fmt.Errorf("gfsvgd on %s: %w", s.dev, err)
	}
	if s.hflag[0] != 0 {
		if err := s.run("copyto", nd, nd, s.xprev, s.x); err != nil {
			return err
		}
		return fmt.Errorf("gfsvgd: a particle left the finite reals at iteration %d (bandwidth %v); try a smaller learning rate", s.iter, h)
	}
	if err := firstErr(
		s.run("rowsum", int64(n), int32(n), int32(d), s.steps, s.rows),
		cuda.Download(s.mem.ctx, s.hrows, s.rows),
	); err != nil {
		return fmt.Errorf("gfsvgd on %s: %w", s.dev, err)
	}
	if err := s.evaluate(); err != nil {
		return err
	}
	if err := s.check(); err != nil {
		return err
	}
	var tot float64
	for _, v := range s.hrows {
		tot += v
	}
	s.last = gfsvgd.Diagnostics{Iter: s.iter, WeightESS: ess, Bandwidth: h, MeanStep: tot / float64(n*d)}
	return nil
}

// Iter returns the number of completed iterations.
func (s *SVGD) Iter() int { return s.iter }

// Last returns the diagnostics of the last iteration.
func (s *SVGD) Last() gfsvgd.Diagnostics { return s.last }

// Positions returns the particles, row-major n×d, copied from the device
// (once per iteration). After a failed copy it returns what it last read,
// and Err and every later Step return the failure.
func (s *SVGD) Positions() []float64 {
	if !s.fresh {
		if s.positions == nil {
			s.positions = make([]float64, s.n*s.d)
		}
		if err := s.download(s.positions, s.x); err != nil {
			if s.failed == nil {
				s.failed = fmt.Errorf("gfsvgd on %s: reading the particles: %w", s.dev, err)
			}
			return s.positions
		}
		s.fresh = true
	}
	return s.positions
}

// Err returns the error that stopped the sampler: a failed iteration or
// a failed read of the particles.
func (s *SVGD) Err() error { return s.failed }

// Current returns the particles' states Γ(x), row-major n×d.
func (s *SVGD) Current() []int {
	x := s.Positions()
	if s.states == nil {
		s.states = make([]int, s.n*s.d)
	}
	for j := range s.n {
		s.t.Gamma(s.states[j*s.d:(j+1)*s.d], x[j*s.d:(j+1)*s.d])
	}
	return s.states
}

// Stats reports what gfsvgd's Stats reports (no particle of an RBM is in
// an impossible state, and no move is undone for one); like it, it
// recomputes the weights into the buffer the next step recomputes.
func (s *SVGD) Stats() sampler.Stats {
	ess := svgd.Weights(s.hw, s.hlogw, s.set.Weights, s.set.WeightPowerAt(s.iter), s.rank)
	return sampler.Stats{Evaluations: s.evals, Values: []sampler.Stat{
		{Name: "weight_ess", Value: ess},
		{Name: "bandwidth", Value: s.last.Bandwidth},
		{Name: "mean_step", Value: s.last.MeanStep},
		{Name: "impossible", Value: 0},
		{Name: "rejected", Value: 0},
		{Name: "rejected_moves", Value: 0},
	}}
}
