package infer

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	_ "github.com/dstein/dstein/sampler/all" // every method registered
	"github.com/dstein/dstein/transform"
)

// Spec describes one run.
type Spec struct {
	// Pipeline is what runs: a preset, a single method (sampler.Single)
	// or a pipeline file's contents.
	Pipeline sampler.Pipeline
	// N is the number of particles or chains.
	N int
	// Key is the run's random key; a user's seed gives rng.NewKey(seed).
	Key rng.Key
	// Truth, when not nil, is an exact sampler of the model, handed to the
	// exact method (otherwise it builds one).
	Truth sampler.Truth
	// Progress, when not nil, hears about every iteration.
	Progress sampler.Progress
	// Trace records every stage's statistics after every iteration.
	Trace bool
}

// TracePoint is a stage's statistics after one of its iterations.
type TracePoint struct {
	Stage  int // 0-based
	Method string
	Iter   int // iterations of the stage done
	Stats  sampler.Stats
}

// Output is what a run produced.
type Output struct {
	// Pipeline is the pipeline that ran, every default filled in.
	Pipeline sampler.Pipeline
	N, Dim   int
	// Iters counts the iterations done over all stages.
	Iters   int
	Key     rng.Key
	Seconds float64
	Status  sampler.Status
	// Stages describe each stage that ran.
	Stages []sampler.StageResult
	// Samples are the final discrete states.
	Samples *sampler.Samples
	// Marginals[i][s] is the fraction of samples with z_i = s; Means are
	// the sample means in the model's state values.
	Marginals [][]float64
	Means     []float64
	// Evaluations counts evaluations of the model over all stages.
	Evaluations int64
	// Impossible counts final samples in states of probability zero.
	Impossible int
	// Trace holds the statistics of every iteration when Spec.Trace is
	// set.
	Trace []TracePoint
}

// Run runs the pipeline on m. When ctx is canceled it returns the output
// so far with Status sampler.Canceled and a nil error; a failed run is an
// error.
func Run(ctx context.Context, m model.Model, spec Spec) (*Output, error) {
	if spec.N < 1 {
		return nil, fmt.Errorf("the number of particles or chains must be at least 1, got %d", spec.N)
	}
	if err := spec.Pipeline.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	t, err := transform.ForModel(nil, m)
	if err != nil {
		return nil, err
	}
	out := &Output{Pipeline: spec.Pipeline.Resolved(), N: spec.N, Dim: m.Dim(), Key: spec.Key}
	env := sampler.Env{Model: m, Transform: t, N: spec.N, Key: spec.Key, Truth: spec.Truth, Progress: spec.Progress}
	if spec.Trace {
		env.Observe = func(stage, iter int, s sampler.Sampler) error {
			out.Trace = append(out.Trace, TracePoint{Stage: stage, Method: spec.Pipeline.Stages[stage].Method, Iter: iter, Stats: s.Stats()})
			return nil
		}
	}
	res, err := spec.Pipeline.Execute(ctx, env)
	if err != nil {
		return nil, err
	}
	out.Status, out.Iters, out.Stages = res.Status, res.Iters, res.Stages
	if res.Status == sampler.Failed {
		return nil, res.Err
	}
	for _, st := range res.Stages {
		out.Evaluations += st.Stats.Evaluations
	}
	if res.Z != nil {
		out.Samples = &sampler.Samples{N: spec.N, D: m.Dim(), Z: res.Z}
		out.Marginals = sampler.Marginals(m, out.Samples)
		out.Means = sampler.Means(m, out.Marginals)
		for r := range out.Samples.N {
			if math.IsInf(m.LogProb(out.Samples.Row(r)), -1) {
				out.Impossible++
			}
		}
	}
	out.Seconds = time.Since(start).Seconds()
	return out, nil
}

// Describe returns a one-line description of a pipeline: "gfsvgd (100
// iterations) → gibbs (30 sweeps)".
func Describe(p sampler.Pipeline) string {
	s := ""
	for k, st := range p.Resolved().Stages {
		if k > 0 {
			s += " → "
		}
		m, err := sampler.Lookup(st.Method)
		if err != nil {
			s += st.Method
			continue
		}
		if m.OneShot {
			s += st.Method
		} else {
			s += fmt.Sprintf("%s (%s)", st.Method, m.Count(st.Iters))
		}
	}
	return s
}

// Memory estimates the bytes a run of spec on m allocates beyond the model
// itself: the transform, the initial draw and the final samples (three
// copies of n·d values), and the largest of its stages' own estimates.
func Memory(m model.Model, spec Spec) float64 {
	n, d := float64(spec.N), float64(m.Dim())
	k := sampler.States(m)
	// The initial points and states, and the final states.
	need := 16*float64(k) + 3*8*n*d
	if spec.Trace {
		need += 200 * float64(spec.Pipeline.Iters())
	}
	var stage float64
	for _, st := range spec.Pipeline.Resolved().Stages {
		if meth, err := sampler.Lookup(st.Method); err == nil {
			stage = max(stage, meth.MemoryOf(m, spec.N, st.Settings))
		}
	}
	return need + stage
}
