package sampler

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/transform"
)

// Stepper is anything the run loop drives, one iteration per Step: a
// sampler, or the training of an ensemble of networks.
type Stepper interface {
	// Step advances by one iteration. It polls ctx inside its long loops
	// (per chain or particle, and every few thousand site updates within
	// one), cheaply and without changing any result of a run that is not
	// canceled, and returns promptly with ctx.Err() once ctx is canceled
	// (errors.Is(err, context.Canceled) or context.DeadlineExceeded).
	// A step canceled before it started returns ctx.Err() having done
	// nothing. A step canceled while it runs is incomplete, and what that
	// leaves is part of the contract of Sampler below.
	Step(ctx context.Context) error
}

// Sampler is the running state of a method: n particles or chains over the
// d variables of a model.
//
// # Cancellation
//
// Step returns ctx.Err() soon after ctx is canceled, however long the step
// (a huge model, many chains). A step interrupted that way is incomplete:
// some chains may have made all of this step's moves, some only part of
// them (a sweep stopped between two sites), others none. It never stops
// inside a move, so the sampler stays consistent: Current, Positions and
// Stats may still be called, and every chain's state is one that its own
// moves reached, as valid as any state between two steps (GF-SVGD's
// particles move together, so its interrupted update is undone; the exact
// method's samples are drawn whole or left at the starting states). Stats
// stay defined; their counts may or may not include the interrupted
// step's work. A canceled sampler is spent, though: it must not be
// stepped again, and every later Step returns the same error, because
// draws that went on from an interrupted step would depend on when it was
// interrupted, and so could not be reproduced from the seed. The run loop
// and pipelines stop there: a canceled run ends with the states so far.
type Sampler interface {
	Stepper
	// Current returns the current states of the n particles or chains,
	// row-major n×d state indices. The slice belongs to the sampler and
	// stays valid until the next Step.
	Current() []int
	// Stats returns the method's statistics at the current state.
	Stats() Stats
}

// Positioned is a sampler whose particles or chains are points of R^d
// (GF-SVGD, discontinuous HMC); their states are Γ of the points.
type Positioned interface {
	Sampler
	// Positions returns the current points, row-major n×d. The slice
	// belongs to the sampler and stays valid until the next Step.
	Positions() []float64
}

// Stat is one named statistic of a method.
type Stat struct {
	Name  string
	Value float64
}

// Stats are a method's statistics. Each method reports the same names in
// the same order at every step, so that traces and summaries have a stable
// shape.
type Stats struct {
	// Evaluations counts evaluations of the model so far (each method's
	// documentation says what one is).
	Evaluations int64
	// Values are the method's own statistics (acceptance rates, weight
	// ESS, bandwidth, …).
	Values []Stat
}

// Value returns the named statistic and whether it exists.
func (s Stats) Value(name string) (float64, bool) {
	for _, v := range s.Values {
		if v.Name == name {
			return v.Value, true
		}
	}
	return 0, false
}

// Truth draws exact i.i.d. samples of a model (package exact provides it).
type Truth interface {
	// Sample fills dst (row-major, len(dst)/d samples) with exact draws.
	Sample(dst []int, r *rand.Rand)
}

// ContextTruth is a Truth whose sampling stops when a context is canceled
// (every truth of package exact is one): SampleContext draws what Sample
// draws, the same numbers from r, or returns ctx.Err() with dst partly
// filled. The exact method uses it when its Problem.Truth has it, so that
// drawing many samples can be interrupted.
type ContextTruth interface {
	Truth
	SampleContext(ctx context.Context, dst []int, r *rand.Rand) error
}

// Problem is what a method is built from: the model and its continuous
// parameterization, the starting points and states of its n particles or
// chains, and its random key.
type Problem struct {
	Model     model.Model
	Transform *transform.Transform
	// N is the number of particles or chains.
	N int
	// X are the starting points in R^d (row-major n×d) and Z the starting
	// states (n×d). In the first stage of a run Z = Γ(X). After a stage
	// that only has states, X is nil for a discrete method and, for a
	// continuous one, points drawn inside Z's bins.
	X []float64
	Z []int
	// Key is the method's random key; methods take their streams from it
	// with Key.For and Key.ForIndex (rng.Sample for transitions).
	Key rng.Key
	// Truth, when not nil, is an exact sampler of the model (for the
	// exact method; it builds one when nil).
	Truth Truth

	err error // what NewProblem could not build (an invalid Init)
}

