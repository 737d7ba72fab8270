package dhmc

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/transform"
)

// Defaults of Settings; see the package documentation for how they were
// chosen.
const (
	// DefaultStepSize is ε when Settings.StepSize is 0.
	DefaultStepSize = 0.5
	// DefaultSteps is L when Settings.Steps is 0.
	DefaultSteps = 8
	// DefaultStepJitter is the relative jitter of ε when
	// Settings.StepJitter is 0.
	DefaultStepJitter = 0.2
)

// Settings configure discontinuous HMC. The zero value is valid; each field
// documents its default.
type Settings struct {
	// StepSize is ε, how far one integration step moves each coordinate
	// (before jitter). Default (0) is DefaultStepSize.
	StepSize float64 `json:"step_size" flag:"step-size,positive" help:"step size: DHMC's integration step ε, DMALA's proposal step α, DLMC's time h"`
	// Steps is L, the number of integration steps per iteration; each
	// step visits every coordinate once. Default (0) is DefaultSteps.
	Steps int `json:"steps" flag:"steps,positive" help:"integration steps per iteration"`
	// StepJitter is j: every iteration, each chain draws its step size
	// uniformly from [(1−j)ε, (1+j)ε]. Default (0) is DefaultStepJitter;
	// a negative value means no jitter (every step is exactly ε). It must
	// be below 1. Without jitter a chain's coordinates stay on the
	// lattice x₀ + εℤ, which is not ergodic on R^d and biases Γ(x).
	StepJitter float64 `json:"step_jitter"`
}

func (s Settings) withDefaults() Settings {
	if s.StepSize == 0 {
		s.StepSize = DefaultStepSize
	}
	if s.Steps == 0 {
		s.Steps = DefaultSteps
	}
	if s.StepJitter == 0 {
		s.StepJitter = DefaultStepJitter
	}
	if s.StepJitter < 0 {
		s.StepJitter = -1
	}
	return s
}

// Resolved returns the settings with every default filled in.
func (s *Settings) Resolved() sampler.Settings { r := s.withDefaults(); return &r }

func bad(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }

// Validate reports the first setting that cannot be used.
func (s *Settings) Validate() error {
	r := s.withDefaults()
	switch {
	case bad(r.StepSize) || r.StepSize < 0:
		return fmt.Errorf("step size is %v; want a finite number > 0", r.StepSize)
	case r.Steps < 0:
		return fmt.Errorf("steps per iteration is %d; want at least 1", r.Steps)
	case math.IsNaN(r.StepJitter) || r.StepJitter >= 1:
		return fmt.Errorf("step jitter is %v; want a number below 1 (negative for none)", r.StepJitter)
	}
	return nil
}

// Counts count what the integrator did, summed over chains and
// iterations. Updates = Moves + Reflections.
type Counts struct {
	// Updates counts coordinate updates: n·L·d per iteration.
	Updates int64
	// Moves counts updates that moved the coordinate by ± the step size.
	Moves int64
	// Crossings counts moves that took the coordinate into another bin
	// (changed the state).
	Crossings int64
	// Reflections counts updates that reversed the momentum instead of
	// moving.
	Reflections int64
	// Evaluations counts changes of log p* evaluated: one
	// Tracker.DeltaLogProb call per proposal that leaves its bin, taken or
	// not.
	Evaluations int64
	// Escapes counts moves out of a zero-probability state (ΔU = −∞),
	// which are always taken and leave the momentum unchanged.
	Escapes int64
}

func (a *Counts) add(b Counts) {
	a.Updates += b.Updates
	a.Moves += b.Moves
	a.Crossings += b.Crossings
	a.Reflections += b.Reflections
	a.Evaluations += b.Evaluations
	a.Escapes += b.Escapes
}

// chain is the state of one chain: its generator, the tracker at Γ(x), its
// own copies of Γ(x) and of the bin of each coordinate, the momentum and the
// visiting order.
type chain struct {
	src   *rand.ChaCha8 // the stream behind r, for the shuffles
	r     *rand.Rand
	tr    model.Tracker
	z     []int // Γ(x)
	bin   []int // bin of each coordinate in the transform
	p     []float64
	perm  []int
	stats Counts
	err   error
}

