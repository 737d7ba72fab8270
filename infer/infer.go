package infer

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/dhmc"
	"github.com/dstein/dstein/sampler/dmala"
	"github.com/dstein/dstein/sampler/gfsvgd"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/sampler/gwg"
	"github.com/dstein/dstein/transform"
)

// Methods lists the sampling methods Sample knows: GF-SVGD, Gibbs sampling
// (n chains), Gibbs-with-Gradients and the discrete Metropolis-adjusted
// Langevin sampler (n chains each, models with a relaxed form),
// discontinuous HMC (n chains) and exact i.i.d. sampling.
var Methods = []string{"gfsvgd", "gibbs", "gwg", "dmala", "dhmc", "exact"}

// Surrogates lists the surrogate names of GF-SVGD.
var Surrogates = []string{"base", "relaxed"}

// Options describe one run.
type Options struct {
	// Method is the sampler: one of Methods.
	Method string
	// N is the number of particles (or chains); Iters the number of
	// iterations.
	N, Iters int
	// Seed seeds every random choice of the run (rng.New(Seed, …)).
	Seed uint64
	// InitMean and InitStd give the initial draw x ~ N(InitMean, InitStd²)
	// of every method (Gibbs starts at Γ(x)), so that all start from the
	// same points; they override the samplers' own settings.
	InitMean, InitStd float64
	// GFSVGD are the settings of GF-SVGD, a preset with overrides applied.
	GFSVGD gfsvgd.Settings
	// Gibbs, DMALA and DHMC are the settings of those samplers (their
	// initial draws are overridden by InitMean and InitStd).
	Gibbs gibbs.Settings
	DMALA dmala.Settings
	DHMC  dhmc.Settings
	// Truth, when not nil, is the exact sampler for "exact" (otherwise
	// exact.For builds one).
	Truth exact.Truth
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
	// Evaluations counts evaluations of the model: for GF-SVGD, log p* and
	// (with the relaxed surrogate) its relaxation once per particle and
	// iteration, plus one conditional per particle and variable in each
	// sweep after the transport; for Gibbs, one conditional distribution per site update or
	// unit draw; for Gibbs-with-Gradients, one relaxed log p* with its
	// gradient and one log p* change per proposal; for DMALA, one log p*
	// and one relaxed log p* with its gradient per proposal (each a full
	// evaluation, a proposal moves every variable); for DHMC, one log p*
	// change per coordinate move that crosses a bin; 0 for exact sampling.
	Evaluations int64
	// Acceptance is the fraction of accepted proposals of the
	// Metropolis–Hastings chain samplers (gwg, dmala); 0 for the others.
	Acceptance float64
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
	if o.Method == "gfsvgd" && !contains(Surrogates, o.Surrogate) {
		return fmt.Errorf("unknown surrogate %q; want one of %s", o.Surrogate, strings.Join(Surrogates, ", "))
	}
	if o.InitStd < 0 || math.IsNaN(o.InitStd) || math.IsInf(o.InitStd, 0) || math.IsNaN(o.InitMean) || math.IsInf(o.InitMean, 0) {
		return fmt.Errorf("the initial draw N(%v, %v²) is not valid", o.InitMean, o.InitStd)
	}
	if a := o.DMALA.StepSize; a < 0 || math.IsNaN(a) || math.IsInf(a, 0) {
		return fmt.Errorf("the DMALA step size must be 0 (the default) or a finite number > 0, got %v", a)
	}
	if err := o.DHMC.Validate(); err != nil {
		return err
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
	return transform.ByName(name, m, t, tau)
}

// Sample runs the sampler on m. When ctx is canceled it returns the output
// so far with Status sampler.Canceled and a nil error.
func Sample(ctx context.Context, m model.Model, o Options) (*Output, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	start := time.Now()
	out := &Output{Method: o.Method, N: o.N, Dim: m.Dim(), Seed: o.Seed}
	if o.InitStd == 0 {
		o.InitStd = 1
	}
	var err error
	switch o.Method {
	case "exact":
		err = sampleExact(m, o, out)
	case "gfsvgd":
		err = sampleGFSVGD(ctx, m, o, out)
	case "gibbs", "gwg", "dmala", "dhmc":
		err = sampleChains(ctx, m, o, out)
	}
	if err != nil {
		return nil, err
	}
	if out.Samples != nil {
		out.Marginals = sampler.Marginals(m, out.Samples)
		out.Means = sampler.Means(m, out.Marginals)
	}
	out.Seconds = time.Since(start).Seconds()
	return out, nil
}

func sampleExact(m model.Model, o Options, out *Output) error {
	t := o.Truth
	if t == nil {
		var err error
		if t, err = exact.For(m); err != nil {
			return err
		}
	}
	out.Samples = sampler.NewSamples(o.N, m.Dim())
	t.Sample(out.Samples.Z, rng.New(o.Seed, rng.StreamSample))
	out.Status = sampler.Completed
	return nil
}

func sampleGFSVGD(ctx context.Context, m model.Model, o Options, out *Output) error {
	t, err := transform.ForModel(nil, m)
	if err != nil {
		return err
	}
	rho, err := Surrogate(o.Surrogate, m, t, o.Temperature)
	if err != nil {
		return err
	}
	set := o.GFSVGD
	set.InitMean, set.InitStd = o.InitMean, o.InitStd
	s, err := gfsvgd.New(m, t, rho, o.N, set, rng.New(o.Seed, rng.StreamInit))
	if err != nil {
		return err
	}
	perIter := int64(o.N)
	if o.Surrogate == "relaxed" {
		perIter *= 2
	}
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
		return res.Err
	}
	r, err := s.Result()
	if err != nil {
		return err
	}
	// The sweeps after the transport evaluate one conditional per particle
	// and variable, as Gibbs sweeps do.
	out.Evaluations = perIter*int64(res.Iters+1) + int64(o.GFSVGD.Sweeps)*int64(o.N)*int64(m.Dim())
	out.Samples = r.Samples
	out.WeightESS, out.Impossible = r.WeightESS, r.Impossible
	out.Bandwidth = s.Last().Bandwidth
	return nil
}