// Check reports a problem whose shapes disagree.
func (p *Problem) Check() error {
	switch {
	case p.Model == nil:
		return fmt.Errorf("no model")
	case p.Model.Dim() < 1:
		return fmt.Errorf("the model has no variables")
	case p.Transform == nil:
		return fmt.Errorf("no transform")
	case p.Transform.Dim() != p.Model.Dim():
		return fmt.Errorf("the model has %d variables but the transform has %d", p.Model.Dim(), p.Transform.Dim())
	case p.N < 1:
		return fmt.Errorf("need at least one particle or chain, got %d", p.N)
	case p.err != nil:
		return p.err
	case (p.X != nil && len(p.X) != p.N*p.Model.Dim()) || len(p.Z) != p.N*p.Model.Dim():
		return fmt.Errorf("%d starting points and %d starting states for %d particles of dimension %d", len(p.X), len(p.Z), p.N, p.Model.Dim())
	}
	d := p.Model.Dim()
	for i := range d {
		if len(p.Model.States(i)) != p.Transform.NumStates(i) {
			return fmt.Errorf("variable %d has %d states but the transform has %d", i, len(p.Model.States(i)), p.Transform.NumStates(i))
		}
	}
	for k, s := range p.Z {
		if s < 0 || s >= len(p.Model.States(k%d)) {
			return fmt.Errorf("starting state of variable %d of chain %d is %d; the variable has %d states", k%d, k/d, s, len(p.Model.States(k%d)))
		}
	}
	return nil
}

// NewProblem returns the problem of a run's first stage: n points drawn
// from the initial distribution with key.For(rng.Init) (InitialParticles)
// and their states Γ(x), with the run's key. An invalid init (Init.Validate)
// gives a problem whose Check reports it.
func NewProblem(m model.Model, t *transform.Transform, n int, init Init, key rng.Key) *Problem {
	if m == nil || t == nil || t.Dim() != m.Dim() {
		return &Problem{Model: m, Transform: t, N: n, Key: key}
	}
	d := m.Dim()
	if err := init.Validate(); err != nil {
		return &Problem{Model: m, Transform: t, N: n, Key: key, err: err}
	}
	init = init.Resolved()
	if n < 0 || d < 0 {
		return &Problem{Model: m, Transform: t, N: n, Key: key}
	}
	x := InitialParticles(nil, n, d, init.Mean, init.Std, key.For(rng.Init).Rand())
	z := make([]int, n*d)
	for j := range n {
		t.Gamma(z[j*d:(j+1)*d], x[j*d:(j+1)*d])
	}
	return &Problem{Model: m, Transform: t, N: n, X: x, Z: z, Key: key}
}

// InitialParticles draws n points of R^d from N(mean, std²) per coordinate,
// row-major (particle by particle, coordinate by coordinate), into dst
// (allocated when nil). Every method of a run starts from this one draw.
func InitialParticles(dst []float64, n, d int, mean, std float64, r *rand.Rand) []float64 {
	if dst == nil {
		dst = make([]float64, n*d)
	}
	for k := range dst[:n*d] {
		dst[k] = mean + std*r.NormFloat64()
	}
	return dst
}

// Samples are n discrete samples of a d-variable model, row-major state
// indices: sample i is Z[i*D : (i+1)*D].
type Samples struct {
	N, D int
	Z    []int
}

// NewSamples allocates n samples of d variables.
func NewSamples(n, d int) *Samples {
	return &Samples{N: n, D: d, Z: make([]int, n*d)}
}

// Row returns sample i.
func (s *Samples) Row(i int) []int { return s.Z[i*s.D : (i+1)*s.D] }

// Impossible counts the samples to which m gives probability zero.
func Impossible(m model.Model, s *Samples) int {
	bad := 0
	for i := range s.N {
		if math.IsInf(m.LogProb(s.Row(i)), -1) {
			bad++
		}
	}
	return bad
}

// Marginals returns, for each variable, the fraction of samples in each of
// its states, in the model's state order. Samples of another shape than the
// model's, or with a state index out of range, are a programming mistake:
// it panics, naming them (gof's tests check samples and return errors).
func Marginals(m model.Model, s *Samples) [][]float64 {
	if s.D != m.Dim() || len(s.Z) < s.N*s.D {
		panic(fmt.Sprintf("sampler: Marginals of %d samples of %d variables (%d states) for a model of %d variables", s.N, s.D, len(s.Z), m.Dim()))
	}
	out := make([][]float64, s.D)
	for i := range out {
		out[i] = make([]float64, len(m.States(i)))
	}
	for r := range s.N {
		for i, st := range s.Row(r) {
			if st < 0 || st >= len(out[i]) {
				panic(fmt.Sprintf("sampler: Marginals: sample %d, variable %d: state index %d, want 0…%d", r, i, st, len(out[i])-1))
			}
			out[i][st]++
		}
	}
	if s.N > 0 {
		inv := 1 / float64(s.N)
		for i := range out {
			for k := range out[i] {
				out[i][k] *= inv
			}
		}
	}
	return out
}

// Means returns the sample mean of each variable in the model's state
// values, computed from the marginals so that it does not depend on sample
// order.
func Means(m model.Model, marg [][]float64) []float64 {
	out := make([]float64, len(marg))
	for i, p := range marg {
		for k, v := range m.States(i) {
			out[i] += p[k] * v
		}
	}
	return out
}
