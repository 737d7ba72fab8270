package main

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dstein/dstein/compress"
	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/internal/suggest"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/modelfile"
	"github.com/dstein/dstein/model/uai"
	"github.com/dstein/dstein/report"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// Why one file of about 560 lines: dstein sample's flags interact (draws, thinning,
// compression, replicates, formats) and are checked together before the run; the printing
// lives in sampleprint.go.

type sampleFlags struct {
	model, evidence, given, method, pipeline string
	out, json, mar, trace                    string
	n, iters, show                           int
	chains, warmup, draws, thin, reps        int
	ess                                      float64
	maxIters                                 int
	maxTime                                  time.Duration
	seed                                     uint64
	initMean, initStd                        float64
	mem                                      memoryFlag
	format                                   formatFlag
	settings                                 *settingFlags
	compress, reweight                       string
	estimates                                string
	points                                   int
	ell                                      float64
	checkModes                               bool
}

func newSampleCmd(e *env) *cobra.Command {
	var f sampleFlags
	cmd := &cobra.Command{
		Use:   "sample --model FILE [--method NAME | --pipeline FILE] [flags]",
		Short: "Sample a model with a method or a pipeline and summarise the samples",
		Long: `Sample a model (a JSON model file, see examples/, or a UAI network .uai with
optional --evidence) and print the estimated means and marginals.

--method names a sampling method or a preset (a named pipeline of methods);
"dstein methods" lists both with their settings. --pipeline runs a JSON
pipeline file instead ("dstein methods --pipeline NAME" prints a preset's,
to start from). Flags of a method's settings set that method's settings;
one that does not apply to the chosen method is an error.

--out writes the samples as CSV (one column per variable, the model's state
values; --format npy: a NumPy array FILE.npy and its JSON sidecar FILE.json),
--json a summary with every mean and marginal, --mar the marginals in the
UAI MAR format, --trace every stage's statistics after every iteration (a
tidy CSV). "-" writes to standard output. Outputs are checked before the run
and written only when it completes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSample(e, cmd, &f) },
	}
	fs := cmd.Flags()
	fs.StringVar(&f.model, "model", "", "JSON model file, UAI network (.uai) or Bayesian network (.bif, or XMLBIF .xml) (required)")
	fs.StringVar(&f.evidence, "evidence", "", "UAI evidence file (.evid) for a .uai network: sample the free variables given it")
	fs.StringVar(&f.given, "given", "", "evidence by name for a network (.bif, .xml or .uai): rain=yes,sprinkler=off (a UAI network's variables are z0, z1, … and its states their indices)")
	fs.StringVar(&f.method, "method", infer.DefaultMethod, "sampling method or preset: "+strings.Join(append(sampler.MethodNames(), infer.PresetNames()...), ", "))
	fs.StringVar(&f.pipeline, "pipeline", "", "run the pipeline in this JSON file instead of --method")
	fs.IntVar(&f.n, "n", 100, "number of samples: particles or chains (the default preset: draws, 1000 when not given, rounded up to a whole number of draws per chain: --n 10 keeps 4 chains × 3)")
	fs.IntVar(&f.iters, "iters", 0, "iterations of a single method (default: the method's or preset's)")
	fs.IntVar(&f.draws, "draws", 0, "keep this many draws of each MCMC chain after the warm-up, for error bars and convergence diagnostics (default: keep only the final states)")
	fs.IntVar(&f.chains, "chains", 4, "number of MCMC chains when keeping --draws (the --n of chain methods)")
	fs.IntVar(&f.warmup, "warmup", 0, "iterations discarded before the --draws are kept (default: as many as the draws take, draws × thin)")
	fs.IntVar(&f.thin, "thin", 1, "keep every thin-th state of each chain after the warm-up")
	fs.Float64Var(&f.ess, "ess", 0, "run the chains until every quantity's bulk and tail ESS reach this (and R̂ passes) in two windows in a row, doubling the run and keeping its second half, thinned to the draws (left out: the default preset's own target, 400 for 1000 draws; a fixed --warmup and --thin for the other methods)")
	fs.IntVar(&f.maxIters, "max-iters", 0, "with --ess, the most iterations per chain (rounds for pt): the run stops at the last doubling within it (default: 16 × 2 × the draws per chain, at least 8000)")
	fs.DurationVar(&f.maxTime, "max-time", 0, "with --ess, end the run at the first iteration past this duration (1m30s) once a window of draws is complete; the result then depends on the machine's speed")
	fs.IntVar(&f.reps, "replicates", 1, "run the whole method this many times independently; error bars come from the spread of the runs (for particle methods such as gfsvgd)")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed; the same seed gives the same output bytes")
	fs.Float64Var(&f.initMean, "init-mean", 0, "mean of the initial N(mean, std²) draw every method starts from (default: the preset's, 0)")
	fs.Float64Var(&f.initStd, "init-std", 0, "spread of the initial draw (default: the preset's, 1)")
	fs.StringVar(&f.out, "out", "", "write the samples to this file (CSV, or FILE.npy with --format npy)")
	fs.StringVar(&f.json, "json", "", "write a JSON summary to this file")
	fs.StringVar(&f.mar, "mar", "", "write the estimated marginals of every variable in the UAI competition's MAR format")
	fs.StringVar(&f.trace, "trace", "", "write every stage's statistics after every iteration to this CSV file")
	fs.BoolVar(&f.checkModes, "check-modes", false, "after a run of chains with --draws, run the default (tempering sized by its pilot) at the same cost and warn where a mean differs beyond what both runs' errors allow: chains that all sit in one mode, which their own R̂ cannot see (doubles the cost; not for pt, sw or exact)")
	fs.StringVar(&f.estimates, "estimates", infer.RaoBlackwell.String(), "how variables' marginals and means are estimated from draws: rao-blackwell (each draw's conditional probabilities given its other variables, averaged) or frequencies (counts of the draws)")
	fs.IntVar(&f.show, "show", 10, "number of variables to print (the JSON has all)")
	fs.StringVar(&f.compress, "compress", "", "end the run by picking --points representative points from its samples: herding, stein or stein-reg (dstein compress; the compact preset herds)")
	fs.IntVar(&f.points, "points", 100, "number of points --compress picks (the compact preset: --n)")
	fs.Float64Var(&f.ell, "ell", 0, "bandwidth ℓ of --compress's Hamming kernel exp(−H/ℓ) (default: d/4, at least 1, for herding; 1 for stein)")
	fs.StringVar(&f.reweight, "reweight", "", "ksd: Stein importance weights on the samples before herding them (--compress herding)")
	f.mem.register(fs)
	f.format.register(fs, "--out's samples")
	f.settings = registerSettingFlags(fs)
	return cmd
}

// runSpec turns the flags into a run: the pipeline (preset, method or
// file) with the flags applied, and a name for it.
func (f *sampleFlags) runSpec(fs *pflag.FlagSet, pipelineData []byte) (sampler.Pipeline, string, error) {
	var p sampler.Pipeline
	name := f.method
	what := "--method " + f.method
	if f.pipeline != "" {
		var err error
		if p, err = sampler.ParsePipeline(pipelineData); err != nil {
			return p, "", fmt.Errorf("%s: %w", f.pipeline, err)
		}
		if p.Iters() == 0 {
			// The starting states would be reported as the model's draws
			// (a one-shot stage, such as exact, counts one iteration).
			return p, "", fmt.Errorf("%s: its stages make 0 iterations in all; want at least 1 (the samples would be the starting states)", f.pipeline)
		}
		name, what = "pipeline", "the pipeline "+f.pipeline
	} else {
		var err error
		if p, _, err = infer.Pipeline(f.method); err != nil {
			return p, "", usageError{err}
		}
	}
	if fs.Changed("iters") {
		// 0 would report the starting states as the model's samples.
		if err := atLeast("iters", f.iters, 1); err != nil {
			return p, "", err
		}
		if len(p.Stages) != 1 {
			return p, "", usagef("--iters sets the iterations of a single method; %s has %d stages (%s): write a pipeline file (dstein methods --pipeline %s > p.json)", what, len(p.Stages), infer.Describe(p), f.method)
		}
		if m, _ := sampler.Lookup(p.Stages[0].Method); m != nil && m.OneShot {
			return p, "", usagef("--iters does not apply to %s: it makes all its samples in one step", m.Name)
		}
		p.Stages = append([]sampler.Stage(nil), p.Stages...)
		p.Stages[0].Iters = f.iters
	}
	if fs.Changed("init-mean") {
		p.Init.Mean = f.initMean
	}
	if fs.Changed("init-std") {
		if !(f.initStd > 0) || math.IsInf(f.initStd, 0) {
			return p, "", usagef("--init-std must be a finite number > 0, got %v", f.initStd)
		}
		p.Init.Std = f.initStd
	}
	if math.IsNaN(f.initMean) || math.IsInf(f.initMean, 0) {
		return p, "", usagef("--init-mean must be a finite number, got %v", f.initMean)
	}
	if f.settings.err != nil {
		return p, "", f.settings.err
	}
	if err := f.settings.apply(fs, &p, what); err != nil {
		return p, "", err
	}
	if err := p.Validate(); err != nil {
		return p, "", usageError{err}
	}
	return p, name, nil
}

func runSample(e *env, cmd *cobra.Command, f *sampleFlags) error {
	fs := cmd.Flags()
	if f.model == "" {
		return usagef("--model is required: a JSON model file such as examples/ising-grid.json, or a UAI network (.uai)")
	}
	if err := atLeast("show", f.show, 1); err != nil {
		return err
	}
	if fs.Changed("max-iters") && f.maxIters < 1 {
		return usagef("--max-iters %d: want at least 1 iteration (leave it out for the default)", f.maxIters)
	}
	if fs.Changed("max-time") && f.maxTime <= 0 {
		return usagef("--max-time %v: want a positive duration such as 1m30s (leave it out for none)", f.maxTime)
	}
	if f.pipeline != "" && fs.Changed("method") {
		return usagef("--pipeline and --method exclude each other")
	}
	if err := atLeast("n", f.n, 1); err != nil {
		return err
	}
	if err := f.format.check(); err != nil {
		return err
	}
	keep, n, err := f.keep(fs)
	if err != nil {
		return err
	}
	comp, err := f.compression(fs)
	if err != nil {
		return err
	}
	est, err := infer.ParseEstimates(f.estimates)
	if err != nil {
		return usageError{fmt.Errorf("--estimates: %w", err)}
	}
	budget, err := f.mem.budget()
	if err != nil {
		return err
	}
	var pipelineData []byte
	if f.pipeline != "" {
		if pipelineData, err = safeio.ReadFile(f.pipeline, "pipeline file", 1<<20); err != nil {
			var tl *safeio.TooLarge
			if errors.As(err, &tl) {
				tl.LimitFlags = "" // a fixed limit: pipeline files take a few kB
			}
			return err
		}
	}
	pl, name, err := f.runSpec(fs, pipelineData)
	if err != nil {
		return err
	}
	// planned is the pipeline that runs (the last stage's length set by
	// --draws), which the memory messages describe.
	planned, err := (infer.Spec{Pipeline: pl, N: n, Keep: keep, Replicates: f.reps, Compress: comp}).Plan()
	if err != nil {
		return usageError{err}
	}
	if f.checkModes {
		if err := infer.CheckModesApplies(planned, keep.Draws); err != nil {
			return usageError{fmt.Errorf("--check-modes does not apply: %w", err)}
		}
	}
	arrays, err := f.format.arrayPaths("--out", f.out)
	if err != nil {
		return err
	}
	outs, err := startOutputs(e, []string{f.model, f.evidence, f.pipeline}, append(arrays, "--json", f.json, "--mar", f.mar, "--trace", f.trace)...)
	if err != nil {
		return err
	}
	defer outs.plan.Abort()
	say := outs.say
	spec := infer.Spec{Pipeline: pl, N: n, Key: rng.NewKey(f.seed), Trace: f.trace != "", Keep: keep, Replicates: f.reps, Compress: comp, Estimates: est}
	// The run and the outputs held in memory grow with the model: counted
	// with the model before it is read (a network: before its tables), and
	// again once it is built.
	// (m is the model sampled, file the file's: before the evidence is
	// clamped, the file's stands for both.)
	// The outputs are written after the run, from its output.
	work := func(m, file model.Model) float64 {
		need := max(infer.Memory(m, spec), infer.OutputMemory(m, spec)+f.outputBytes(file, spec))
		if f.checkModes {
			need += infer.CheckMemory(m) // the second run, while the first's output is held
		}
		return need
	}
	what := fmt.Sprintf("sampling %d particles or chains with %s", n, infer.Describe(planned))
	lm, err := openModel(e, f.model, f.evidence, modelfile.Options{Budget: budget, What: what, Given: f.given,
		Extra: func(s modelfile.Shape) float64 { return work(s.Model, s.Model) }})
	if err != nil {
		return err
	}
	m := lm.Model
	need := memlimit.Base + lm.Memory.Need(work(m, lm.File))
	if err := budget.Check(fmt.Sprintf("sampling %d particles or chains of %d variables with %s", n, m.Dim(), infer.Describe(planned)), need); err != nil {
		return err
	}
	out, err := runWithBar(e, m, spec, name)
	if err != nil {
		return err
	}
	if f.checkModes {
		mc, err := infer.CheckModes(e.ctx, m, out)
		if e.ctx.Err() != nil {
			return interrupted{"interrupted while checking for missed modes (--check-modes); nothing written"}
		}
		if err != nil {
			return err
		}
		out.ModeCheck = &mc
		if mc.Warning != "" {
			out.Diagnostics.Warnings = append(out.Diagnostics.Warnings, mc.Warning)
		}
	}
	printSummary(say, f, name, lm, out)
	fmt.Fprintf(say, "memory     about %s estimated (limit %s, --max-memory)\n", memlimit.Format(int64(budget.Total(need))), memlimit.Format(budget.Limit))
	if f.out != "" {
		samples := &sampler.Samples{N: out.Samples.N, D: lm.File.Dim(), Z: lm.ExpandStates(out.Samples.Z, out.Samples.N)}
		groups, points := groupsOf(out.Layout), out.Compressed != nil
		if points {
			groups = report.Groups{} // the points, not the draws
		}
		// log p* of each draw or particle under the model sampled (the
		// summary's log_p), not of the compressed points.
		var lp []float64
		if !points {
			lp = report.LogProbs(m, out.Samples)
		}
		if err := outs.writeSamplesArray(&f.format, "--out",
			func(w *bufio.Writer) error { return report.WriteGroupedSamplesCSV(w, lm.File, samples, groups, lp) },
			func(w *bufio.Writer) error { return report.WriteSamplesNPY(w, lm.File, samples, groups, points) },
			func(array string) any {
				return report.SamplesSidecar(lm.File, samples, groups, points, array, f.model, lp)
			}); err != nil {
			return err
		}
	}
	if err := outs.write("--json", func(w *bufio.Writer) error {
		s := infer.NewSummary(name, f.model, m, out)
		s.Evidence = lm.EvidenceByName()
		return report.WriteJSON(w, s)
	}); err != nil {
		return err
	}
	if err := outs.write("--mar", func(w *bufio.Writer) error { return uai.WriteMAR(w, lm.ExpandMarginals(out.Marginals)) }); err != nil {
		return err
	}
	if err := outs.write("--trace", func(w *bufio.Writer) error { return infer.WriteTrace(w, out.Trace) }); err != nil {
		return err
	}
	return outs.commit(e)
}

// outputBytes estimates what writing the outputs of a run of spec on a
// model of the file file holds in memory besides the run's output
// (infer.OutputMemory): with evidence, --out's samples and --mar's
// marginals expanded to every variable of the file (8 bytes a value, 24
// bytes a variable); with --json, the summary's text as the encoder holds
// it (jsonMarginalsBytes for the marginals and means, and the states'
// values, about 12 bytes a state and 14 a variable of text) and, with
// error bars, a quantity's ten numbers (420 bytes of text, measured on
// 150,000 of them; three times that, the encoder's two buffers and their
// growth, measured: 2.3 times). --out, --mar and --trace stream to their
// files.
func (f *sampleFlags) outputBytes(file model.Model, spec infer.Spec) float64 {
	var need float64
	d, k := float64(file.Dim()), float64(sampler.States(file))
	if f.evidence != "" || f.given != "" {
		rows := float64(spec.N) * float64(max(1, spec.Replicates))
		if spec.Keep.Draws > 0 {
			rows = float64(spec.N) * float64(spec.Keep.Draws)
		}
		if f.out != "" {
			need += 8 * rows * d
		}
		if f.mar != "" {
			need += 24 * d
		}
	}
	if f.json != "" {
		need += jsonMarginalsBytes(file) + 2.75*(12*k+14*d)
		if spec.Keep.Draws > 0 || spec.Replicates > 1 {
			need += 3 * 420 * float64(infer.Quantities(file))
		}
	}
	return need
}

// keep turns --draws, --chains, --warmup, --thin, --ess, --max-iters and
// --max-time into the draws to keep and the number of chains.
func (f *sampleFlags) keep(fs *pflag.FlagSet) (infer.Keep, int, error) {
	k, n, err := f.keepFixed(fs)
	if err != nil {
		return k, n, err
	}
	if !fs.Changed("ess") {
		if k.Target > 0 {
			// The preset's own ESS target (the default's).
			k.MaxIters, k.MaxTime = f.maxIters, f.maxTime
			if err := k.Validate(); err != nil {
				return k, 0, usageError{err}
			}
			return k, n, nil
		}
		for _, name := range []string{"max-iters", "max-time"} {
			if fs.Changed(name) {
				return k, 0, usagef("--%s bounds a run with --ess (an ESS target); without it the chains run --warmup + --draws × --thin iterations", name)
			}
		}
		return k, n, nil
	}
	switch {
	case k.Draws == 0:
		return k, 0, usagef("--ess applies to the draws of MCMC chains: the default or compact preset, or --draws with a chain method")
	case fs.Changed("warmup") || fs.Changed("thin"):
		return k, 0, usagef("--ess chooses the warm-up and the thinning itself (the second half of the run, thinned to the draws); leave out --warmup and --thin")
	case !(f.ess > 0):
		return k, 0, usagef("--ess %v: want a positive effective sample size (400 = 100 per chain for 4 chains)", f.ess)
	}
	k.Warmup, k.Thin, k.Target, k.MaxIters, k.MaxTime = 0, 0, f.ess, f.maxIters, f.maxTime
	if err := k.Validate(); err != nil {
		return k, 0, usageError{err}
	}
	return k, n, nil
}

// keepFixed turns --draws, --chains, --warmup and --thin into the draws to
// keep and the number of chains; without --draws the others are errors and
// the run has --n particles or chains.
func (f *sampleFlags) keepFixed(fs *pflag.FlagSet) (infer.Keep, int, error) {
	if err := atLeast("replicates", f.reps, 1); err != nil {
		return infer.Keep{}, 0, err
	}
	cd, chainPreset := infer.PresetChains(f.method)
	chainPreset = chainPreset && f.pipeline == ""
	if chainPreset && !fs.Changed("draws") {
		// The preset's chains and draws: --n samples in all.
		switch {
		case fs.Changed("iters"):
			return infer.Keep{}, 0, usagef("--iters does not apply to --method %s: it runs %d chains of --warmup + --draws × --thin iterations", f.method, cd.Chains)
		case f.reps > 1:
			return infer.Keep{}, 0, usagef("--replicates does not apply to --method %s: its %d chains already give the error bars", f.method, cd.Chains)
		}
		for _, c := range []struct {
			name string
			v    int
		}{{"chains", f.chains}, {"thin", f.thin}} {
			if err := atLeast(c.name, c.v, 1); err != nil {
				return infer.Keep{}, 0, err
			}
		}
		if fs.Changed("chains") {
			cd.Chains = f.chains
		}
		fixed := cd.Target > 0 && (fs.Changed("warmup") || fs.Changed("thin"))
		if fixed {
			// A fixed run instead of the preset's ESS target: the
			// flags' warm-up and thinning.
			cd.Target, cd.Warmup, cd.Thin = 0, f.warmup, f.thin
		}
		if fs.Changed("thin") {
			cd.Thin = f.thin
		}
		if fs.Changed("warmup") {
			if err := atLeast("warmup", f.warmup, 0); err != nil {
				return infer.Keep{}, 0, err
			}
			cd.Warmup = f.warmup
		}
		n := f.n
		if !fs.Changed("n") {
			n = cd.Samples
		}
		if err := atLeast("n", n, 1); err != nil {
			return infer.Keep{}, 0, err
		}
		if n > maxCount/max(1, cd.PerPoint) {
			return infer.Keep{}, 0, usagef("--n %d: more samples than a run can count (at most %d)", n, maxCount/max(1, cd.PerPoint))
		}
		chains, k := cd.Keep(n)
		if fixed && !fs.Changed("warmup") {
			k.Warmup = k.Draws * k.Thin // --warmup's default
		}
		if err := k.Validate(); err != nil {
			return k, 0, usageError{err}
		}
		return k, chains, nil
	}
	if !fs.Changed("draws") {
		for _, name := range []string{"chains", "warmup", "thin"} {
			if fs.Changed(name) {
				return infer.Keep{}, 0, usagef("--%s applies when keeping --draws of MCMC chains; without --draws a run keeps the final states of its --n chains or particles", name)
			}
		}
		return infer.Keep{}, f.n, nil
	}
	switch {
	case fs.Changed("n") && fs.Changed("chains"):
		return infer.Keep{}, 0, usagef("--n and --chains both set the number of chains; give one")
	case fs.Changed("iters"):
		return infer.Keep{}, 0, usagef("--iters does not apply with --draws: the chains run --warmup + --draws × --thin iterations")
	case f.reps > 1:
		return infer.Keep{}, 0, usagef("--replicates does not apply with --draws: independent chains (--chains) already give the error bars")
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"draws", f.draws}, {"chains", f.chains}, {"thin", f.thin}} {
		if err := atLeast(c.name, c.v, 1); err != nil {
			return infer.Keep{}, 0, err
		}
	}
	if err := atLeast("warmup", f.warmup, 0); err != nil {
		return infer.Keep{}, 0, err
	}
	n := f.chains
	if fs.Changed("n") {
		n = f.n
	}
	k := infer.Keep{Warmup: f.warmup, Draws: f.draws, Thin: f.thin}
	switch {
	case chainPreset:
		// The preset's chains, warm-up and thinning unless given.
		if !fs.Changed("chains") && !fs.Changed("n") {
			n = cd.Chains
		}
		if !fs.Changed("thin") {
			k.Thin = cd.Thin
		}
		if !fs.Changed("warmup") {
			k.Warmup = cd.Warmup
		}
	case !fs.Changed("warmup"):
		if f.draws > maxCount/f.thin {
			return k, 0, usagef("--draws %d × --thin %d: more iterations than a run can count (at most %d)", f.draws, f.thin, maxCount)
		}
		k.Warmup = f.draws * f.thin
	}
	if err := k.Validate(); err != nil {
		return k, 0, usageError{err}
	}
	return k, n, nil
}

// maxCount bounds the counts of iterations and samples that a run keeps
// (2³¹, infer.Keep's limit), so that no product of flags overflows.
const maxCount = 1 << 31

// compression turns --compress, --points, --ell and --reweight (or the
// compact preset's defaults) into the run's compression.
func (f *sampleFlags) compression(fs *pflag.FlagSet) (infer.Compression, error) {
	cd, chainPreset := infer.PresetChains(f.method)
	chainPreset = chainPreset && f.pipeline == ""
	c := infer.Compression{Rule: f.compress}
	if !fs.Changed("compress") && chainPreset {
		c.Rule = cd.Compress.Rule
	}
	if c.Rule == "" {
		for _, name := range []string{"points", "ell", "reweight"} {
			if fs.Changed(name) {
				return c, usagef("--%s applies with --compress (a rule: %s)", name, strings.Join(infer.CompressionRules, ", "))
			}
		}
		return infer.Compression{}, nil
	}
	if !slices.Contains(infer.CompressionRules, c.Rule) {
		return c, usagef("unknown --compress rule %q%s; want one of %s", c.Rule, suggest.Hint(c.Rule, infer.CompressionRules), strings.Join(infer.CompressionRules, ", "))
	}
	c.N = f.points
	if chainPreset && cd.Compress.On() && !fs.Changed("draws") {
		if fs.Changed("points") {
			return c, usagef("--points does not apply to --method %s without --draws: its --n is the number of points (%d draws each)", f.method, cd.PerPoint)
		}
		c.N = cd.Samples
		if fs.Changed("n") {
			c.N = f.n
		}
	}
	if err := atLeast("points", c.N, 1); err != nil {
		return c, err
	}
	if err := finiteFlag("ell", f.ell); err != nil {
		return c, err
	}
	if fs.Changed("ell") && !(f.ell > 0) {
		return c, usagef("--ell must be a finite number > 0, got %v", f.ell)
	}
	if fs.Changed("ell") && f.compress != infer.RuleHerding && f.ell < compress.MinEll {
		return c, usagef("--ell %v is too small for --compress %s: want at least %g (the Stein kernel holds e^(1/ℓ), which overflows below about 0.0014)", f.ell, f.compress, compress.MinEll)
	}
	c.Ell = f.ell
	switch f.reweight {
	case "":
	case "ksd":
		c.Reweight = true
	default:
		return c, usagef("unknown --reweight %q; want ksd", f.reweight)
	}
	if err := c.Validate(); err != nil {
		return c, usageError{err}
	}
	return c, nil
}

// groupsOf names the leading columns of the samples CSV for a layout.
func groupsOf(l infer.Layout) report.Groups {
	switch l.Kind {
	case infer.LayoutChains:
		return report.Groups{Group: "chain", Member: "draw", Length: l.Length}
	case infer.LayoutReplicates:
		return report.Groups{Group: "replicate", Member: "particle", Length: l.Length}
	}
	return report.Groups{}
}

// runWithBar runs infer.Run with a progress bar on a terminal and turns a
// canceled run into an interrupted error.
func runWithBar(e *env, m model.Model, spec infer.Spec, what string) (*infer.Output, error) {
	b := newBar(e, spec.Iters(), what)
	if b != nil {
		spec.Progress = b
	}
	out, err := infer.Run(e.ctx, m, spec)
	b.finish()
	if e.ctx.Err() != nil {
		return nil, interrupted{interruptedAt(iters(out), spec.Iters())}
	}
	if err != nil {
		return nil, err
	}
	if out.Status == sampler.Canceled {
		return nil, interrupted{interruptedAt(out.Iters, spec.Iters())}
	}
	return out, nil
}

// interruptedAt says where a run was interrupted: during the sampling, or
// after it (while its draws were diagnosed or compressed).
func interruptedAt(done, total int) string {
	if done >= total {
		return fmt.Sprintf("interrupted after the sampling (all %d iterations), while summarising the draws; nothing written", done)
	}
	return fmt.Sprintf("interrupted after %d of %d iterations; nothing written", done, total)
}

func iters(o *infer.Output) int {
	if o == nil {
		return 0
	}
	return o.Iters
}
