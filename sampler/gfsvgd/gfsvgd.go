package gfsvgd

import (
	"context"
	"fmt"
	"math"

	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/optim"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/svgd"
	"github.com/dstein/dstein/transform"
)

// Name is the name of gradient-free SVGD in the sampler registry; pipelines name the method by it.
const Name = "gfsvgd"

func init() {
	sampler.Register(sampler.Method{
		Name:        Name,
		Description: "gradient-free SVGD (the paper's method): n interacting particles on the continuous parameterization, moved by a surrogate's score with importance weights",
		NewSettings: func() sampler.Settings { return new(Settings) },
		New: func(p *sampler.Problem, s sampler.Settings) (sampler.Sampler, error) {
			return New(p, *s.(*Settings))
		},
		Iters:       500,
		Unit:        "iteration",
		Continuous:  true,
		Approximate: true,
		Warnings:    warnings,
		Memory:      memory,
	})
}

// warnings flags importance weights that have collapsed: an effective
// sample size below n/10 at the final particles means that a few
// particles carry the estimate.
func warnings(st sampler.Stats, n int) []string {
	ess, ok := st.Value("weight_ess")
	if !ok || ess >= float64(n)/10 {
		return nil
	}
	return []string{fmt.Sprintf("gfsvgd: the importance weights' ESS is %.1f of %d particles (< n/10): the surrogate is far from the model; the estimates rest on a few particles", ess, n)}
}

// Diagnostics describe one iteration.
type Diagnostics struct {
	// Iter is the number of iterations completed.
	Iter int
	// WeightESS is 1/Σ w_j² of the normalised weights used by the
	// iteration: n when all weights are equal, 1 when one particle has
	// them all.
	WeightESS float64
	// Bandwidth is the kernel bandwidth h of the iteration.
	Bandwidth float64
	// MeanStep is the mean absolute change of a particle coordinate.
	MeanStep float64
	// Impossible counts particles whose state had probability zero at
	// the start of the iteration.
	Impossible int
	// Rejected counts moves undone because they would have taken a
	// particle from a possible state into an impossible one.
	Rejected int
}

// Sampler is the state of a GF-SVGD run. It is not safe for concurrent use.
type Sampler struct {
	m   model.Model
	t   *transform.Transform
	rho transform.Surrogate
	set Settings
	n   int
	d   int

	x     []float64 // n×d particles
	z     []int     // n×d states Γ(x)
	score []float64 // n×d surrogate scores
	logw  []float64 // log ρ/p_c per particle
	w     []float64 // normalised weights
	rank  []int     // scratch for rank weights
	dir   *svgd.Direction[float64]
	grad  []float64 // n×d direction
	adam  *optim.Adam[float64]
	steps []float64 // per-particle sum of |step|

	iter     int
	last     Diagnostics
	rejected int   // moves undone over the whole run
	evals    int64 // model evaluations
	perEval  int64 // evaluations per particle evaluation
	// batch, when not nil, evaluates the surrogate at all particles at
	// once (an RBM's relaxation by matrix products) into lr.
	batch transform.SurrogateBatch
	lr    []float64
	// lpBatch, when not nil, evaluates log p* at all particles' states at
	// once (an RBM's preactivations by a matrix product) into lp.
	lpBatch model.LogProbBatcher
	lp      []float64
	evalT   evalTask
	updT    updateTask

	imp    []bool          // particle is in a state of probability zero
	xprev  []float64       // particles before the update
	wasImp []bool          // imp before the update
	lwPrev []float64       // logw before the update
	failed error           // the error that stopped the sampler
	ctx    context.Context // the context of the Step in progress
}

var _ sampler.Positioned = (*Sampler)(nil)

// New returns a sampler for p.Model over p.Transform that starts from the
// n = p.N particles p.X (copied). It builds the surrogate its settings
// name and evaluates the particles, so an error of the model or surrogate at
// the start is returned here.
func New(p *sampler.Problem, set Settings) (*Sampler, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("gfsvgd: %w", err)
	}
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("gfsvgd: %w", err)
	}
	if p.X == nil {
		return nil, fmt.Errorf("gfsvgd: no starting points")
	}
	set = set.withDefaults()
	rho, err := transform.ByName(set.Surrogate, p.Model, p.Transform, set.Temperature)
	if err != nil {
		return nil, fmt.Errorf("gfsvgd: %w", err)
	}
	return NewWith(p.Model, p.Transform, rho, p.X, p.N, set)
}

