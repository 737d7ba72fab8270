package infer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dstein/dstein/compress"
	"github.com/dstein/dstein/diag"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	_ "github.com/dstein/dstein/sampler/all" // every method registered
	"github.com/dstein/dstein/transform"
)

// Why one file of about 510 lines: Spec, its validation and the run loop (stages, keeping,
// replicates, cancellation) are one contract; splitting it would scatter the invariants Run
// checks.

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
	// Trace records every stage's statistics after every iteration (of
	// the first replicate).
	Trace bool
	// Keep, when Keep.Draws > 0, keeps draws of the last stage's chains
	// (an MCMC method): after Keep.Warmup iterations, every Keep.Thin-th
	// state of each of the N chains, Keep.Draws per chain. The last stage
	// then runs Keep.Iters() iterations whatever its own count.
	Keep Keep
	// Replicates runs the pipeline this many times independently (0 and 1
	// mean once): replicate 0 on Key, replicate r ≥ 1 on
	// Key.ForIndex(rng.Replicate, r). Error bars then come from the spread
	// of the replicates' estimates.
	Replicates int
	// Compress, when on, ends the run by picking Compress.N points from
	// its samples (the draws of the chains, usually); the diagnostics stay
	// those of the draws.
	Compress Compression
	// Estimates says how the variables' marginals, means and their error
	// bars are estimated: Rao–Blackwellised (the zero value) where the
	// samples are meant to be draws from p and the model gives its
	// conditionals, or Frequencies.
	Estimates Estimates
	// Device, when not the CPU, runs every stage whose method has a path
	// on it that takes the model and the stage's settings there, and the
	// others on the CPU (Output.OnDevice lists which): the experiments'
	// --device.
	Device sampler.Device
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
	// OnDevice lists the stages (0-based) that Spec.Device moved to that
	// device.
	OnDevice []int
	// Samples are the final discrete states.
	Samples *sampler.Samples
	// Marginals[i][s] estimates p(z_i = s): the average over the samples
	// of p(z_i = s | the sample's other variables) when
	// Diagnostics.Estimates is "rao-blackwell", else the fraction of
	// samples with z_i = s. Means are the means these marginals give, in
	// the model's state values.
	Marginals [][]float64
	Means     []float64
	// Evaluations counts evaluations of the model over all stages.
	Evaluations int64
	// Impossible counts final samples in states of probability zero.
	Impossible int
	// Trace holds the statistics of every iteration when Spec.Trace is
	// set.
	Trace []TracePoint
	// Layout says how the samples are grouped: chains of draws,
	// replicates of particles, or one group.
	Layout Layout
	// Warnings are the methods' own warnings about this run (GF-SVGD's
	// importance-weight ESS, parallel tempering's swap rates), one line
	// each, over every replicate.
	Warnings []string
	// Diagnostics are the per-quantity estimates with error bars and
	// convergence diagnostics (Diagnose), nil before Diagnose runs.
	Diagnostics *Diagnostics
	// Compressed, when the spec asked for a compression, says how the
	// samples were picked: Samples, Marginals and Means are then the
	// points', Layout and Diagnostics those of the draws they were picked
	// from.
	Compressed *Compressed
	// ModeCheck is CheckModes's result, when the caller ran it.
	ModeCheck *ModeCheck

	cond *condTable // the conditionals of the samples while Diagnose runs
}

