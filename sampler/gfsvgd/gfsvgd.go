package gfsvgd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dstein/dstein/internal/gemm"
	"github.com/dstein/dstein/internal/numeric"
	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/transform"
)

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
	act   []int     // particles with positive weight
	sxt   []float64 // (2d)×|act|: scores then positions, transposed
	a     []float64 // n×|act| kernel times weights
	rsum  []float64 // row sums of a
	prod  []float64 // n×2d: a·[scores positions] of the active particles
	mul   gemm.ABt
	grad  []float64 // n×d direction
	m1    []float64 // Adam first moment
	m2    []float64 // Adam second moment
	steps []float64 // per-particle sum of |step|
	rbf   *kernel.RBF
	coord *coordState // workspace of the Coordinatewise kernel

	iter  int
	last  Diagnostics
	evalT evalTask
	aT    aTask
	dirT  dirTask
	updT  updateTask
	fresh bool // z, logw, score match x

	imp    []bool    // particle is in a state of probability zero
	xprev  []float64 // particles before the update
	wasImp []bool    // imp before the update
	failed error     // the error that stopped the sampler
}

var _ sampler.Stepper = (*Sampler)(nil)

// New returns a sampler for model m over transform t with surrogate rho,
// starting from n particles drawn from N(InitMean, InitStd²) with r
// (sampler.InitialParticles).
func New(m model.Model, t *transform.Transform, rho transform.Surrogate, n int, set Settings, r *rand.Rand) (*Sampler, error) {
	set = set.withDefaults()
	if n < 1 {
		return nil, fmt.Errorf("gfsvgd: need at least one particle, got %d", n)
	}
	x := sampler.InitialParticles(nil, n, m.Dim(), set.InitMean, set.InitStd, r)
	if set.Sweeps > 0 && set.SweepSeed == 0 {
		set.SweepSeed = r.Uint64()
	}
	return NewFrom(m, t, rho, x, n, set)
}

// NewFrom returns a sampler that starts from the n particles in x (row-major
// n×d); x is copied.
func NewFrom(m model.Model, t *transform.Transform, rho transform.Surrogate, x []float64, n int, set Settings) (*Sampler, error) {
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
	for i := range d {
		if len(m.States(i)) != t.NumStates(i) {
			return nil, fmt.Errorf("gfsvgd: variable %d has %d states but the transform has %d bins", i, len(m.States(i)), t.NumStates(i))
		}
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
		act:    make([]int, 0, n),
		sxt:    make([]float64, 2*d*n),
		a:      make([]float64, n*n),
		rsum:   make([]float64, n),
		prod:   make([]float64, n*2*d),
		grad:   make([]float64, n*d),
		steps:  make([]float64, n),
		xprev:  make([]float64, n*d),
		wasImp: make([]bool, n),
		imp:    make([]bool, n),
	}
	if set.Kernel == Coordinatewise {
		s.coord = newCoordState(n, d)
	} else {
		s.rbf = kernel.NewRBF(n, d)
	}
	if set.Weights == Rank {
		s.rank = make([]int, n)
	}
	if set.Optimizer == Adam {
		s.m1 = make([]float64, n*d)
		s.m2 = make([]float64, n*d)
	}
	s.evalT.s, s.aT.s, s.dirT.s, s.updT.s = s, s, s, s
	return s, nil
}

// Settings returns the settings in use, defaults filled in.
func (s *Sampler) Settings() Settings { return s.set }

// Iter returns the number of completed iterations.
func (s *Sampler) Iter() int { return s.iter }

// Particles returns the current particles, row-major n×d. The caller must
// not modify the slice.
func (s *Sampler) Particles() []float64 { return s.x }

// Last returns the diagnostics of the last iteration.
func (s *Sampler) Last() Diagnostics { return s.last }

// evalTask computes Γ(x_j), the log weight and the score of each particle.
type evalTask struct{ s *Sampler }

func (e *evalTask) Do(lo, hi int) {
	for j := lo; j < hi; j++ {
		e.s.evalParticle(j)
	}
}