// NewWith returns a sampler with a surrogate of the caller's making (the
// settings' Surrogate and Temperature are then only recorded), starting
// from the n particles in x (row-major n×d, copied).
func NewWith(m model.Model, t *transform.Transform, rho transform.Surrogate, x []float64, n int, set Settings) (*Sampler, error) {
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("gfsvgd: %w", err)
	}
	set = set.withDefaults()
	d := m.Dim()
	switch {
	case n < 1:
		return nil, fmt.Errorf("gfsvgd: need at least one particle, got %d", n)
	case d < 1:
		return nil, fmt.Errorf("gfsvgd: model has no variables")
	case t.Dim() != d:
		return nil, fmt.Errorf("gfsvgd: model has %d variables but the transform has %d", d, t.Dim())
	case len(x) != n*d:
		return nil, fmt.Errorf("gfsvgd: %d initial values for %d particles of dimension %d", len(x), n, d)
	}
	for k, v := range x {
		if bad(v) {
			return nil, fmt.Errorf("gfsvgd: initial value %d is %v", k, v)
		}
	}
	s := &Sampler{
		m: m, t: t, rho: rho, set: set, n: n, d: d,
		x:      append([]float64(nil), x...),
		z:      make([]int, n*d),
		score:  make([]float64, n*d),
		logw:   make([]float64, n),
		w:      make([]float64, n),
		dir:    svgd.New[float64](n, d, set.Kernel),
		grad:   make([]float64, n*d),
		steps:  make([]float64, n),
		xprev:  make([]float64, n*d),
		wasImp: make([]bool, n),
		lwPrev: make([]float64, n),
		imp:    make([]bool, n),
		ctx:    context.Background(),
	}
	if set.Weights == svgd.Rank {
		s.rank = make([]int, n)
	}
	if set.Optimizer == Adam {
		s.adam = optim.NewAdam[float64](n*d, set.Beta1, set.Beta2, set.Epsilon)
	}
	s.perEval = 1
	if _, ok := rho.(transform.BaseSurrogate); !ok {
		s.perEval = 2 // the relaxation is a second evaluation of the model
	}
	if bs, ok := rho.(transform.BatchSurrogate); ok {
		if s.batch = bs.NewBatch(n); s.batch != nil {
			s.lr = make([]float64, n)
		}
	}
	if lb, ok := m.(model.LogProbBatch); ok {
		s.lpBatch, s.lp = lb.NewLogProbBatch(n), make([]float64, n)
	}
	s.evalT.s, s.updT.s = s, s
	if err := s.evaluate(); err != nil {
		return nil, err
	}
	return s, nil
}

// Settings returns the settings in use, defaults filled in.
func (s *Sampler) Settings() Settings { return s.set }

// Iter returns the number of completed iterations.
func (s *Sampler) Iter() int { return s.iter }

// Positions returns the current particles, row-major n×d.
func (s *Sampler) Positions() []float64 { return s.x }

// Current returns the particles' states Γ(x), row-major n×d.
func (s *Sampler) Current() []int { return s.z }

// Last returns the diagnostics of the last iteration.
func (s *Sampler) Last() Diagnostics { return s.last }

// Stats reports, at the current particles: weight_ess (the effective
// sample size of the importance weights), impossible (particles in states
// of probability zero); of the last iteration: bandwidth, mean_step (mean
// absolute change of a coordinate) and rejected (moves undone because they
// led into an impossible state); and rejected_moves over the whole run.
// Evaluations count log p* (and, with the relaxed surrogate, its
// relaxation) once per particle at the start and after every iteration.
func (s *Sampler) Stats() sampler.Stats {
	imp := 0
	for _, v := range s.imp {
		if v {
			imp++
		}
	}
	ess := svgd.Weights(s.w, s.logw, s.set.Weights, s.weightPower(), s.rank)
	return sampler.Stats{Evaluations: s.evals, Values: []sampler.Stat{
		{Name: "weight_ess", Value: ess},
		{Name: "bandwidth", Value: s.last.Bandwidth},
		{Name: "mean_step", Value: s.last.MeanStep},
		{Name: "impossible", Value: float64(imp)},
		{Name: "rejected", Value: float64(s.last.Rejected)},
		{Name: "rejected_moves", Value: float64(s.rejected)},
	}}
}

