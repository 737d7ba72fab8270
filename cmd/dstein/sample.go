package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/report"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/dhmc"
	"github.com/dstein/dstein/sampler/dmala"
	"github.com/dstein/dstein/sampler/gfsvgd"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/transform"
)

// gfsvgdFlags are the GF-SVGD settings on the command line: a preset, then
// overrides for the flags the user set.
type gfsvgdFlags struct {
	preset, surrogate, bandwidth, weights, optimizer string
	lr, temperature, initMean, initStd, bwScale, h   float64
	medianAll, stratified                            bool
	sweeps                                           int
}

func (g *gfsvgdFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&g.preset, "preset", "default", "GF-SVGD settings to start from: "+strings.Join(gfsvgd.PresetNames(), " or "))
	fs.StringVar(&g.surrogate, "surrogate", "relaxed", "surrogate ρ: base (ρ = p0) or relaxed (smooth relaxation of the model)")
	fs.Float64Var(&g.temperature, "temperature", transform.DefaultTemperature, "temperature τ of the relaxed surrogate (1 is the paper's σ)")
	fs.Float64Var(&g.lr, "lr", 0, "learning rate (default: the preset's)")
	fs.StringVar(&g.optimizer, "optimizer", "", "adam or plain (default: the preset's)")
	fs.Float64Var(&g.initMean, "init-mean", 0, "mean of the initial N(mean, std²) draw (default: the preset's)")
	fs.Float64Var(&g.initStd, "init-std", 0, "spread of the initial draw (default: the preset's)")
	fs.StringVar(&g.bandwidth, "bandwidth", "", "kernel bandwidth rule: svgd (h = med²/log(n+1)), paper (h = med²/(2 log(n+1))) or fixed (default: the preset's)")
	fs.Float64Var(&g.bwScale, "bandwidth-scale", 0, "multiplier of the bandwidth (default: the preset's)")
	fs.Float64Var(&g.h, "fixed-h", 0, "the bandwidth h for --bandwidth fixed")
	fs.BoolVar(&g.medianAll, "median-all-pairs", false, "take the median over all n² pairs, zeros included, not the distinct pairs")
	fs.StringVar(&g.weights, "weights", "", "importance weights: self (self-normalised) or rank (the paper's BNN appendix) (default: the preset's)")
	fs.IntVar(&g.sweeps, "sweeps", 0, "Gibbs sweeps of the particles after the transport (default: the preset's; 30 for default, 0 for paper and transport)")
	fs.BoolVar(&g.stratified, "stratified", false, "couple the sweeps' uniforms across particles by systematic sampling (default: the preset's)")
}

// iters returns the number of GF-SVGD iterations: --iters when given, else
// the preset's.
func (g *gfsvgdFlags) iters(fs *pflag.FlagSet, given int) int {
	if fs.Changed("iters") {
		return given
	}
	return gfsvgd.PresetIters(g.preset)
}

// settings applies the preset and then the flags the user set.
func (g *gfsvgdFlags) settings(fs *pflag.FlagSet) (gfsvgd.Settings, error) {
	set, err := gfsvgd.Preset(g.preset)
	if err != nil {
		return set, usageError{err}
	}
	if fs.Changed("lr") {
		if !(g.lr > 0) || math.IsInf(g.lr, 0) {
			return set, usagef("--lr must be a finite number > 0, got %v", g.lr)
		}
		set.LearningRate = g.lr
	}
	if fs.Changed("optimizer") {
		switch g.optimizer {
		case "adam":
			set.Optimizer = gfsvgd.Adam
		case "plain":
			set.Optimizer = gfsvgd.Plain
		default:
			return set, usagef("unknown optimizer %q; want adam or plain", g.optimizer)
		}
	}
	if fs.Changed("init-mean") {
		set.InitMean = g.initMean
	}
	if fs.Changed("init-std") {
		if !(g.initStd > 0) {
			return set, usagef("--init-std must be > 0, got %v", g.initStd)
		}
		set.InitStd = g.initStd
	}
	if fs.Changed("bandwidth") {
		r, err := kernel.ParseRule(g.bandwidth)
		if err != nil {
			return set, usageError{err}
		}
		set.Bandwidth.Rule = r
	}
	if fs.Changed("bandwidth-scale") {
		if !(g.bwScale > 0) {
			return set, usagef("--bandwidth-scale must be > 0, got %v", g.bwScale)
		}
		set.Bandwidth.Scale = g.bwScale
	}
	if fs.Changed("fixed-h") {
		set.Bandwidth.H = g.h
	}
	if set.Bandwidth.Rule == kernel.RuleFixed && !(set.Bandwidth.H > 0) {
		return set, usagef("--bandwidth fixed needs --fixed-h > 0")
	}
	if fs.Changed("median-all-pairs") {
		set.Bandwidth.IncludeDiagonal = g.medianAll
	}
	if fs.Changed("sweeps") {
		if g.sweeps < 0 {
			return set, usagef("--sweeps must be ≥ 0, got %d", g.sweeps)
		}
		set.Sweeps = g.sweeps
		if g.sweeps == 0 {
			set.Stratified = false
		}
	}
	if fs.Changed("stratified") {
		set.Stratified = g.stratified
	}
	if fs.Changed("weights") {
		switch g.weights {
		case "self":
			set.Weights = gfsvgd.SelfNormalized
		case "rank":
			set.Weights = gfsvgd.Rank
		default:
			return set, usagef("unknown weights %q; want self or rank", g.weights)
		}
	}
	if !(g.temperature > 0) || math.IsInf(g.temperature, 0) {
		return set, usagef("--temperature must be a finite number > 0, got %v", g.temperature)
	}
	if err := set.Validate(); err != nil {
		return set, usageError{err}
	}
	return set, nil
}

