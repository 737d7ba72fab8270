package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/gof"
	"github.com/dstein/dstein/internal/suggest"
	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/modelfile"
	"github.com/dstein/dstein/report"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// maxBootstrap bounds --bootstrap: 10⁷ draws resolve p-values to 10⁻⁷.
const maxBootstrap = 10_000_000

// gofTests are the tests dstein gof runs.
var gofTests = []string{"gfksd", "dksd", "bksd", "mmd"}

type gofFlags struct {
	model, samples, test, json     string
	evidence, given                string
	level, temperature, h, bwScale float64
	b, sweeps                      int
	seed                           uint64
	kind, surrogate, bandwidth     string
	kernel                         string
	kernelTemp                     float64
	mem                            memoryFlag
}

func newGofCmd(e *env) *cobra.Command {
	var f gofFlags
	cmd := &cobra.Command{
		Use:   "gof --model FILE --samples FILE.csv [flags]",
		Short: "Test whether samples come from a model (goodness of fit)",
		Long: `Test H0: the samples come from the model, against any other distribution.
The samples are a CSV file as "dstein sample --out" writes it ("-" reads
standard input); samples drawn from a network given evidence are tested
against it given the same evidence (--evidence, --given). Tests:

  gfksd  gradient-free kernelized Stein discrepancy on the samples lifted
         into the continuous parameterization (the paper's test)
  dksd   discrete kernelized Stein discrepancy, Hamming kernel
  bksd   kernelized Stein discrepancy of a balanced jump process (Barker
         rates, bounded), Hamming kernel: holds its level where dksd's
         score ratios are heavy-tailed, with less power elsewhere
  mmd    two-sample test against a reference sample drawn from the model

Prints the statistic, the p-value and the decision at --level; --json writes
the result. GF-KSD's bootstrap level was checked at the surrogate
temperatures 0.02 and 0.05 (EXPERIMENTS.md); other settings print a warning
with a bootstrap (a simulated null holds the level at any setting).

The bootstraps (multinomial, rademacher) approximate the statistic's null
distribution for large n; on models with rare states, near-deterministic
tables or a sample that is nearly one state repeated, and at small n, they
can reject a true model far more often than α. --bootstrap-kind simulation
replaces them with the null simulated from --bootstrap data sets drawn
exactly from the model (the model must have an exact sampler, as dstein
exact says): its level holds at any n, at the cost of one statistic per
data set. The default, auto, keeps the multinomial bootstrap unless the
sample is one on which it fails (n < 30, or a few states repeated beside
rarer ones) and the simulation's statistics cost at most 10 s to 2 min on
a 2-core machine (B·n·d·(n + d) ≤ 2·10⁹; the exact sampler's setup comes on
top). For gfksd and dksd it also simulates on any sample where that work
is at most 2·10⁸ (1–12 s): their bootstraps lost the level on small
samples of some models of many states. It says when it simulates, and why.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runGof(e, cmd, &f) },
	}
	fs := cmd.Flags()
	fs.StringVar(&f.model, "model", "", "JSON model file, UAI network (.uai) or Bayesian network (.bif, or XMLBIF .xml) (required)")
	fs.StringVar(&f.samples, "samples", "", "samples CSV file, as dstein sample --out writes it (required)")
	fs.StringVar(&f.evidence, "evidence", "", "UAI evidence file (.evid) for a .uai network: test the samples against the model given it (the samples hold every variable, the evidence's at its values)")
	fs.StringVar(&f.given, "given", "", "evidence by name for a network (.bif, .xml or .uai), as dstein sample takes it: rain=yes,sprinkler=off")
	fs.StringVar(&f.test, "test", "gfksd", "test: "+strings.Join(gofTests, ", "))
	fs.Float64Var(&f.level, "level", gof.DefaultAlpha, "level α of the test, in (0, 1)")
	fs.IntVar(&f.b, "bootstrap", gof.DefaultB, "number of bootstrap draws (permutations for mmd; data sets for --bootstrap-kind simulation)")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed; the same seed gives the same output bytes")
	fs.StringVar(&f.json, "json", "", "write the result as JSON to this file")
	fs.StringVar(&f.kind, "bootstrap-kind", gof.Auto.String(), "gfksd, dksd, bksd: the null's bootstrap, "+strings.Join(gof.Kinds, ", ")+" (the null simulated from exact data sets of the model); auto simulates on small or repetitive samples where that is affordable, and for gfksd and dksd wherever it is cheap")
	fs.StringVar(&f.surrogate, "surrogate", "", "gfksd: surrogate ρ, relaxed or base (ρ = p0) (default: relaxed where the model has a relaxed form)")
	fs.Float64Var(&f.temperature, "temperature", gof.DefaultTestTemperature, "gfksd: temperature τ of the relaxed surrogate")
	fs.StringVar(&f.bandwidth, "bandwidth", gof.DefaultTestBandwidth.Rule.String(), "gfksd: bandwidth rule: median (h = med²), svgd (med²/log(n+1)), paper (med²/(2 log(n+1))) or fixed (with --fixed-h)")
	fs.Float64Var(&f.h, "fixed-h", 0, "gfksd: the bandwidth h of --bandwidth fixed")
	fs.Float64Var(&f.bwScale, "bandwidth-scale", 1, "gfksd: multiplier of the bandwidth")
	fs.StringVar(&f.kernel, "kernel", gof.DefaultKernel, "gfksd: kernel, rbf (RBF on x) or soft (RBF on the soft bin memberships of x)")
	fs.Float64Var(&f.kernelTemp, "kernel-temperature", gof.DefaultKernelTemp, "gfksd: temperature of the soft kernel's memberships")
	fs.IntVar(&f.sweeps, "reference-sweeps", gof.DefaultSweeps, "mmd: Gibbs sweeps behind the reference sample when the model has no exact sampler")
	f.mem.register(fs)
	return cmd
}

// only returns a usage error for the first flag in names that the user set
// although it does not apply to the chosen test.
func (f *gofFlags) only(cmd *cobra.Command, test string, names ...string) error {
	if f.test == test {
		return nil
	}
	for _, n := range names {
		if cmd.Flags().Changed(n) {
			return usagef("--%s applies to --test %s only, not to --test %s", n, test, f.test)
		}
	}
	return nil
}

func finiteFlag(name string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return usagef("--%s must be a finite number, got %v", name, v)
	}
	return nil
}

// options checks the flags and returns the test's settings.
func (f *gofFlags) options(cmd *cobra.Command) (gof.Options, gof.GFKSDSettings, error) {
	var o gof.Options
	var set gof.GFKSDSettings
	fs := cmd.Flags()
	if f.model == "" {
		return o, set, usagef("--model is required: the model file the samples are tested against")
	}
	if f.samples == "" {
		return o, set, usagef("--samples is required: a CSV file as dstein sample --out writes it")
	}
	if !slices.Contains(gofTests, f.test) {
		return o, set, usagef("unknown test %q%s; want one of %s", f.test, suggest.Hint(f.test, gofTests), strings.Join(gofTests, ", "))
	}
	for name, v := range map[string]float64{"level": f.level, "temperature": f.temperature, "fixed-h": f.h, "bandwidth-scale": f.bwScale, "kernel-temperature": f.kernelTemp} {
		if err := finiteFlag(name, v); err != nil {
			return o, set, err
		}
	}
	if !(f.level > 0 && f.level < 1) {
		return o, set, usagef("--level must be in (0, 1), got %v", f.level)
	}
	if err := atLeast("bootstrap", f.b, 1); err != nil {
		return o, set, err
	}
	if f.b > maxBootstrap {
		return o, set, usagef("--bootstrap must be at most %d (the p-value's resolution is 1/(B+1)), got %d", maxBootstrap, f.b)
	}
	if f.test == "mmd" && fs.Changed("bootstrap-kind") {
		return o, set, usagef("--bootstrap-kind applies to gfksd, dksd and bksd; mmd's null comes from permutations")
	}
	if err := f.only(cmd, "gfksd", "surrogate", "temperature", "bandwidth", "fixed-h", "bandwidth-scale", "kernel", "kernel-temperature"); err != nil {
		return o, set, err
	}
	if err := f.only(cmd, "mmd", "reference-sweeps"); err != nil {
		return o, set, err
	}
	kind, err := gof.ParseKind(f.kind)
	if err != nil {
		return o, set, usageError{err}
	}
	o = gof.Options{Alpha: f.level, B: f.b, Bootstrap: kind, Key: rng.NewKey(f.seed)}
	if err := atLeast("reference-sweeps", f.sweeps, 1); err != nil {
		return o, set, err
	}
	switch f.surrogate {
	case "", "relaxed", "base":
		set.Surrogate = f.surrogate
	default:
		return o, set, usagef("unknown surrogate %q; want relaxed or base", f.surrogate)
	}
	if !(f.temperature > 0) {
		return o, set, usagef("--temperature must be a finite number > 0, got %v", f.temperature)
	}
	if f.surrogate == "base" && fs.Changed("temperature") {
		return o, set, usagef("--temperature applies to the relaxed surrogate, not to --surrogate base")
	}
	set.Temperature = f.temperature
	switch f.kernel {
	case "rbf", "soft":
		set.Kernel = f.kernel
	default:
		return o, set, usagef("unknown kernel %q; want rbf or soft", f.kernel)
	}
	if f.kernel != "soft" && fs.Changed("kernel-temperature") {
		return o, set, usagef("--kernel-temperature applies to --kernel soft only")
	}
	if !(f.kernelTemp > 0) {
		return o, set, usagef("--kernel-temperature must be a finite number > 0, got %v", f.kernelTemp)
	}
	set.KernelTemp = f.kernelTemp
	if fs.Changed("bandwidth") || fs.Changed("fixed-h") || fs.Changed("bandwidth-scale") {
		bw := gof.DefaultTestBandwidth
		if fs.Changed("bandwidth") {
			if bw.Rule, err = kernel.ParseRule(f.bandwidth); err != nil {
				return o, set, usageError{err}
			}
		}
		if fs.Changed("fixed-h") {
			if bw.Rule != kernel.RuleFixed {
				return o, set, usagef("--fixed-h is the bandwidth of --bandwidth fixed; give both")
			}
			bw.H = f.h
		}
		if fs.Changed("bandwidth-scale") {
			if !(f.bwScale > 0) {
				return o, set, usagef("--bandwidth-scale must be a finite number > 0, got %v", f.bwScale)
			}
			bw.Scale = f.bwScale
		}
		if err := bw.Validate(); err != nil {
			return o, set, usageError{err}
		}
		set.Bandwidth = &bw
	}
	return o, set, nil
}

func runGof(e *env, cmd *cobra.Command, f *gofFlags) error {
	o, set, err := f.options(cmd)
	if err != nil {
		return err
	}
	budget, err := f.mem.budget()
	if err != nil {
		return err
	}
	out, err := startOutputs(e, []string{f.model, f.samples, f.evidence}, "--json", f.json)
	if err != nil {
		return err
	}
	defer out.plan.Abort()
	say := out.say
	// The test of n samples: its matrices, the samples as read, and the
	// model loaded (its peak, or what it holds with the rest).
	// sim says whether the null is simulated: under auto, decided once
	// the samples are read.
	sim := o.Bootstrap == gof.Simulation
	testBytes := func(m model.Model, n int) float64 {
		b := gof.Memory(f.test, n, m.Dim(), o.B) - memlimit.Base + report.SamplesBytes(n, m.Dim())
		if f.test == "mmd" || sim {
			// The exact sampler behind MMD's reference or the simulated
			// null, and one simulated data set.
			b += exact.Memory(m) - memlimit.Base + report.SamplesBytes(n, m.Dim())
		}
		return b
	}
	lm, err := openModel(e, f.model, f.evidence, modelfile.Options{Budget: budget, What: "the " + f.test + " test", Given: f.given,
		Extra: func(s modelfile.Shape) float64 { return testBytes(s.Model, 2) }})
	if err != nil {
		return err
	}
	m := lm.Model
	// With evidence the samples are read over every variable of the file
	// and then over the free ones (both held for a moment).
	need := func(n int) float64 {
		extra := 0.0
		if lm.Free != nil {
			extra = 2 * report.SamplesBytes(n, lm.File.Dim())
		}
		return memlimit.Base + lm.Memory.Need(testBytes(m, n)+extra)
	}
	// The reader refuses a file of more rows than the budget allows
	// before it keeps any.
	s, err := report.LoadSamplesCSV(e.ctx, f.samples, lm.File, maxRowsWithin(budget, need))
	if err != nil {
		return err
	}
	if lm.Free != nil {
		z, err := lm.FreeStates(s.Z, s.N)
		if err != nil {
			return fmt.Errorf("%s: %w", f.samples, err)
		}
		s = &sampler.Samples{N: s.N, D: m.Dim(), Z: z}
	}
	if s.N < 2 {
		return fmt.Errorf("%s: %d sample; a test needs at least 2", f.samples, s.N)
	}
	what := fmt.Sprintf("the %s test of %d samples of %d variables with %d bootstrap draws", f.test, s.N, m.Dim(), o.B)
	if o.Bootstrap == gof.Auto && f.test != "mmd" {
		// Auto's choice depends on the sample and the model only (gof.Choose
		// caps the exact sampler's memory itself), never on this machine's
		// memory: where the budget is too small for the simulation it
		// chose, the command stops, as for --bootstrap-kind simulation.
		if k, _ := gof.Choose(f.test, m, s, o); k == gof.Simulation {
			sim = true
			what = fmt.Sprintf("the %s test of %d samples of %d variables with the null simulated from %d exact data sets (--bootstrap-kind auto chose it for this sample; --bootstrap-kind multinomial needs less)", f.test, s.N, m.Dim(), o.B)
		}
	}
	if err := budget.Check(what, need(s.N)); err != nil {
		return err
	}
	res, err := cancelable(e, func() (*gof.Result, error) {
		switch f.test {
		case "gfksd":
			return gof.GFKSD(e.ctx, m, s, set, o)
		case "dksd":
			return gof.DKSD(e.ctx, m, s, o)
		case "bksd":
			return gof.BKSD(e.ctx, m, s, o)
		}
		return gof.MMDForModel(e.ctx, m, s, f.sweeps, o)
	})
	if err != nil {
		if e.ctx.Err() != nil {
			return interrupted{"interrupted; nothing written"}
		}
		return err
	}
	caveat := ""
	if res.Impossible == 0 && f.test != "mmd" && res.BootstrapKind != gof.Simulation.String() {
		if why := gof.BootstrapCaveat(s); why != "" {
			caveat = bootstrapDoubt(why)
		}
	}
	printGof(say, f, m, set, res, caveat)
	if caveat != "" {
		// The JSON's level_checked and warning say it too.
		res.LevelChecked = false
		res.Warning = strings.TrimPrefix(res.Warning+"; "+caveat, "; ")
	}
	fmt.Fprintf(say, "memory     about %s estimated (limit %s, --max-memory)\n", memlimit.Format(int64(budget.Total(need(s.N)))), memlimit.Format(budget.Limit))
	if err := out.write("--json", func(w *bufio.Writer) error { return report.WriteJSON(w, res) }); err != nil {
		return err
	}
	return out.commit(e)
}

// maxRowsWithin returns the most samples whose need (increasing in the
// number of samples) fits the budget, at least 2 (0: no limit), so that a
// reader stops before it holds more.
func maxRowsWithin(b memlimit.Budget, need func(n int) float64) int {
	if b.Limit <= 0 {
		return 0
	}
	lo, hi := 2, 1<<40
	if need(lo) > float64(b.Limit) {
		return lo
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if need(mid) <= float64(b.Limit) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// bootstrapDoubt is the warning of a sample on which the bootstraps'
// level is in doubt (gof.BootstrapCaveat says why), with the remedy.
func bootstrapDoubt(why string) string {
	return why + ": the bootstrap approximates the null distribution for large samples of many distinct states, and on samples like this one it has rejected true models far more often than α (15% to 93% of data sets in dstein's checks, EXPERIMENTS.md); --bootstrap-kind simulation simulates the null from exact data sets of the model (where dstein can sample it exactly) and holds the level at any n"
}

// printGof prints the verdict line and the details of the test.
func printGof(w io.Writer, f *gofFlags, m model.Model, set gof.GFKSDSettings, r *gof.Result, caveat string) {
	if r.Impossible > 0 {
		fmt.Fprintf(w, "%s: %d of %d samples have probability zero under the model: reject H0 at any level (p-value 0, no bootstrap)\n",
			r.Test, r.Impossible, r.N)
	} else {
		draws := fmt.Sprintf("%d %s bootstrap draws", r.Bootstrap, r.BootstrapKind)
		switch r.BootstrapKind {
		case "permutation":
			draws = fmt.Sprintf("%d permutations", r.Bootstrap)
		case gof.Simulation.String():
			draws = fmt.Sprintf("null simulated from %d exact data sets of n = %d", r.Bootstrap, r.N)
		}
		verdict := "do not reject H0"
		if r.Reject {
			verdict = "reject H0"
		}
		fmt.Fprintf(w, "%s: statistic %.4g, p-value %.3g (%s): %s at α = %g\n", r.Test, r.Statistic, r.PValue, draws, verdict, r.Alpha)
		if r.BootstrapReason != "" {
			fmt.Fprintf(w, "null       --bootstrap-kind auto chose %s: %s\n", r.BootstrapKind, r.BootstrapReason)
		}
	}
	vars := "variables"
	if m.Dim() == 1 {
		vars = "variable"
	}
	fmt.Fprintf(w, "samples    %s: n = %d, %d %s; model %s\n", f.samples, r.N, m.Dim(), vars, f.model)
	if r.Impossible == 0 {
		if math.IsInf(r.CriticalValue, 1) {
			fmt.Fprintf(w, "critical   none: with %d draws the p-value is at least %.3g > α; use --bootstrap ≥ %d\n",
				r.Bootstrap, 1/float64(r.Bootstrap+1), int(math.Ceil(1/r.Alpha-1-1e-9)))
		} else {
			fmt.Fprintf(w, "critical   %.4g (H0 is rejected when the statistic exceeds it)\n", r.CriticalValue)
		}
	}
	switch r.Test {
	case "gfksd":
		if r.Impossible > 0 {
			break
		}
		sur := r.Surrogate
		if sur == "relaxed" {
			sur = fmt.Sprintf("relaxed, τ = %g", r.Temperature)
		}
		kern := "RBF on x"
		if r.Kernel == "soft" {
			kern = fmt.Sprintf("RBF on soft memberships (τ = %g)", set.KernelTemp)
		}
		fmt.Fprintf(w, "kernel     %s, h = %.4g (%s rule); surrogate %s; weight ESS %.1f of %d\n", kern, r.Bandwidth, r.BandwidthRule, sur, r.ESS, r.N)
		if r.BootstrapKind != gof.Simulation.String() && !(r.Surrogate == "relaxed" && r.Temperature >= gof.MinCheckedTemperature && r.Temperature <= gof.MaxCheckedTemperature) {
			fmt.Fprintf(w, "warning    GF-KSD's level was checked with the relaxed surrogate at τ = 0.02 and 0.05 only; at these settings the test may reject a true model far more often than α (at τ = 1e-5 it rejected in 38 of 40 data sets): treat the p-value with care\n")
		}
		if r.ESS < float64(r.N)/10 {
			fmt.Fprintf(w, "warning    the weights ρ/p_c are degenerate (ESS below n/10): a few samples decide the statistic, so the test is unreliable either way (it has rejected true models too often, and accepted uniform noise on a model far from it); try a sharper --temperature, or mmd or dksd\n")
		}
	case "dksd", "bksd":
		if r.Impossible > 0 {
			break // no statistic was computed
		}
		fmt.Fprintf(w, "kernel     exp(−H(z, z')/d), d = %g\n", r.Bandwidth)
	case "mmd":
		if r.Impossible > 0 {
			break
		}
		fmt.Fprintf(w, "kernel     exp(−H(z, z')/d), d = %g\n", r.Bandwidth)
		fmt.Fprintf(w, "reference  %d samples from the model: %s\n", r.N, r.Reference)
	}
	for _, warn := range []string{r.Warning, caveat} {
		if warn != "" && r.Impossible == 0 {
			fmt.Fprintf(w, "warning    %s\n", warn)
		}
	}
}