// evalTask evaluates chunks of particles, each chunk start to end on one
// core: the surrogate's batch of its rows, Γ and the batch of log p* of
// its rows, then each particle's log weight and score. The batches' rows
// give the bits of whole batches, so the chunks never change a result.
type evalTask struct{ s *Sampler }

func (e *evalTask) Do(lo, hi int) {
	s := e.s
	d := s.d
	if s.ctx.Err() != nil {
		return
	}
	if s.batch != nil {
		s.batch.LogProbScoresRows(lo, hi, s.lr, s.score, s.x)
	}
	if s.lpBatch != nil {
		for j := lo; j < hi; j++ {
			s.t.Gamma(s.z[j*d:(j+1)*d], s.x[j*d:(j+1)*d])
		}
		s.lpBatch.LogProbRows(lo, hi, s.lp, s.z)
	}
	for j := lo; j < hi; j++ {
		if s.ctx.Err() != nil {
			return
		}
		s.evalParticle(j, s.batch != nil, s.lpBatch != nil)
	}
}

// evalAll evaluates every particle, in one parallel loop over chunks of
// particles (evalTask). When the step's context is canceled it stops
// early (the particles not evaluated keep their old values), and the
// caller undoes the iteration.
func (s *Sampler) evalAll() {
	// With both batches a particle costs their rows' work and a few
	// operations per coordinate (Γ, the base's log density, the log
	// weight); without them the model's own evaluations, of unknown cost.
	grain := parallel.Grain(s.n, 1)
	if s.batch != nil && s.lpBatch != nil {
		grain = parallel.GrainWork(s.n, s.batch.RowWork()+s.lpBatch.RowWork()+8*float64(s.d))
	}
	parallel.For(s.n, grain, &s.evalT)
	if s.ctx.Err() == nil {
		s.evals += s.perEval * int64(s.n)
	}
}

// evalParticle computes Γ(x_j), the log weight, the impossibility flag and
// the score of particle j; with batched, the surrogate's value and score
// are already in lr[j] and the score, with lpBatched Γ(x_j) and log p* in
// z and lp[j]. A NaN log weight marks a model or surrogate that returned
// NaN (or +Inf); check reports it.
func (s *Sampler) evalParticle(j int, batched, lpBatched bool) {
	d := s.d
	xj := s.x[j*d : (j+1)*d]
	var lp float64
	if lpBatched {
		lp = s.lp[j]
	} else {
		lp = s.m.LogProb(s.t.Gamma(s.z[j*d:(j+1)*d], xj))
	}
	var lr float64
	if batched {
		lr = s.lr[j]
	} else {
		lr = s.rho.LogProbScore(s.score[j*d:(j+1)*d], xj)
	}
	s.imp[j] = math.IsInf(lp, -1)
	var lw float64
	switch {
	case math.IsNaN(lp) || math.IsInf(lp, 1) || math.IsNaN(lr) || math.IsInf(lr, 1):
		lw = math.NaN()
	case math.IsInf(lr, -1):
		lw = math.Inf(-1) // ρ = 0: no weight, whatever p_c is
	case s.imp[j]:
		lw = math.Inf(1) // p_c = 0 < ρ
	default:
		lw = (lr - s.t.LogBase(xj)) - lp
	}
	s.logw[j] = lw
}

// evaluate computes z, logw, imp and score at the current particles and
// checks them.
func (s *Sampler) evaluate() error {
	s.evalAll()
	return s.check()
}

// check reports a NaN log weight, a non-finite score at a particle that can
// carry weight, and a surrogate that is zero at every particle.
func (s *Sampler) check() error {
	d := s.d
	carried := false
	for j, lw := range s.logw {
		if math.IsNaN(lw) {
			return fmt.Errorf("gfsvgd: the model or the surrogate returned NaN or +Inf at particle %d (x = %v, z = %v)", j, s.x[j*d:(j+1)*d], s.z[j*d:(j+1)*d])
		}
		if math.IsInf(lw, -1) {
			continue
		}
		carried = true
		for _, g := range s.score[j*d : (j+1)*d] {
			if bad(g) {
				return fmt.Errorf("gfsvgd: surrogate score is not finite at particle %d (x = %v)", j, s.x[j*d:(j+1)*d])
			}
		}
	}
	if !carried {
		return fmt.Errorf("gfsvgd: the surrogate density is zero at every particle")
	}
	return nil
}