// Sampler is the state of n independent DHMC chains. It is not safe for
// concurrent use.
type Sampler struct {
	m      model.Model
	t      *transform.Transform
	base   transform.Base
	normal bool // base is transform.Normal: ΔU of the base in closed form
	set    Settings
	n, d   int

	x      []float64   // n×d positions, row-major
	cuts   [][]float64 // the transform's cut points per coordinate
	chains []chain
	cur    []int
	iter   int
	task   stepTask
	failed error
	ctx    context.Context // the context of the Step in progress
}

var _ sampler.Positioned = (*Sampler)(nil)

// Name is the name of discontinuous HMC in the sampler registry; pipelines name the method by it.
const Name = "dhmc"

func init() {
	sampler.Register(sampler.Method{
		Name:        Name,
		Description: "n independent chains of discontinuous HMC (Nishimura, Dunson & Lu) on p_c: Laplace momentum, coordinate-wise reflect-or-refract integrator",
		NewSettings: func() sampler.Settings { return new(Settings) },
		New: func(p *sampler.Problem, s sampler.Settings) (sampler.Sampler, error) {
			return New(p, *s.(*Settings))
		},
		Iters:      500,
		Unit:       "iteration",
		Continuous: true,
		Memory: func(m model.Model, n int, _ sampler.Settings) float64 {
			// Positions, and per chain its state, bins, momentum, order and
			// tracker.
			return float64(n) * (8*8*float64(m.Dim()) + 256)
		},
	})
}

// New returns n = p.N chains that start at the points p.X (copied).
// Chain c draws its transitions from p.Key.ForIndex(rng.Sample, c).
// Starting points in zero-probability states are allowed (see the package
// documentation).
func New(p *sampler.Problem, set Settings) (*Sampler, error) {
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("dhmc: %w", err)
	}
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("dhmc: %w", err)
	}
	m, n, d := p.Model, p.N, p.Model.Dim()
	if uint64(d) > math.MaxUint32 {
		return nil, fmt.Errorf("dhmc: model has %d variables; at most %d are supported", d, uint64(math.MaxUint32))
	}
	if p.X == nil {
		return nil, fmt.Errorf("dhmc: no starting points")
	}
	for k, v := range p.X {
		if bad(v) {
			return nil, fmt.Errorf("dhmc: initial value %d (chain %d, coordinate %d) is %v; want a finite number", k, k/d, k%d, v)
		}
	}
	return newSampler(m, p.Transform, append([]float64(nil), p.X...), n, set.withDefaults(), p.Key)
}

// newSampler takes ownership of x.
func newSampler(m model.Model, t *transform.Transform, x []float64, n int, set Settings, key rng.Key) (*Sampler, error) {
	d := m.Dim()
	s := &Sampler{m: m, t: t, base: t.Base(), set: set, n: n, d: d, x: x,
		cuts: make([][]float64, d), chains: make([]chain, n), cur: make([]int, n*d), ctx: context.Background()}
	_, s.normal = s.base.(transform.Normal)
	for i := range d {
		s.cuts[i] = t.Cuts(i)
	}
	for c := range s.chains {
		ch := &s.chains[c]
		ch.src = key.ForIndex(rng.Sample, c).Source()
		ch.r = rand.New(ch.src)
		ch.z = t.Gamma(nil, x[c*d:(c+1)*d])
		ch.bin = make([]int, d)
		for i, zi := range ch.z {
			ch.bin[i] = t.BinOf(i, zi)
		}
		ch.tr = model.NewTracker(m, ch.z)
		ch.p = make([]float64, d)
		ch.perm = make([]int, d)
		for i := range ch.perm {
			ch.perm[i] = i
		}
	}
	s.task.s = s
	return s, nil
}

// Settings returns the settings in use, defaults filled in (a negative
// StepJitter is reported as −1).
func (s *Sampler) Settings() Settings { return s.set }

// Iter returns the number of completed iterations.
func (s *Sampler) Iter() int { return s.iter }

// Positions returns the current positions, row-major n×d.
func (s *Sampler) Positions() []float64 { return s.x }

