package sampler

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/dstein/dstein/model"
)

// Stepper is one iteration of a sampling algorithm.
type Stepper interface {
	// Step advances the algorithm by one iteration.
	Step() error
}

// Status says why a run stopped.
type Status int

const (
	// Completed means every requested iteration ran.
	Completed Status = iota
	// Canceled means the context was canceled first.
	Canceled
	// Failed means a step returned an error.
	Failed
)

// String returns "completed", "canceled" or "failed".
func (s Status) String() string {
	switch s {
	case Completed:
		return "completed"
	case Canceled:
		return "canceled"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Progress receives the number of completed iterations out of total.
type Progress interface {
	Update(done, total int)
}

// RunOptions configure Run. The zero value runs no iteration.
type RunOptions struct {
	// Iters is the number of iterations to run.
	Iters int
	// Progress, when not nil, is told after every iteration.
	Progress Progress
	// AfterStep, when not nil, is called after each iteration with the
	// number of iterations done so far; a non-nil error stops the run.
	AfterStep func(done int) error
}

// Outcome reports how a run ended.
type Outcome struct {
	Status Status
	// Iters is the number of iterations completed.
	Iters int
	// Err is the error that stopped a failed run, or the context's error
	// for a canceled one.
	Err error
}

// Run calls s.Step opt.Iters times, checking ctx before every iteration.
func Run(ctx context.Context, s Stepper, opt RunOptions) Outcome {
	for it := 0; it < opt.Iters; it++ {
		if err := ctx.Err(); err != nil {
			return Outcome{Status: Canceled, Iters: it, Err: err}
		}
		if err := s.Step(); err != nil {
			return Outcome{Status: Failed, Iters: it, Err: err}
		}
		if opt.Progress != nil {
			opt.Progress.Update(it+1, opt.Iters)
		}
		if opt.AfterStep != nil {
			if err := opt.AfterStep(it + 1); err != nil {
				return Outcome{Status: Failed, Iters: it + 1, Err: err}
			}
		}
	}
	return Outcome{Status: Completed, Iters: opt.Iters}
}

// InitialParticles draws n points of R^d from N(mean, std²) per coordinate,
// row-major (particle by particle, coordinate by coordinate), into dst
// (allocated when nil). Every sampler that starts from "the same initial
// draw" calls this with the same generator state.
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

// Marginals returns, for each variable, the fraction of samples in each of
// its states, in the model's state order.
func Marginals(m model.Model, s *Samples) [][]float64 {
	out := make([][]float64, s.D)
	for i := range out {
		out[i] = make([]float64, len(m.States(i)))
	}
	for r := range s.N {
		for i, st := range s.Row(r) {
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