// Run runs the pipeline on m (Spec.Replicates times, keeping draws when
// Spec.Keep asks) and diagnoses the result. When ctx is canceled it returns
// the output so far with Status sampler.Canceled and a nil error; a failed
// run is an error.
func Run(ctx context.Context, m model.Model, spec Spec) (*Output, error) {
	if spec.N < 1 {
		return nil, fmt.Errorf("the number of particles or chains must be at least 1, got %d", spec.N)
	}
	pl, err := spec.Plan()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	t, err := transform.ForModel(nil, m)
	if err != nil {
		return nil, err
	}
	var onDev []int
	if spec.Device != sampler.CPU {
		pl, onDev, err = pl.OnDevice(spec.Device, &sampler.Problem{Model: m, Transform: t, N: spec.N, Key: spec.Key})
		if err != nil {
			return nil, err
		}
	}
	reps := max(1, spec.Replicates)
	if spec.Keep.Target > 0 && (reps > 1 || spec.Keep.Draws < 1) {
		return nil, fmt.Errorf("an ESS target needs the draws of MCMC chains, one run (draws %d, replicates %d)", spec.Keep.Draws, reps)
	}
	d := m.Dim()
	out := &Output{Pipeline: pl.Resolved(), N: spec.N, Dim: d, Key: spec.Key, Status: sampler.Completed, OnDevice: onDev}
	rows := spec.rows()
	switch {
	case spec.Keep.Draws > 0:
		out.Layout = Layout{Kind: LayoutChains, Groups: spec.N, Length: spec.Keep.Draws, Warmup: spec.Keep.Warmup, Thin: spec.Keep.thin()}
	case reps > 1:
		out.Layout = Layout{Kind: LayoutReplicates, Groups: reps, Length: spec.N}
	default:
		out.Layout = Layout{Kind: LayoutSingle, Groups: 1, Length: spec.N}
	}
	var adapt *adaptive
	var budget *budgeted
	// lateTuning is the last iteration after the warm-up that a kernel
	// still adapting (DMALA's step, DLMC's time, PAS's path length) made.
	lateTuning, tuningAtEnd := 0, false
	// joint: the last stage's sampler updates a network's blocks jointly
	// (gibbs.Blocks), so its zero entries need not trap it.
	zeros, _ := m.(zeroEntries)
	joint := false
	if spec.Keep.Target > 0 {
		adapt = newAdaptive(ctx, m, out.Pipeline, spec.Keep, spec.N, spec.Estimates)
		out.Samples = &sampler.Samples{N: rows, D: d}
	} else {
		out.Samples = &sampler.Samples{N: rows, D: d, Z: make([]int, rows*d)}
		if spec.Keep.Budget > 0 {
			budget = newBudgeted(spec.Keep, spec.N, d, out.Samples.Z)
		}
	}
	total := reps * pl.Iters()
	last := len(pl.Stages) - 1
	for r := range reps {
		key := spec.Key
		if r > 0 {
			key = spec.Key.ForIndex(rng.Replicate, r)
		}
		env := sampler.Env{Model: m, Transform: t, N: spec.N, Key: key, Truth: spec.Truth}
		if spec.Progress != nil {
			env.Progress = offsetProgress{spec.Progress, r * pl.Iters(), total}
		}
		observers := []func(stage, iter int, s sampler.Sampler) error{}
		if spec.Trace && r == 0 {
			observers = append(observers, func(stage, iter int, s sampler.Sampler) error {
				out.Trace = append(out.Trace, TracePoint{Stage: stage, Method: pl.Stages[stage].Method, Iter: iter, Stats: s.Stats()})
				return nil
			})
		}
		if zeros != nil && zeros.ZeroEntries() > 0 {
			observers = append(observers, func(stage, iter int, s sampler.Sampler) error {
				if stage == last {
					jb, ok := s.(interface{ JointBlocks() bool })
					joint = ok && jb.JointBlocks()
				}
				return nil
			})
		}
		if adapt != nil {
			observers = append(observers, func(stage, iter int, s sampler.Sampler) error {
				if stage != last {
					return nil
				}
				return adapt.observe(iter, s)
			})
		} else if budget != nil {
			observers = append(observers, func(stage, iter int, s sampler.Sampler) error {
				if stage != last {
					return nil
				}
				return budget.observe(iter, s)
			})
		} else if k := spec.Keep; k.Draws > 0 {
			// tuning: the sampler was tuning after the previous iteration
			// (before the first: once it started), so that the iteration
			// observed may have adapted its kernel.
			tuning := false
			env.Started = func(stage int, s sampler.Sampler) {
				if stage == last {
					tn, ok := s.(interface{ Tuning() bool })
					tuning = ok && tn.Tuning()
				}
			}
			observers = append(observers, func(stage, iter int, s sampler.Sampler) error {
				if stage != last {
					return nil
				}
				if tuning && iter > k.Warmup {
					lateTuning = max(lateTuning, iter)
				}
				tn, ok := s.(interface{ Tuning() bool })
				tuning = ok && tn.Tuning()
				tuningAtEnd = tuning
				if t, ok := k.index(iter); ok {
					keepDraw(out.Samples.Z, s.Current(), spec.N, k.Draws, t, d)
				}
				return nil
			})
		}
		if len(observers) > 0 {
			env.Observe = func(stage, iter int, s sampler.Sampler) error {
				for _, o := range observers {
					if err := o(stage, iter, s); err != nil {
						return err
					}
				}
				return nil
			}
		}
		res, err := pl.Execute(ctx, env)
		if err != nil {
			return nil, err
		}
		out.Iters += res.Iters
		if r == 0 {
			out.Stages = res.Stages
		}
		for _, st := range res.Stages {
			out.Evaluations += st.Stats.Evaluations
			if meth, err := sampler.Lookup(st.Method); err == nil && meth.Warnings != nil {
				for _, w := range meth.Warnings(st.Stats, spec.N) {
					out.addWarning(w, reps, r)
				}
			}
		}
		if res.Status == sampler.Failed {
			return nil, res.Err
		}
		if budget != nil {
			if res.Status == sampler.Completed && !budget.planned && !budget.fromReservoir {
				// The iterations ran out first (samplers that count no
				// evaluations).
				if err := budget.fromReserve(res.Iters); !errors.Is(err, sampler.ErrEnough) {
					return nil, err
				}
			}
			out.Layout = budget.layout()
		}
		if adapt != nil {
			if adapt.done != nil {
				out.Samples.Z, out.Layout = adapt.done, adapt.layout()
			} else {
				out.Samples.Z = adapt.buf // canceled before a window was complete
			}
		}
		if res.Status != sampler.Completed {
			out.Status = res.Status
			out.Seconds = time.Since(start).Seconds()
			return out, nil
		}
		if spec.Keep.Draws == 0 {
			copy(out.Samples.Z[r*spec.N*d:], res.Z)
		}
	}
	out.Marginals = sampler.Marginals(m, out.Samples)
	out.Impossible = sampler.Impossible(m, out.Samples)
	if n := out.Samples.N; n > 0 && out.Impossible == n {
		// Nothing to estimate from: a summary of such draws would look
		// like an answer (a cycle of "differ" tables over an odd number of
		// binary variables has no possible state, and no single table is
		// zero everywhere).
		return nil, fmt.Errorf("every one of the %d draws is in a state of probability zero: the model (with its evidence, if any) may give probability zero to every state, or %s never reached one that it does not; dstein exact says which", n, Describe(pl))
	}
	if spec.Estimates == RaoBlackwell && out.raoBlackwellApplies(m) {
		out.cond, err = conditionals(ctx, m, out.Samples)
		if err != nil {
			if ctx.Err() != nil {
				out.Status = sampler.Canceled
				return out, nil
			}
			return nil, err
		}
		out.Marginals = out.cond.marginals(m)
	}
	out.Means = sampler.Means(m, out.Marginals)
	out.Diagnostics, err = Diagnose(ctx, m, out)
	out.cond = nil
	if err != nil {
		if ctx.Err() != nil {
			out.Status = sampler.Canceled
			return out, nil
		}
		return nil, err
	}
	if lay := out.Layout; lay.Stopped == StopIters || lay.Stopped == StopTime {
		limit := fmt.Sprintf("its iteration limit (%d per chain: the last doubling of the run within --max-iters %d)", 2*lay.Warmup, spec.Keep.iterLimit())
		if lay.Stopped == StopTime {
			limit = fmt.Sprintf("its time limit (%v, --max-time) with %d iterations per chain in the last complete window", spec.Keep.MaxTime, 2*lay.Warmup)
		}
		tuned := ""
		if adapt != nil && adapt.doneTuned {
			tuned = ", and they include iterations during which the sampler was still tuning (parallel tempering's ladder)"
		}
		lacked := ""
		if adapt != nil {
			lacked = fmt.Sprintf(" (the last window: %d quantities short of the ESS or over the R̂ limit, %d rare states entered fewer times%s)", adapt.short, len(adapt.unmetRare), firstNames(adapt.unmetRare, 3))
		}
		out.Diagnostics.Warnings = append(out.Diagnostics.Warnings, fmt.Sprintf("the run reached %s before every quantity's bulk and tail ESS reached %g with R̂ within its limit and every rare state was entered %d times%s: the draws are those of the second half of the run%s; raise the limit or use a method for hard targets", limit, spec.Keep.Target, RareVisits, lacked, tuned))
	}
	if budget != nil && budget.tuningDraws() {
		out.Diagnostics.Warnings = append(out.Diagnostics.Warnings, fmt.Sprintf("the evaluation budget (%d) ended while the sampler was still tuning or too soon after (its last tuning iteration %d, the draws from iteration %d): the draws include tuning iterations; give it a larger budget", spec.Keep.Budget, budget.tuned, budget.warmup+budget.thin))
	}
	if lateTuning > 0 && out.Diagnostics != nil {
		until, fix := fmt.Sprintf("up to iteration %d", lateTuning), fmt.Sprintf("give --warmup %d or more", lateTuning)
		if tuningAtEnd {
			until, fix = "to the end of the run", "give a --warmup longer than the tuning (--adapt, --tune)"
		}
		out.Diagnostics.Warnings = append(out.Diagnostics.Warnings, fmt.Sprintf("the sampler was still tuning (its proposal's size or its ladder) after the warm-up of %d iterations, %s: the draws kept meanwhile come from a kernel that was changing, which the error bars do not account for; %s, or tune for fewer iterations", spec.Keep.Warmup, until, fix))
	}
	if w := zeroWarning(zeros, joint); w != "" && out.Diagnostics != nil && !out.lastOneShot() {
		out.Diagnostics.Warnings = append(out.Diagnostics.Warnings, w)
	}
	if spec.Compress.On() {
		t0 := time.Now()
		if err := compressOutput(ctx, m, out, spec.Compress); err != nil {
			if ctx.Err() != nil {
				out.Status = sampler.Canceled
				return out, nil
			}
			return nil, err
		}
		out.Compressed.Seconds = time.Since(t0).Seconds()
	}
	out.Seconds = time.Since(start).Seconds()
	return out, nil
}