// chainSampler is what the chain samplers (Gibbs, GWG, DMALA, DHMC) have
// in common.
type chainSampler interface {
	sampler.Stepper
	Samples() *sampler.Samples
	Evaluations() int64
}

func sampleChains(ctx context.Context, m model.Model, o Options, out *Output) error {
	t, err := transform.ForModel(nil, m)
	if err != nil {
		return err
	}
	var s chainSampler
	switch o.Method {
	case "gibbs":
		set := o.Gibbs
		set.InitMean, set.InitStd = o.InitMean, o.InitStd
		s, err = gibbs.New(m, t, o.N, set, o.Seed)
	case "gwg":
		s, err = gwg.New(m, t, o.N, gwg.Settings{InitMean: o.InitMean, InitStd: o.InitStd}, o.Seed)
	case "dmala":
		set := o.DMALA
		set.InitMean, set.InitStd = o.InitMean, o.InitStd
		s, err = dmala.New(m, t, o.N, set, o.Seed)
	default:
		set := o.DHMC
		set.InitMean, set.InitStd = o.InitMean, o.InitStd
		s, err = dhmc.New(m, t, o.N, set, o.Seed)
	}
	if err != nil {
		return err
	}
	res := sampler.Run(ctx, s, sampler.RunOptions{Iters: o.Iters, Progress: o.Progress})
	out.Iters, out.Status = res.Iters, res.Status
	if res.Status == sampler.Failed {
		return res.Err
	}
	out.Samples = s.Samples()
	out.Evaluations = s.Evaluations()
	if a, ok := s.(interface{ AcceptanceRate() float64 }); ok {
		out.Acceptance = a.AcceptanceRate()
	}
	for r := range out.Samples.N {
		if math.IsInf(m.LogProb(out.Samples.Row(r)), -1) {
			out.Impossible++
		}
	}
	return nil
}