// Current returns the current states Γ(x) of the chains, one row per chain.
func (s *Sampler) Current() []int {
	for c := range s.chains {
		copy(s.cur[c*s.d:(c+1)*s.d], s.chains[c].z)
	}
	return s.cur
}

// Impossible counts the chains whose current state has probability zero.
func (s *Sampler) Impossible() int {
	k := 0
	for c := range s.chains {
		if math.IsInf(s.m.LogProb(s.chains[c].z), -1) {
			k++
		}
	}
	return k
}

// CrossingRate returns the fraction of moves so far that took a coordinate
// into another bin, or 0 before any move.
func (s *Sampler) CrossingRate() float64 {
	st := s.Counts()
	if st.Moves == 0 {
		return 0
	}
	return float64(st.Crossings) / float64(st.Moves)
}

// ReflectionRate returns the fraction of coordinate updates so far that
// reflected the momentum instead of moving, or 0 before any update.
func (s *Sampler) ReflectionRate() float64 {
	st := s.Counts()
	if st.Updates == 0 {
		return 0
	}
	return float64(st.Reflections) / float64(st.Updates)
}

// Counts returns the integrator's counts so far, summed over chains.
func (s *Sampler) Counts() Counts {
	var st Counts
	for c := range s.chains {
		st.add(s.chains[c].stats)
	}
	return st
}

// Stats reports crossing_rate (the fraction of moves that took a
// coordinate into another bin), reflection_rate (the fraction of
// coordinate updates that reversed the momentum instead of moving) and
// escapes (moves out of zero-probability states). Evaluations count the
// changes of log p* evaluated (Tracker.DeltaLogProb calls).
func (s *Sampler) Stats() sampler.Stats {
	st := s.Counts()
	return sampler.Stats{Evaluations: st.Evaluations, Values: []sampler.Stat{
		{Name: "crossing_rate", Value: s.CrossingRate()},
		{Name: "reflection_rate", Value: s.ReflectionRate()},
		{Name: "escapes", Value: float64(st.Escapes)},
	}}
}

// stepTask runs one iteration of chains [lo, hi).
type stepTask struct{ s *Sampler }

func (t *stepTask) Do(lo, hi int) {
	for c := lo; c < hi; c++ {
		if t.s.ctx.Err() != nil {
			return
		}
		t.s.iterate(c)
	}
}