// zeroEntries is a network whose tables have zero entries over several
// variables, grouped into blocks that Gibbs chains and parallel
// tempering's site kernel update jointly (factorgraph.Graph).
type zeroEntries interface {
	ZeroEntries() int
	BlocksCover() bool
}

// zeroWarning is the warning on a network's zero entries for a run whose
// last sampler updated its blocks jointly (joint) or not: none when the
// blocks cover every such table (every configuration of positive
// probability is then reachable from every other).
func zeroWarning(z zeroEntries, joint bool) string {
	if z == nil || z.ZeroEntries() == 0 || (joint && z.BlocksCover()) {
		return ""
	}
	const tail = "chains that all miss the same configurations agree, so R̂ cannot see it; compare with dstein exact, or sample with --method exact"
	if joint {
		return fmt.Sprintf("the network has %d zero entries in tables over several variables (deterministic or logical relations), some in groups of tables too large to update jointly (more than %d joint states): the chains may not reach every configuration of positive probability, and %s", z.ZeroEntries(), model.MaxBlockStates, tail)
	}
	return fmt.Sprintf("the network has %d zero entries in tables over several variables (deterministic or logical relations): single-site moves may not reach every configuration of positive probability, and %s, or with gibbs (without --stratified or --multi-spin) or pt (--kernel site), which update such tables' variables jointly", z.ZeroEntries(), tail)
}