// record describes the settings of the run for the summary JSON.
func (f *sampleFlags) record(set gfsvgd.Settings, gs gibbs.Settings, ds dhmc.Settings, ms dmala.Settings) *report.Settings {
	std := set.InitStd
	if std == 0 {
		std = 1
	}
	switch f.method {
	case "exact":
		return nil
	case "gibbs":
		return &report.Settings{InitMean: set.InitMean, InitStd: std, Scan: f.scan}
	case "gwg":
		return &report.Settings{InitMean: set.InitMean, InitStd: std}
	case "dmala":
		return &report.Settings{InitMean: set.InitMean, InitStd: std, StepSize: ms.StepSize}
	case "dhmc":
		return &report.Settings{InitMean: set.InitMean, InitStd: std, StepSize: ds.StepSize, Steps: ds.Steps}
	}
	return f.gf.record(set)
}

// record describes GF-SVGD's settings for the summary JSON.
func (g *gfsvgdFlags) record(set gfsvgd.Settings) *report.Settings {
	s := set
	if s.LearningRate == 0 {
		s.LearningRate = gfsvgd.DefaultLearningRate
	}
	if s.InitStd == 0 {
		s.InitStd = 1
	}
	scale := s.Bandwidth.Scale
	if scale == 0 {
		scale = 1
	}
	r := &report.Settings{
		Preset: g.preset, Surrogate: g.surrogate, LearningRate: s.LearningRate, Optimizer: s.Optimizer.String(),
		BandwidthRule: s.Bandwidth.Rule.String(), BandwidthScale: scale, MedianWithZeros: s.Bandwidth.IncludeDiagonal,
		Weights: s.Weights.String(), InitMean: s.InitMean, InitStd: s.InitStd, Sweeps: s.Sweeps, Stratified: s.Stratified,
	}
	if s.Bandwidth.Rule == kernel.RuleFixed {
		r.FixedBandwidth = s.Bandwidth.H
	}
	if g.surrogate == "relaxed" {
		r.Temperature = g.temperature
	}
	return r
}

type sampleFlags struct {
	model, method    string
	out, json, trace string
	evidence, mar    string
	n, iters, show   int
	seed             uint64
	gf               gfsvgdFlags
	scan             string  // Gibbs
	stepSize         float64 // DHMC
	steps            int     // DHMC
	alpha            float64 // DMALA
}