// Step runs one iteration of every chain: a fresh Laplace momentum, a step
// size drawn with jitter, and Steps integration steps. Chains run in
// parallel; each uses only its own generator, so results do not depend on
// GOMAXPROCS. Step returns an error when the model's change of log p* (or
// the base's log-density) is NaN; the sampler then keeps that error and
// returns it from every later Step. Each chain looks at ctx before its
// iteration and every pollCoords coordinate updates; when ctx is canceled
// the chains stop between coordinate updates (the integrator moves one
// coordinate at a time, exactly, so a chain stopped inside a trajectory
// is at a valid point) and Step returns ctx.Err(), from then on (see
// sampler.Sampler).
func (s *Sampler) Step(ctx context.Context) error {
	if s.failed != nil {
		return s.failed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.ctx = ctx
	parallel.For(s.n, parallel.Grain(s.n, 1), &s.task)
	s.ctx = context.Background()
	if err := ctx.Err(); err != nil {
		s.failed = err
		return err
	}
	for c := range s.chains {
		if err := s.chains[c].err; err != nil {
			s.failed = err
			return err
		}
	}
	s.iter++
	return nil
}

// iterate runs one iteration of chain c.
func (s *Sampler) iterate(c int) {
	ch := &s.chains[c]
	x := s.x[c*s.d : (c+1)*s.d]
	eps := s.drawStepSize(ch.r)
	drawMomentum(ch.p, ch.r)
	for range s.set.Steps {
		if s.ctx.Err() != nil || !s.integrate(ch, x, eps) {
			return
		}
	}
}

// drawStepSize returns ε with jitter.
func (s *Sampler) drawStepSize(r *rand.Rand) float64 {
	if s.set.StepJitter <= 0 {
		return s.set.StepSize
	}
	return s.set.StepSize * (1 + s.set.StepJitter*(2*r.Float64()-1))
}

// drawMomentum fills p with independent Laplace(0, 1) draws: an exponential
// magnitude (never 0) and a sign from a bit of a shared 64-bit draw.
func drawMomentum(p []float64, r *rand.Rand) {
	var bits uint64
	for i := range p {
		if i%64 == 0 {
			bits = r.Uint64()
		}
		e := r.ExpFloat64()
		if bits&1 != 0 {
			e = -e
		}
		bits >>= 1
		p[i] = e
	}
}

// shuffle permutes perm uniformly at random (Fisher–Yates). Each index is
// drawn by Lemire's multiply-and-reject method from a 32-bit half of one of
// the source's 64-bit outputs, so that one output serves two indices; the
// draws are exactly uniform.
func shuffle(perm []int, src *rand.ChaCha8) {
	var buf uint64
	var left bool // buf holds an unused upper half
	next := func() uint32 {
		if left {
			left = false
			return uint32(buf >> 32)
		}
		buf, left = src.Uint64(), true
		return uint32(buf)
	}
	for k := len(perm) - 1; k > 0; k-- {
		n := uint32(k + 1)
		m := uint64(next()) * uint64(n)
		if uint32(m) < n {
			thresh := -n % n
			for uint32(m) < thresh {
				m = uint64(next()) * uint64(n)
			}
		}
		j := int(m >> 32)
		perm[k], perm[j] = perm[j], perm[k]
	}
}

// pollCoords is the number of coordinate updates between two looks at the
// context.
const pollCoords = 1 << 12

// integrate runs one coordinate-wise integration step of chain ch at
// position x with step size eps: every coordinate once, in a fresh uniformly
// random order. It reports false (and sets ch.err) on a NaN energy change,
// and false without an error when the step's context is canceled.
func (s *Sampler) integrate(ch *chain, x []float64, eps float64) bool {
	perm, p, z, bins := ch.perm, ch.p, ch.z, ch.bin
	shuffle(perm, ch.src)
	var st Counts
	for k, i := range perm {
		if k&(pollCoords-1) == pollCoords-1 && s.ctx.Err() != nil {
			ch.stats.add(st)
			return false
		}
		pi, xi := p[i], x[i]
		xn := xi + math.Copysign(eps, pi)
		// ΔU = U(x*) − U(x), the base part first.
		var dU float64
		if s.normal {
			dU = 0.5 * (xn - xi) * (xn + xi)
		} else {
			dU = s.base.LogProb(xi) - s.base.LogProb(xn)
		}
		// The bin of x*: a step crosses the cut points between x and x*.
		c, b := s.cuts[i], bins[i]
		bn := b
		if pi > 0 {
			for bn < len(c) && xn >= c[bn] {
				bn++
			}
		} else {
			for bn > 0 && xn < c[bn-1] {
				bn--
			}
		}
		var zn int
		escape := false // leaving a zero-probability state: ΔU = −Inf
		if bn != b {
			zn = s.t.StateOf(i, bn)
			dl := ch.tr.DeltaLogProb(i, zn)
			st.Evaluations++
			switch {
			case math.IsNaN(dl):
				ch.err = fmt.Errorf("dhmc: the model's change of log-probability is NaN for variable %d going from state %d to %d (state %v)", i, z[i], zn, z)
				ch.stats.add(st)
				return false
			case math.IsInf(dl, 1):
				escape = true
			default:
				dU -= dl // +Inf when z* is impossible
			}
		}
		if math.IsNaN(dU) && !escape {
			ch.err = fmt.Errorf("dhmc: the base log-density is not finite near x = %v (variable %d)", xi, i)
			ch.stats.add(st)
			return false
		}
		st.Updates++
		switch {
		case escape:
			st.Moves++
			st.Escapes++
		case math.IsInf(dU, -1):
			st.Moves++ // only by overflow of the base part; keep p finite
		case math.Abs(pi) > dU:
			st.Moves++
			p[i] = pi - math.Copysign(1, pi)*dU
		default:
			st.Reflections++
			p[i] = -pi
			continue
		}
		x[i] = xn
		if bn != b {
			st.Crossings++
			bins[i] = bn
			z[i] = zn
			ch.tr.Set(i, zn)
		}
	}
	ch.stats.add(st)
	return true
}