// OutputMemory estimates what the output of a run of spec on m holds: the
// kept samples (draws of every chain or every replicate's particles, 8
// bytes a value), the marginals (a list of 24 bytes and 8 a state for each
// variable) and the means, and with error bars a Quantity (80 bytes and
// its name, in a list grown by appending: 160) for each variable with two
// states or fewer, and for each state of the others
// (Diagnostics.Quantities).
func OutputMemory(m model.Model, spec Spec) float64 {
	d := float64(m.Dim())
	need := 8*float64(spec.rows())*d + 8*float64(sampler.States(m)) + 32*d
	if spec.Keep.Draws > 0 || spec.Replicates > 1 {
		need += 160 * float64(Quantities(m))
	}
	return need
}

// diagnoseQuantityMemory is what Diagnose holds for a quantity while it
// runs, besides the quantity it keeps: its function (a closure, about 200
// bytes), its result and error (96), and its copy among the ESS warnings'
// list (80, and the list's growth). Measured: Gibbs with 2 chains of 20
// draws on a UAI chain of 150,000 binary variables peaked at 0.88–0.94 of
// infer.Memory.
const diagnoseQuantityMemory = 460

// Quantities returns the number of quantities of m that error bars hold
// (Diagnostics.Quantities, without log p* and the observables): one for
// each variable with at most two states, one for each state of the others.
func Quantities(m model.Model) int {
	q := 0
	for i := range m.Dim() {
		if k := len(m.States(i)); k > 2 {
			q += k
		} else {
			q++
		}
	}
	return q
}

// rows returns the number of samples a run keeps: every chain's draws,
// every replicate's particles, or the n final states.
func (spec Spec) rows() int {
	if spec.Keep.Draws > 0 {
		return spec.N * spec.Keep.Draws
	}
	return spec.N * max(1, spec.Replicates)
}

// Iters returns the iterations of the whole run: every replicate's
// stages, with the last stage's set by Keep.
func (spec Spec) Iters() int {
	pl, err := spec.Plan()
	if err != nil {
		pl = spec.Pipeline
	}
	return max(1, spec.Replicates) * pl.Iters()
}

// addWarning records a method's warning once, naming the replicate when
// there are several.
func (o *Output) addWarning(w string, reps, r int) {
	if reps > 1 {
		w = fmt.Sprintf("replicate %d: %s", r+1, w)
	}
	o.Warnings = append(o.Warnings, w)
}

type offsetProgress struct {
	p           sampler.Progress
	base, total int
}

func (o offsetProgress) Update(done, _ int) { o.p.Update(o.base+done, o.total) }