func newSampleCmd(e *env) *cobra.Command {
	var f sampleFlags
	cmd := &cobra.Command{
		Use:   "sample --model FILE [flags]",
		Short: "Sample a model and summarise the samples",
		Long: `Sample a model given as a JSON model file (see examples/ and the README)
and print the estimated means and marginals. --out writes the samples as
CSV (one column per variable, the model's state values), --json a summary
with every mean and marginal, --trace the per-iteration diagnostics.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSample(e, cmd, &f) },
	}
	fs := cmd.Flags()
	fs.StringVar(&f.model, "model", "", "JSON model file (required)")
	fs.StringVar(&f.method, "method", "gfsvgd", "sampler: "+strings.Join(infer.Methods, ", "))
	fs.IntVar(&f.n, "n", 100, "number of samples (particles)")
	fs.IntVar(&f.iters, "iters", 500, "number of iterations (GF-SVGD: default the preset's, 100 for default, 500 for paper and transport)")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed; the same seed gives the same output bytes")
	fs.StringVar(&f.out, "out", "", "write the samples to this CSV file")
	fs.StringVar(&f.json, "json", "", "write a JSON summary to this file")
	fs.StringVar(&f.evidence, "evidence", "", "UAI evidence file (.evid) for a .uai network: sample the free variables given it")
	fs.StringVar(&f.mar, "mar", "", "write the estimated marginals of every variable in the UAI competition's MAR format")
	fs.StringVar(&f.trace, "trace", "", "write per-iteration diagnostics to this CSV file")
	fs.IntVar(&f.show, "show", 10, "number of variables to print (the JSON has all)")
	f.gf.register(fs)
	fs.StringVar(&f.scan, "scan", "auto", "Gibbs: auto (block for RBMs, else systematic), systematic or block")
	fs.Float64Var(&f.stepSize, "step-size", dhmc.DefaultStepSize, "DHMC: integration step size ε")
	fs.IntVar(&f.steps, "steps", dhmc.DefaultSteps, "DHMC: integration steps per iteration")
	fs.Float64Var(&f.alpha, "alpha", dmala.DefaultStepSize, "DMALA: proposal step size α (larger moves more variables per proposal and is accepted less often)")
	return cmd
}

// chainSettings reads the Gibbs and DHMC flags.
func (f *sampleFlags) chainSettings() (gibbs.Settings, dhmc.Settings, error) {
	var g gibbs.Settings
	switch f.scan {
	case "auto":
	case "systematic":
		g.Scan = gibbs.Systematic
	case "block":
		g.Scan = gibbs.Block
	default:
		return g, dhmc.Settings{}, usagef("unknown --scan %q; want auto, systematic or block", f.scan)
	}
	if !(f.stepSize > 0) || math.IsInf(f.stepSize, 0) {
		return g, dhmc.Settings{}, usagef("--step-size must be a finite number > 0, got %v", f.stepSize)
	}
	if f.steps < 1 {
		return g, dhmc.Settings{}, usagef("--steps must be at least 1, got %d", f.steps)
	}
	return g, dhmc.Settings{StepSize: f.stepSize, Steps: f.steps}, nil
}

// dmalaSettings reads the DMALA flags.
func (f *sampleFlags) dmalaSettings() (dmala.Settings, error) {
	if !(f.alpha > 0) || math.IsInf(f.alpha, 0) {
		return dmala.Settings{}, usagef("--alpha must be a finite number > 0, got %v", f.alpha)
	}
	return dmala.Settings{StepSize: f.alpha}, nil
}

func runSample(e *env, cmd *cobra.Command, f *sampleFlags) error {
	if f.model == "" {
		return usagef("--model is required: a JSON model file such as examples/ising-grid.json, or a UAI network (.uai)")
	}
	if f.n < 1 {
		return usagef("--n must be at least 1, got %d", f.n)
	}
	if f.iters < 0 {
		return usagef("--iters must be ≥ 0, got %d", f.iters)
	}
	if !contains(infer.Methods, f.method) {
		return usagef("unknown method %q; want one of %s", f.method, strings.Join(infer.Methods, ", "))
	}
	if !contains(infer.Surrogates, f.gf.surrogate) {
		return usagef("unknown surrogate %q; want one of %s", f.gf.surrogate, strings.Join(infer.Surrogates, ", "))
	}
	set, err := f.gf.settings(cmd.Flags())
	if err != nil {
		return err
	}
	gs, ds, err := f.chainSettings()
	if err != nil {
		return err
	}
	ms, err := f.dmalaSettings()
	if err != nil {
		return err
	}
	if f.trace != "" && f.method != "gfsvgd" {
		return usagef("--trace records GF-SVGD's diagnostics; it does not apply to --method %s", f.method)
	}
	lm, err := loadModel(f.model, f.evidence)
	if err != nil {
		return err
	}
	m := lm.m
	iters := f.iters
	if f.method == "gfsvgd" {
		iters = f.gf.iters(cmd.Flags(), f.iters)
	}
	if f.method == "exact" {
		iters = 0
	}
	initStd := set.InitStd
	if initStd == 0 {
		initStd = 1
	}
	opts := infer.Options{Method: f.method, N: f.n, Iters: iters, Seed: f.seed, GFSVGD: set, Gibbs: gs, DHMC: ds, DMALA: ms,
		InitMean: set.InitMean, InitStd: initStd,
		Surrogate: f.gf.surrogate, Temperature: f.gf.temperature, Trace: f.trace != ""}
	out, err := sampleWithBar(e, m, opts)
	if err != nil {
		return err
	}
	printSummary(e.stdout, f, set, m, out)
	if f.out != "" {
		if err := report.SaveSamplesCSV(f.out, lm.file, lm.expandSamples(out.Samples)); err != nil {
			return err
		}
	}
	if f.mar != "" {
		if err := saveMAR(f.mar, lm.expandMarginals(out.Marginals)); err != nil {
			return err
		}
	}
	if f.json != "" {
		if err := report.SaveJSON(f.json, report.NewSummary(f.model, m, out, f.record(set, gs, ds, ms))); err != nil {
			return err
		}
	}
	if f.trace != "" {
		if err := report.SaveTraceCSV(f.trace, out.Trace); err != nil {
			return err
		}
	}
	var wrote []string
	for _, p := range []string{f.out, f.mar, f.json, f.trace} {
		if p != "" {
			wrote = append(wrote, p)
		}
	}
	if len(wrote) > 0 {
		fmt.Fprintf(e.stdout, "wrote %s\n", strings.Join(wrote, ", "))
	}
	return nil
}

// sampleWithBar runs infer.Sample with a progress bar on a terminal and
// turns a canceled run into an interrupted error.
func sampleWithBar(e *env, m model.Model, opts infer.Options) (*infer.Output, error) {
	b := newBar(e, opts.Iters, opts.Method)
	if b != nil {
		opts.Progress = b
	}
	out, err := infer.Sample(e.ctx, m, opts)
	b.finish()
	if err != nil {
		return nil, err
	}
	if out.Status == sampler.Canceled {
		return nil, interrupted{fmt.Sprintf("interrupted after %d of %d iterations; nothing written", out.Iters, opts.Iters)}
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func printSummary(w io.Writer, f *sampleFlags, set gfsvgd.Settings, m model.Model, out *infer.Output) {
	fmt.Fprintf(w, "model      %s (%d variables)\n", f.model, m.Dim())
	switch out.Method {
	case "gfsvgd":
		sur := f.gf.surrogate
		if sur == "relaxed" {
			sur = fmt.Sprintf("relaxed, τ = %g", f.gf.temperature)
		}
		fmt.Fprintf(w, "method     gfsvgd, preset %s, surrogate %s%s\n", f.gf.preset, sur, sweepNote(set))
	case "gibbs":
		fmt.Fprintf(w, "method     gibbs, %d chains, scan %s\n", out.N, f.scan)
	case "gwg":
		fmt.Fprintf(w, "method     gwg (Gibbs-with-Gradients), %d chains, %d proposals per chain and iteration\n", out.N, out.Dim)
	case "dmala":
		fmt.Fprintf(w, "method     dmala (discrete Langevin MH), %d chains, step size α = %g, one proposal of all %d variables per chain and iteration\n", out.N, f.alpha, out.Dim)
	case "dhmc":
		fmt.Fprintf(w, "method     dhmc, %d chains, step size %g, %d integration steps per iteration\n", out.N, f.stepSize, f.steps)
	case "exact":
		fmt.Fprintf(w, "method     exact: %d independent exact samples\n", out.N)
	}
	fmt.Fprintf(w, "run        n = %d, %d iterations, seed %d, %.2f s, %d model evaluations\n", out.N, out.Iters, out.Seed, out.Seconds, out.Evaluations)
	if out.Method == "gwg" || out.Method == "dmala" {
		fmt.Fprintf(w, "accepted   %.1f%% of proposals\n", 100*out.Acceptance)
	}
	if out.Method == "gfsvgd" {
		fmt.Fprintf(w, "weights    ESS %.1f of %d at the final particles; bandwidth h = %.4g\n", out.WeightESS, out.N, out.Bandwidth)
	}
	if out.Impossible > 0 {
		fmt.Fprintf(w, "warning    %d samples are in states of probability zero\n", out.Impossible)
	}
	printMeans(w, m, out.Means, out.Marginals, nil, f.show)
}

// printMeans prints a table of the first show variables: the estimated mean
// (and the exact one when given) and the estimated marginals.
func printMeans(w io.Writer, m model.Model, mean []float64, marg [][]float64, exactMean []float64, show int) {
	d := len(mean)
	if show <= 0 || show > d {
		show = d
	}
	if exactMean != nil {
		fmt.Fprintf(w, "%-8s %9s %9s  %s\n", "variable", "mean", "exact", "P(state)")
	} else {
		fmt.Fprintf(w, "%-8s %9s  %s\n", "variable", "mean", "P(state)")
	}
	for i := range show {
		var parts []string
		for s, v := range m.States(i) {
			parts = append(parts, fmt.Sprintf("%s: %.3f", report.FormatValue(v), marg[i][s]))
		}
		if exactMean != nil {
			fmt.Fprintf(w, "z%-7d %9.4f %9.4f  %s\n", i, mean[i], exactMean[i], strings.Join(parts, "  "))
		} else {
			fmt.Fprintf(w, "z%-7d %9.4f  %s\n", i, mean[i], strings.Join(parts, "  "))
		}
	}
	if show < d {
		fmt.Fprintf(w, "(showing %d of %d variables; --show N or --json for more)\n", show, d)
	}
}

// sweepNote describes the Gibbs sweeps that follow the transport.
func sweepNote(set gfsvgd.Settings) string {
	switch {
	case set.Sweeps > 0 && set.Stratified:
		return fmt.Sprintf(", then %d stratified Gibbs sweeps", set.Sweeps)
	case set.Sweeps > 0:
		return fmt.Sprintf(", then %d Gibbs sweeps", set.Sweeps)
	}
	return ""
}