// weightPower returns the tempering exponent β of the weights at the
// current iteration.
func (s *Sampler) weightPower() float64 { return s.set.WeightPowerAt(s.iter) }

// updateTask applies the optimizer to particles [lo, hi).
type updateTask struct {
	s  *Sampler
	c1 float64 // Adam bias corrections
	c2 float64
}

func (u *updateTask) Do(lo, hi int) {
	s := u.s
	d := s.d
	lr := s.set.LearningRate
	for i := lo; i < hi; i++ {
		if s.adam != nil {
			s.steps[i] = s.adam.Update(s.x, s.grad, i*d, (i+1)*d, lr, u.c1, u.c2)
			continue
		}
		var st float64
		for k := i * d; k < (i+1)*d; k++ {
			step := lr * s.grad[k]
			s.x[k] += step
			st += math.Abs(step)
		}
		s.steps[i] = st
	}
}

// Step runs one GF-SVGD iteration. After an error the sampler is left as
// it was before the failing iteration's update could corrupt it, and every
// later Step returns the same error. Step looks at ctx while it computes
// the direction (svgd.Direction.ComputeContext) and while it evaluates the
// moved particles (before each particle); when ctx is canceled it undoes
// the iteration (the particles, their states, weights and flags are those
// before it; the scores, which only a next iteration would use, are not
// restored) and returns ctx.Err(), from then on (see sampler.Sampler).
func (s *Sampler) Step(ctx context.Context) error {
	if s.failed != nil {
		return s.failed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.ctx = ctx
	err := s.step()
	s.ctx = context.Background()
	if err != nil {
		s.failed = err
		return err
	}
	return nil
}

// undo puts back the particles, states, weights and flags of before the
// interrupted iteration's update.
func (s *Sampler) undo() {
	s.iter--
	copy(s.x, s.xprev)
	copy(s.imp, s.wasImp)
	copy(s.logw, s.lwPrev)
	for j := range s.n {
		s.t.Gamma(s.z[j*s.d:(j+1)*s.d], s.x[j*s.d:(j+1)*s.d])
	}
}

func (s *Sampler) step() error {
	n, d := s.n, s.d
	ess := svgd.Weights(s.w, s.logw, s.set.Weights, s.weightPower(), s.rank)
	impossible := 0
	for _, v := range s.imp {
		if v {
			impossible++
		}
	}
	h, err := s.dir.ComputeContext(s.ctx, s.grad, s.x, s.score, s.w, s.set.Bandwidth)
	if err != nil {
		return err // nothing has moved yet
	}
	s.iter++
	if s.adam != nil {
		s.updT.c1, s.updT.c2 = s.adam.Corrections(s.iter)
	}
	copy(s.xprev, s.x)
	copy(s.wasImp, s.imp)
	copy(s.lwPrev, s.logw)
	parallel.For(n, parallel.GrainWork(n, 10*float64(d)), &s.updT) // Adam: about 10 operations a coordinate
	for _, v := range s.x {
		if bad(v) {
			copy(s.x, s.xprev)
			return fmt.Errorf("gfsvgd: a particle left the finite reals at iteration %d (bandwidth %v); try a smaller learning rate", s.iter, h)
		}
	}
	// Evaluate the new positions (the next iteration needs them) and undo
	// the moves that took a particle out of the support of p*. A rejected
	// particle also forgets its Adam momentum, which points the wrong way.
	s.evalAll()
	if err := s.ctx.Err(); err != nil {
		s.undo()
		return err
	}
	rejected := 0
	for j, was := range s.wasImp {
		if !was && s.imp[j] {
			copy(s.x[j*d:(j+1)*d], s.xprev[j*d:(j+1)*d])
			if s.adam != nil {
				s.adam.Reset(j*d, (j+1)*d)
			}
			s.evalParticle(j, false, false)
			s.steps[j] = 0
			rejected++
		}
	}
	if err := s.check(); err != nil {
		return err
	}
	s.rejected += rejected
	var tot float64
	for _, v := range s.steps {
		tot += v
	}
	s.last = Diagnostics{Iter: s.iter, WeightESS: ess, Bandwidth: h, MeanStep: tot / float64(n*d), Impossible: impossible, Rejected: rejected}
	return nil
}