// Plan returns the pipeline that runs: the spec's, with the last stage's
// iterations set by Keep. It reports settings that do not fit together.
func (spec Spec) Plan() (sampler.Pipeline, error) {
	pl := spec.Pipeline
	if err := pl.Validate(); err != nil {
		return pl, err
	}
	if spec.Replicates < 0 {
		return pl, fmt.Errorf("the number of replicates must be at least 1, got %d", spec.Replicates)
	}
	if spec.Replicates > 1 && spec.N > 0 && spec.N < diag.MinDraws {
		// Refused before the run: the replicates' R̂ takes their
		// particles as draws, and could fail only after the work.
		return pl, fmt.Errorf("replicates of %d particles or chains each are too few for the replicates' R̂: give --n %d or more, or keep draws of chains (--draws) instead", spec.N, diag.MinDraws)
	}
	if its := max(1, pl.Iters()); spec.Replicates > sampler.MaxIters/its {
		return pl, fmt.Errorf("%d replicates of %d iterations are more iterations than a run can count (at most %d)", spec.Replicates, its, sampler.MaxIters)
	}
	if err := spec.Compress.Validate(); err != nil {
		return pl, err
	}
	if rows := spec.rows(); spec.Compress.Reweight && rows > compress.MaxWeightStates {
		// Refused before the run: the weights could fail only after it.
		return pl, fmt.Errorf("Stein weights take at most %d draws (their kernel matrix is draws × draws); this run keeps %d: keep fewer draws or points", compress.MaxWeightStates, rows)
	}
	if spec.Keep == (Keep{}) {
		return pl, nil
	}
	if err := spec.Keep.Validate(); err != nil {
		return pl, err
	}
	if spec.Replicates > 1 {
		return pl, fmt.Errorf("draws of chains and replicates exclude each other: independent chains already give the error bars")
	}
	last := pl.Stages[len(pl.Stages)-1]
	meth, err := sampler.Lookup(last.Method)
	if err != nil {
		return pl, err
	}
	if meth.OneShot || meth.Approximate {
		kind := "makes independent draws in one step"
		if meth.Approximate {
			kind = "is approximate: its states are not a Markov chain that leaves the model invariant"
		}
		return pl, fmt.Errorf("draws are kept from MCMC chains, but %s %s: use replicates for its error bars", last.Method, kind)
	}
	pl.Stages = append([]sampler.Stage(nil), pl.Stages...)
	pl.Stages[len(pl.Stages)-1].Iters = spec.Keep.Iters()
	return pl, nil
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
// copies of n·d values), the output (OutputMemory), and the largest of its
// stages' own estimates.
func Memory(m model.Model, spec Spec) float64 {
	n, d := float64(spec.N), float64(m.Dim())
	k := sampler.States(m)
	// The initial points and states, and the final states (measured: Gibbs
	// with one chain on a UAI chain of 300,000 binary variables peaked at
	// 0.95 of the estimate).
	need := 16*float64(k) + 3*8*n*d + OutputMemory(m, spec)
	// The diagnostics' per-quantity buffers and, with error bars, their
	// transients; the compression.
	rows := float64(spec.rows())
	need += diagnoseMemory(rows) + compressMemory(spec.Compress, rows, d)
	if spec.Estimates == RaoBlackwell {
		// Counted whether or not the model gives its conditionals, so
		// that the estimate from a model file's shape, before it is read,
		// is the same as the model's.
		need += condTableMemory(m, rows)
	}
	if spec.Keep.Draws > 0 || spec.Replicates > 1 {
		need += diagnoseQuantityMemory * float64(Quantities(m))
	}
	if spec.Keep.Target > 0 {
		// The window being filled besides the last complete one.
		need += 8 * rows * d
	}
	if spec.Keep.Budget > 0 {
		// The reservoir: twice the draws.
		need += 16 * rows * d
	}
	pl, err := spec.Plan()
	if err != nil {
		pl = spec.Pipeline
	}
	if spec.Trace {
		need += 200 * float64(pl.Iters())
	}
	var stage float64
	for _, st := range pl.Resolved().Stages {
		if meth, err := sampler.Lookup(st.Method); err == nil {
			stage = max(stage, meth.MemoryOf(m, spec.N, st.Settings))
		}
	}
	return need + stage
}

// firstNames lists up to k names after a colon ("": none), with "…" when
// there are more.
func firstNames(names []string, k int) string {
	if len(names) == 0 {
		return ""
	}
	out := ": " + strings.Join(names[:min(k, len(names))], ", ")
	if len(names) > k {
		out += ", …"
	}
	return out
}