// evalParticle computes Γ(x_j), the log weight, the impossibility flag and
// the score of particle j. A NaN log weight marks a model or surrogate that
// returned NaN (or +Inf); check reports it.
func (s *Sampler) evalParticle(j int) {
	d := s.d
	xj := s.x[j*d : (j+1)*d]
	zj := s.t.Gamma(s.z[j*d:(j+1)*d], xj)
	lp := s.m.LogProb(zj)
	lr := s.rho.LogProbScore(s.score[j*d:(j+1)*d], xj)
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

// evaluate refreshes z, logw, imp and score at the current particles and
// checks them.
func (s *Sampler) evaluate() error {
	if s.fresh {
		return nil
	}
	parallel.For(s.n, parallel.Grain(s.n, 1), &s.evalT)
	if err := s.check(); err != nil {
		return err
	}
	s.fresh = true
	return nil
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

// weights turns logw into normalised weights and returns their ESS. Entries
// of −Inf (ρ = 0) get weight zero. Entries of +Inf (impossible states) share
// all the weight equally, whatever the weighting.
func (s *Sampler) weights() float64 {
	copy(s.w, s.logw)
	if s.set.Weights == SelfNormalized {
		if b := s.weightPower(); b != 1 {
			for j, v := range s.w {
				if !math.IsInf(v, 0) {
					s.w[j] = b * v
				}
			}
		}
		return numeric.NormalizeLogWeights(s.w)
	}
	for _, v := range s.logw {
		if math.IsInf(v, 1) {
			return numeric.NormalizeLogWeights(s.w)
		}
	}
	// Rank weights: γ_j = n / #{l : μ_l ≥ μ_j}, zero where μ_j = 0.
	for j := range s.rank {
		s.rank[j] = j
	}
	lw := s.logw
	slices.SortFunc(s.rank, func(a, b int) int {
		switch {
		case lw[a] < lw[b]:
			return -1
		case lw[a] > lw[b]:
			return 1
		}
		return a - b
	})
	n := s.n
	var sum float64
	for k := 0; k < n; {
		// Ties share the count of elements ≥ their value.
		e := k
		for e < n && lw[s.rank[e]] == lw[s.rank[k]] {
			e++
		}
		g := float64(n) / float64(n-k)
		if math.IsInf(lw[s.rank[k]], -1) {
			g = 0
		}
		for _, j := range s.rank[k:e] {
			s.w[j] = g
		}
		sum += g * float64(e-k)
		k = e
	}
	var s2 float64
	for j := range s.w {
		s.w[j] /= sum
		s2 += s.w[j] * s.w[j]
	}
	return 1 / s2
}

// weightPower returns the tempering exponent β of the weights at the
// current iteration.
func (s *Sampler) weightPower() float64 {
	b := s.set.WeightPower
	if b == 0 || b == 1 {
		return 1
	}
	if a := s.set.WeightAnneal; a > 0 {
		b += (1 - b) * math.Min(1, float64(s.iter)/float64(a))
	}
	return b
}

// aTask fills row i of a with k(x_i, x_j) w_j over the active particles j,
// and its sum.
type aTask struct{ s *Sampler }

func (t *aTask) Do(lo, hi int) {
	s := t.s
	n, na := s.n, len(s.act)
	for i := lo; i < hi; i++ {
		ai := s.a[i*na : (i+1)*na]
		ki := s.rbf.K[i*n : (i+1)*n]
		var rsum float64
		for a, j := range s.act {
			v := ki[j] * s.w[j]
			ai[a] = v
			rsum += v
		}
		s.rsum[i] = rsum
	}
}

// dirTask turns the products into the direction of particles [lo, hi):
// Δx_i = Σ_j a_ij s_j + (2/h)(x_i Σ_j a_ij − Σ_j a_ij x_j).
type dirTask struct {
	s *Sampler
	h float64
}

func (t *dirTask) Do(lo, hi int) {
	s := t.s
	d := s.d
	c := 2 / t.h
	for i := lo; i < hi; i++ {
		xi := s.x[i*d : (i+1)*d]
		gi := s.grad[i*d : (i+1)*d]
		pi := s.prod[i*2*d : (i+1)*2*d]
		rs := s.rsum[i]
		for q := range d {
			gi[q] = pi[q] + c*(rs*xi[q]-pi[d+q])
		}
	}
}

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
		var st float64
		for k := i * d; k < (i+1)*d; k++ {
			g := s.grad[k]
			var step float64
			if s.set.Optimizer == Adam {
				s.m1[k] = s.set.Beta1*s.m1[k] + (1-s.set.Beta1)*g
				s.m2[k] = s.set.Beta2*s.m2[k] + (1-s.set.Beta2)*g*g
				step = lr * (s.m1[k] / u.c1) / (math.Sqrt(s.m2[k]/u.c2) + s.set.Epsilon)
			} else {
				step = lr * g
			}
			s.x[k] += step
			st += math.Abs(step)
		}
		s.steps[i] = st
	}
}

