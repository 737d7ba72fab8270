package main

import (
	"bufio"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dstein/dstein/compress"
	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/internal/suggest"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/modelfile"
	"github.com/dstein/dstein/report"
	"github.com/dstein/dstein/sampler"
)

// maxKSDPoints bounds the points whose KSD² is printed (it costs n²d).
const maxKSDPoints = 2000

type compressFlags struct {
	model, samples, rule, out string
	evidence, given           string
	reweight                  string
	n                         int
	ell                       float64
	mem                       memoryFlag
	format                    formatFlag
}

func newCompressCmd(e *env) *cobra.Command {
	var f compressFlags
	cmd := &cobra.Command{
		Use:   "compress --model FILE --samples FILE.csv --n N --out FILE.csv [flags]",
		Short: "Pick n points that represent many draws (kernel herding, Stein thinning)",
		Long: `Pick --n points from the draws of --samples (a CSV file as "dstein sample
--out" writes it, chain and draw columns included) that represent the
distribution better than n of the draws would. Rules:

  herding  kernel herding with the Hamming kernel exp(−H/ℓ): greedily
           matches the draws' empirical measure (uses none of the model's
           probabilities; inherits the draws' bias)
  stein    greedy Stein thinning: minimises the kernel Stein discrepancy of
           the points against the model (p up to its normaliser), with the
           discrete Stein kernel of the same base kernel
  stein-reg  the same with the entropic regulariser of Bénard, Staber and
           Da Veiga (2023), λ = 1/n: each step also favours probable states

Points may repeat a draw. The output is a samples CSV of the n points
(--format npy: a NumPy array FILE.npy of shape (n, d) and its JSON sidecar).
Draws of a network given evidence are compressed against the model given
the same evidence (--evidence, --given): the Stein rules, the weights and
the printed KSD² are then the conditioned model's.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCompress(e, &f, cmd.Flags().Changed("ell"))
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.model, "model", "", "JSON model file, UAI network (.uai) or Bayesian network (.bif, .xml) the draws are of (required)")
	fs.StringVar(&f.samples, "samples", "", "draws to compress: a samples CSV file (required)")
	fs.StringVar(&f.evidence, "evidence", "", "UAI evidence file (.evid) for a .uai network: the draws were made given it (they hold every variable, the evidence's at its values)")
	fs.StringVar(&f.given, "given", "", "evidence by name for a network (.bif, .xml or .uai), as dstein sample takes it: rain=yes,sprinkler=off")
	fs.IntVar(&f.n, "n", 100, "number of points to pick (more than the draws repeats them; the points count in the memory estimate)")
	fs.StringVar(&f.rule, "rule", "herding", "rule: "+strings.Join(infer.CompressionRules, ", "))
	fs.Float64Var(&f.ell, "ell", 0, "bandwidth ℓ of the Hamming kernel exp(−H/ℓ) (default: d/4, at least 1, for herding; 1 for stein)")
	fs.StringVar(&f.reweight, "reweight", "", "ksd: Stein importance weights on the draws first (ℓ = d), which herding then matches; corrects draws of a slightly wrong distribution")
	fs.StringVar(&f.out, "out", "", "write the points as a samples CSV file (\"-\": standard output), or FILE.npy with --format npy")
	f.mem.register(fs)
	f.format.register(fs, "--out's points")
	return cmd
}

// pointsMemory estimates the bytes of n points of d variables: the
// compression's result, and for n ≤ maxKSDPoints the Stein points of the
// printed KSD² (16 bytes per entry).
func pointsMemory(n, d int) float64 {
	b := compress.PointsMemory(n, d)
	if n <= maxKSDPoints {
		b += 16 * float64(n) * float64(d)
	}
	return b
}

func runCompress(e *env, f *compressFlags, ellSet bool) error {
	switch {
	case f.model == "":
		return usagef("--model is required: the model file the draws are of")
	case f.samples == "":
		return usagef("--samples is required: a CSV file as dstein sample --out writes it")
	case !slices.Contains(infer.CompressionRules, f.rule):
		return usagef("unknown rule %q%s; want one of %s", f.rule, suggest.Hint(f.rule, infer.CompressionRules), strings.Join(infer.CompressionRules, ", "))
	}
	switch {
	case f.reweight != "" && f.reweight != "ksd":
		return usagef("unknown --reweight %q; want ksd", f.reweight)
	case f.reweight != "" && f.rule != infer.RuleHerding:
		return usagef("--reweight applies to --rule herding (Stein thinning already targets the model)")
	}
	if err := atLeast("n", f.n, 1); err != nil {
		return err
	}
	if err := finiteFlag("ell", f.ell); err != nil {
		return err
	}
	if ellSet && !(f.ell > 0) {
		return usagef("--ell must be a finite number > 0, got %v", f.ell)
	}
	if ellSet && f.rule != infer.RuleHerding && f.ell < compress.MinEll {
		return usagef("--ell %v is too small for --rule %s: want at least %g (the Stein kernel holds e^(1/ℓ), which overflows below about 0.0014)", f.ell, f.rule, compress.MinEll)
	}
	if err := f.format.check(); err != nil {
		return err
	}
	budget, err := f.mem.budget()
	if err != nil {
		return err
	}
	arrays, err := f.format.arrayPaths("--out", f.out)
	if err != nil {
		return err
	}
	out, err := startOutputs(e, []string{f.model, f.samples, f.evidence}, arrays...)
	if err != nil {
		return err
	}
	defer out.plan.Abort()
	say := out.say
	// The points and, per draw, the draw as read and what the rule keeps
	// of it.
	rowBytes := func(d int) float64 {
		if f.rule == infer.RuleHerding && f.reweight == "" {
			return compress.HerdMemory(1, d)
		}
		return compress.Memory(1, d)
	}
	work := func(m model.Model, rows int) float64 {
		d := m.Dim()
		w := pointsMemory(f.n, d) + report.SamplesBytes(rows, d) + float64(rows)*rowBytes(d)
		if f.reweight != "" {
			u := float64(min(rows, compress.MaxWeightStates))
			w += 8*u*u + 48*u // the Stein kernel matrix and the solver's vectors
		}
		return w
	}
	// The model is checked alone as it is read: the points and the draws
	// are checked with it below, before the draws are read.
	lm, err := openModel(e, f.model, f.evidence, modelfile.Options{Budget: budget, Given: f.given})
	if err != nil {
		return err
	}
	m := lm.Model
	d := m.Dim()
	// --n sizes the result: a count beyond what any process can hold is a
	// mistake in the command line (exit 2: no --max-memory makes it run);
	// below that, the memory estimate decides (exit 3), before the draws
	// are read and again with them.
	if f.n > compress.MaxPoints(d) {
		return usagef("--n %d is too large: at most %d points of %d variables can be held in memory", f.n, compress.MaxPoints(d), d)
	}
	need := func(rows int) float64 { return memlimit.Base + lm.Memory.Need(work(m, rows)) }
	if err := budget.Check(fmt.Sprintf("compressing to %d points of %d variables", f.n, d), need(0)); err != nil {
		return err
	}
	// The reader refuses a file of more draws than the budget allows
	// before it keeps any.
	s, err := report.LoadOwnSamplesCSV(e.ctx, f.samples, lm.File, maxRowsWithin(budget, need))
	if err != nil {
		return err
	}
	if lm.Free != nil {
		// Draws made given evidence hold every variable of the file; the
		// rules work on the free ones, against the conditioned model (the
		// Stein rules once scored them against the unconditioned one).
		z, err := lm.FreeStates(s.Z, s.N)
		if err != nil {
			return fmt.Errorf("%s: %w", f.samples, err)
		}
		s = &sampler.Samples{N: s.N, D: m.Dim(), Z: z}
	}
	if err := budget.Check(fmt.Sprintf("compressing %d draws of %d variables to %d points", s.N, d, f.n), need(s.N)); err != nil {
		return err
	}
	start := time.Now()
	var wts *compress.Weights
	res, err := cancelable(e, func() (*compress.Result, error) {
		var w []float64
		if f.reweight == "ksd" {
			var err error
			if wts, err = compress.SteinWeights(e.ctx, m, s, compress.Options{}, infer.MaxWeightIters); err != nil {
				return nil, err
			}
			w = wts.W
		}
		return infer.Compress(e.ctx, m, s, w, f.rule, f.n, f.ell)
	})
	if err != nil {
		if e.ctx.Err() != nil {
			return interrupted{"interrupted; nothing written"}
		}
		return err
	}
	repeats := res.Repeats()
	fmt.Fprintf(say, "compress   %s, ℓ = %g: %d points from %d draws (%d distinct states) of %s in %.2f s; %d points repeat a state\n",
		f.rule, res.Ell, f.n, s.N, res.Distinct, f.samples, time.Since(start).Seconds(), repeats)
	if wts != nil {
		fmt.Fprintf(say, "weights    Stein importance weights (ℓ = %d) on %d distinct states: KSD² %.4g → %.4g, weight ESS %.0f of %d draws, %d iterations (Frank–Wolfe gap %.2g)\n",
			d, wts.Distinct, wts.Unweighted, wts.KSD2, wts.ESS, s.N, wts.Iterations, wts.Gap)
		if wts.Gap > compress.GapTolerance*max(wts.KSD2, 1e-300) {
			fmt.Fprintf(say, "warning    the weights stopped after %d iterations at a Frank–Wolfe gap of %.2g, %.0f%% of their KSD², above the %.0f%% they aim at: they are not the KSD-optimal weights\n",
				wts.Iterations, wts.Gap, 100*wts.Gap/max(wts.KSD2, 1e-300), 100*compress.GapTolerance)
		}
		if wts.ESS < 0.1*float64(s.N) {
			fmt.Fprintf(say, "warning    weight ESS %.0f of %d draws: the weights rest on few draws, and the points follow them. On correct draws reweighting can make the means much worse (5–26× the MSE of as many i.i.d. draws on a 10-unit RBM with large weights, where herding alone was 0.015–0.027×; README \"Representative points\"); use it for draws of a known-wrong distribution\n", wts.ESS, s.N)
		}
	}
	if f.rule != infer.RuleHerding {
		fmt.Fprintf(say, "warning    Stein thinning's points are rarely better than as many i.i.d. draws on discrete targets (0.75–90× their MSE of the means in dstein's measurements, README \"Representative points\"), and their KSD² does not rank point sets by their moments; herding is the rule to use\n")
	}
	if f.rule == "herding" && res.Reference < s.N {
		fmt.Fprintf(say, "reference  herding matched an evenly spaced sub-sample of %d of the draws (more than %d distinct states)\n", res.Reference, compress.DefaultMaxReference)
	}
	if f.n <= maxKSDPoints {
		if ksd, err := compress.KSD2(m, res.Points, res.Ell); err == nil {
			fmt.Fprintf(say, "ksd²       %.4g (V-statistic of the points with the Stein kernel of exp(−H/%g); not a ranking of point sets by their moments)\n", ksd, res.Ell)
		}
	} else {
		fmt.Fprintf(say, "ksd²       not computed above %d points (its cost grows as n²)\n", maxKSDPoints)
	}
	if f.n > s.N {
		fmt.Fprintf(say, "note       %d points from %d draws: at least %d of them repeat a draw; more draws give more distinct points\n", f.n, s.N, f.n-s.N)
	}
	fmt.Fprintf(say, "memory     about %s estimated (limit %s, --max-memory)\n", memlimit.Format(int64(budget.Total(need(s.N)))), memlimit.Format(budget.Limit))
	// The points over every variable of the file, the evidence's at its
	// values, as sample --out writes draws.
	points := &sampler.Samples{N: res.Points.N, D: lm.File.Dim(), Z: lm.ExpandStates(res.Points.Z, res.Points.N)}
	if err := out.writeSamplesArray(&f.format, "--out",
		func(w *bufio.Writer) error { return report.WriteSamplesCSV(w, lm.File, points) },
		func(w *bufio.Writer) error { return report.WriteSamplesNPY(w, lm.File, points, report.Groups{}, true) },
		func(array string) any {
			return report.SamplesSidecar(lm.File, points, report.Groups{}, true, array, f.model, nil)
		}); err != nil {
		return err
	}
	return out.commit(e)
}
