package sampler

import (
	"context"
	"errors"
	"fmt"
)

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

// MarshalText implements encoding.TextMarshaler.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

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
	// number of iterations done so far; a non-nil error stops the run
	// (ErrEnough as Completed, any other as Failed).
	AfterStep func(done int) error
}

// ErrEnough is what an AfterStep (or an Env.Observe) returns to say that
// the run has what it needs: Run then ends as Completed after the
// iterations done so far (an adaptive run of chains that reached its
// effective sample size).
var ErrEnough = errors.New("enough iterations")

// Outcome reports how a run ended.
type Outcome struct {
	Status Status
	// Iters is the number of iterations completed.
	Iters int
	// Err is the error that stopped a failed run, or the context's error
	// for a canceled one.
	Err error
}

// Run calls s.Step opt.Iters times, checking ctx before every iteration. A
// step that fails because ctx was canceled ends the run as Canceled.
func Run(ctx context.Context, s Stepper, opt RunOptions) Outcome {
	if opt.Iters < 0 {
		return Outcome{Status: Failed, Err: fmt.Errorf("%d iterations; want 0 or more", opt.Iters)}
	}
	for it := 0; it < opt.Iters; it++ {
		if err := ctx.Err(); err != nil {
			return Outcome{Status: Canceled, Iters: it, Err: err}
		}
		if err := s.Step(ctx); err != nil {
			if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
				return Outcome{Status: Canceled, Iters: it, Err: ctx.Err()}
			}
			return Outcome{Status: Failed, Iters: it, Err: err}
		}
		if opt.Progress != nil {
			opt.Progress.Update(it+1, opt.Iters)
		}
		if opt.AfterStep != nil {
			if err := opt.AfterStep(it + 1); errors.Is(err, ErrEnough) {
				return Outcome{Status: Completed, Iters: it + 1}
			} else if err != nil {
				return Outcome{Status: Failed, Iters: it + 1, Err: err}
			}
		}
	}
	return Outcome{Status: Completed, Iters: opt.Iters}
}