// Step runs one GF-SVGD iteration. After an error the sampler is left as
// it was before the failing iteration's update could corrupt it, and every
// later Step returns the same error.
func (s *Sampler) Step() error {
	if s.failed != nil {
		return s.failed
	}
	if err := s.step(); err != nil {
		s.failed = err
		return err
	}
	return nil
}

func (s *Sampler) step() error {
	if err := s.evaluate(); err != nil {
		return err
	}
	n, d := s.n, s.d
	ess := s.weights()
	impossible := 0
	s.act = s.act[:0]
	for j, w := range s.w {
		if w > 0 {
			s.act = append(s.act, j)
		}
		if s.imp[j] {
			impossible++
		}
	}
	var h float64
	if s.coord != nil {
		h = s.coordDirection()
	} else {
		h = s.rbfDirection()
	}

	s.iter++
	if s.set.Optimizer == Adam {
		s.updT.c1 = 1 - math.Pow(s.set.Beta1, float64(s.iter))
		s.updT.c2 = 1 - math.Pow(s.set.Beta2, float64(s.iter))
	}
	copy(s.xprev, s.x)
	copy(s.wasImp, s.imp)
	parallel.For(n, parallel.Grain(n, 1), &s.updT)
	for _, v := range s.x {
		if bad(v) {
			copy(s.x, s.xprev)
			return fmt.Errorf("gfsvgd: a particle left the finite reals at iteration %d (bandwidth %v); try a smaller learning rate", s.iter, h)
		}
	}
	// Evaluate the new positions (the next iteration needs them) and undo
	// the moves that took a particle out of the support of p*. A rejected
	// particle also forgets its Adam momentum, which points the wrong way.
	s.fresh = false
	parallel.For(s.n, parallel.Grain(s.n, 1), &s.evalT)
	rejected := 0
	for j, was := range s.wasImp {
		if !was && s.imp[j] {
			copy(s.x[j*d:(j+1)*d], s.xprev[j*d:(j+1)*d])
			if s.m1 != nil {
				clear(s.m1[j*d : (j+1)*d])
			}
			s.evalParticle(j)
			s.steps[j] = 0
			rejected++
		}
	}
	if err := s.check(); err != nil {
		return err
	}
	s.fresh = true
	var tot float64
	for _, v := range s.steps {
		tot += v
	}
	s.last = Diagnostics{Iter: s.iter, WeightESS: ess, Bandwidth: h, MeanStep: tot / float64(n*d), Impossible: impossible, Rejected: rejected}
	return nil
}

// rbfDirection fills s.grad with the direction of the RBF kernel and
// returns its bandwidth.
func (s *Sampler) rbfDirection() float64 {
	n, d, na := s.n, s.d, len(s.act)
	h := s.rbf.Compute(s.x, s.set.Bandwidth)
	// Scores and positions of the active particles, transposed.
	for a, j := range s.act {
		for q := range d {
			s.sxt[q*na+a] = s.score[j*d+q]
			s.sxt[(d+q)*na+a] = s.x[j*d+q]
		}
	}
	parallel.For(n, parallel.Grain(n, 1), &s.aT)
	s.mul = gemm.ABt{C: s.prod, A: s.a, B: s.sxt, M: n, N: 2 * d, K: na, Ldc: 2 * d, Lda: na, Ldb: na}
	s.mul.Mul()
	s.dirT.h = h
	parallel.For(n, parallel.Grain(n, 1), &s.dirT)
	return h
}

// Result is the state of the particles after the last iteration.
type Result struct {
	// Samples are Γ of the particles, after Settings.Sweeps Gibbs sweeps
	// when that is set.
	Samples *sampler.Samples
	// WeightESS is the effective sample size of the weights at the final
	// particles.
	WeightESS float64
	// Impossible counts final particles in zero-probability states.
	Impossible int
}

// Result evaluates the current particles and returns their states. The
// samples are a copy.
func (s *Sampler) Result() (*Result, error) {
	if err := s.evaluate(); err != nil {
		return nil, err
	}
	ess := s.weights()
	imp := 0
	for _, v := range s.imp {
		if v {
			imp++
		}
	}
	z := append([]int(nil), s.z...)
	if s.set.Sweeps > 0 {
		s.sweep(z)
		imp = 0
		for j := range s.n {
			if math.IsInf(s.m.LogProb(z[j*s.d:(j+1)*s.d]), -1) {
				imp++
			}
		}
	}
	return &Result{Samples: &sampler.Samples{N: s.n, D: s.d, Z: z}, WeightESS: ess, Impossible: imp}, nil
}
