package infer

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gfsvgd"
	"github.com/dstein/dstein/transform"
)

// Methods lists the sampling methods Sample knows.
var Methods = []string{"gfsvgd"}

// Surrogates lists the surrogate names of GF-SVGD.
var Surrogates = []string{"base", "relaxed"}

// Options describe one run.
type Options struct {
	// Method is the sampler: "gfsvgd".
	Method string
	// N is the number of particles (or chains); Iters the number of
	// iterations.
	N, Iters int
	// Seed seeds every random choice of the run (rng.New(Seed, …)).
	Seed uint64
	// GFSVGD are the settings of GF-SVGD, a preset with overrides applied.
	GFSVGD gfsvgd.Settings
	// Surrogate is "base" (ρ = p0) or "relaxed"; Temperature is the
	// relaxed surrogate's τ (0 for transform.DefaultTemperature).
	Surrogate   string
	Temperature float64
	// Progress, when not nil, hears about every iteration.
	Progress sampler.Progress
	// Trace records the diagnostics of every GF-SVGD iteration.
	Trace bool
}

// Output is what a run produced.
type Output struct {
	Method  string
	N, Dim  int
	Iters   int // iterations completed
	Seed    uint64
	Seconds float64
	Status  sampler.Status
	// Samples are the final discrete states.
	Samples *sampler.Samples
	// Marginals[i][s] is the fraction of samples with z_i = s; Means are
	// the sample means in the model's state values.
	Marginals [][]float64
	Means     []float64
	// GF-SVGD diagnostics at the final particles.
	WeightESS  float64
	Bandwidth  float64
	Impossible int
	Rejected   int // moves undone over the whole run
	Trace      []gfsvgd.Diagnostics
}

// Check reports the first option that cannot be used.
func (o *Options) Check() error {
	if !contains(Methods, o.Method) {
		return fmt.Errorf("unknown method %q; want one of %s", o.Method, strings.Join(Methods, ", "))
	}
	if o.N < 1 {
		return fmt.Errorf("the number of samples must be at least 1, got %d", o.N)
	}
	if o.Iters < 0 {
		return fmt.Errorf("the number of iterations must be ≥ 0, got %d", o.Iters)
	}
	if !contains(Surrogates, o.Surrogate) {
		return fmt.Errorf("unknown surrogate %q; want one of %s", o.Surrogate, strings.Join(Surrogates, ", "))
	}
	return o.GFSVGD.Validate()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Surrogate builds the named surrogate of m over t.
func Surrogate(name string, m model.Model, t *transform.Transform, tau float64) (transform.Surrogate, error) {
	switch name {
	case "base":
		return transform.BaseSurrogate{T: t}, nil
	case "relaxed":
		r, ok := m.(model.Relaxed)
		if !ok {
			return nil, fmt.Errorf("this model has no relaxed form; use the base surrogate")
		}
		return transform.NewRelaxed(t, r, tau)
	}
	return nil, fmt.Errorf("unknown surrogate %q; want one of %s", name, strings.Join(Surrogates, ", "))
}

// Sample runs the sampler on m. When ctx is canceled it returns the output
// so far with Status sampler.Canceled and a nil error.
func Sample(ctx context.Context, m model.Model, o Options) (*Output, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	start := time.Now()
	t, err := transform.ForModel(nil, m)
	if err != nil {
		return nil, err
	}
	rho, err := Surrogate(o.Surrogate, m, t, o.Temperature)
	if err != nil {
		return nil, err
	}
	s, err := gfsvgd.New(m, t, rho, o.N, o.GFSVGD, rng.New(o.Seed, rng.StreamInit))
	if err != nil {
		return nil, err
	}
	out := &Output{Method: o.Method, N: o.N, Dim: m.Dim(), Seed: o.Seed}
	if o.Trace {
		out.Trace = make([]gfsvgd.Diagnostics, 0, o.Iters)
	}
	res := sampler.Run(ctx, s, sampler.RunOptions{Iters: o.Iters, Progress: o.Progress, AfterStep: func(int) error {
		last := s.Last()
		out.Rejected += last.Rejected
		if o.Trace {
			out.Trace = append(out.Trace, last)
		}
		return nil
	}})
	out.Iters, out.Status = res.Iters, res.Status
	if res.Status == sampler.Failed {
		return nil, res.Err
	}
	r, err := s.Result()
	if err != nil {
		return nil, err
	}
	out.Samples = r.Samples
	out.WeightESS, out.Impossible = r.WeightESS, r.Impossible
	out.Bandwidth = s.Last().Bandwidth
	out.Marginals = sampler.Marginals(m, r.Samples)
	out.Means = sampler.Means(m, out.Marginals)
	out.Seconds = time.Since(start).Seconds()
	return out, nil
}
