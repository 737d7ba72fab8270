package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/sampler/iid"
)

// demoModels are the built-in examples: small enough for exact answers by
// enumeration.
func demoModels(seed uint64) ([]string, []model.Model, error) {
	g, err := ising.RandomGrid(4, 0.3, 0.3, seed)
	if err != nil {
		return nil, nil, err
	}
	b, err := rbm.Random(10, 4, 0.5, 1, seed)
	if err != nil {
		return nil, nil, err
	}
	return []string{
			"Ising 4×4 grid, coupling 0.3, fields from U(−0.3, 0.3)",
			"Bernoulli RBM, 10 visible and 4 hidden units, W ~ N(0, 0.5²), b, c ~ N(0, 1)",
		},
		[]model.Model{g, b}, nil
}

func newDemoCmd(e *env) *cobra.Command {
	var n, iters, show int
	var seed, modelSeed uint64
	var method string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Sample two built-in models with dstein's default and with Gibbs, and compare with the exact answer",
		Long: `Sample a 4×4 Ising grid and a small RBM with dstein's default preset (or
--method), with Gibbs sampling (n chains) and with exact i.i.d. sampling, and
compare each method's estimated means with the exact ones (by enumeration).
The RMSE that n exact i.i.d. samples have on average is shown for scale.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := atLeast("n", n, 1); err != nil {
				return err
			}
			if err := atLeast("show", show, 1); err != nil {
				return err
			}
			if err := atLeast("iters", iters, 1); err != nil {
				return err
			}
			main, _, err := infer.Pipeline(method)
			if err != nil {
				return usageError{err}
			}
			gibbsP, err := sampler.Single(gibbs.Name, nil, iters)
			if err != nil {
				return err
			}
			iidP, err := sampler.Single(iid.Name, nil, 1)
			if err != nil {
				return err
			}
			names, models, err := demoModels(modelSeed)
			if err != nil {
				return err
			}
			methods := []struct {
				p     sampler.Pipeline
				label string
			}{
				{main, method + ": " + infer.Describe(main)},
				{gibbsP, fmt.Sprintf("Gibbs (n chains, %d sweeps)", iters)},
				{iidP, "exact i.i.d. sampling"},
			}
			for k, m := range models {
				truth, err := exact.NewEnumerated(m, 0)
				if err != nil {
					return err
				}
				ex := truth.Result()
				var outs []*infer.Output
				for j, mt := range methods {
					spec := infer.Spec{Pipeline: mt.p, N: n, Key: rng.NewKey(seed)}
					if j == 0 {
						spec = infer.SpecFor(method, mt.p, n, rng.NewKey(seed))
					}
					spec.Truth = truth
					out, err := runWithBar(e, m, spec, "demo")
					if err != nil {
						return err
					}
					outs = append(outs, out)
				}
				if lay := outs[0].Layout; lay.Kind == infer.LayoutChains {
					// A chain preset: what ran, in chains and draws.
					var names []string
					for _, st := range outs[0].Pipeline.Stages {
						names = append(names, st.Method)
					}
					methods[0].label = fmt.Sprintf("%s: %s, %d chains × %d draws (warm-up %d, thin %d)", method, strings.Join(names, " → "), lay.Groups, lay.Length, lay.Warmup, lay.Thin)
				}
				if k > 0 {
					fmt.Fprintln(e.stdout)
				}
				fmt.Fprintf(e.stdout, "%s: exact answers by enumeration\n\n", names[k])
				tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "method\tsamples\titerations\tseconds\tRMSE of E[z]\texact inside 90% CI\t")
				for j, mt := range methods {
					fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%.4f\t%s\t\n", mt.label, outs[j].Samples.N, outs[j].Iters, outs[j].Seconds, rmse(outs[j].Means, ex.Means), covered(outs[j], ex.Means))
				}
				tw.Flush()
				scale := fmt.Sprintf("(the frequencies of n exact i.i.d. samples have an expected RMSE of %.4f", iidRMSE(m, ex, n))
				if dg := outs[len(outs)-1].Diagnostics; dg != nil && dg.Estimates == infer.RaoBlackwell.String() {
					scale += "; the table's means are Rao–Blackwellised, each draw's conditional probabilities averaged, which puts them below it"
				}
				fmt.Fprintf(e.stdout, "%s)\n\n", scale)
				printMeanColumns(e.stdout, ex.Means, outs, show)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&n, "n", 200, "number of particles, chains and exact samples")
	fs.IntVar(&iters, "iters", 500, "Gibbs sweeps")
	fs.StringVar(&method, "method", infer.DefaultMethod, "the method or preset compared with Gibbs and exact sampling")
	fs.Uint64Var(&seed, "seed", 1, "seed of the samplers")
	fs.Uint64Var(&modelSeed, "model-seed", 1, "seed of the built-in models' random parameters")
	fs.IntVar(&show, "show", 8, "number of variables to print")
	return cmd
}

// covered counts the variables whose exact mean lies inside the run's
// nominal 90% interval, or says why the run has none.
func covered(out *infer.Output, exactMeans []float64) string {
	dg := out.Diagnostics
	if dg == nil || dg.Source == infer.SourceNone {
		return "no error bars"
	}
	in, tot := 0, 0
	for i, mu := range exactMeans {
		q := dg.Quantity("z" + strconv.Itoa(i))
		if q == nil {
			continue
		}
		tot++
		if q.CI90[0] <= mu && mu <= q.CI90[1] {
			in++
		}
	}
	return fmt.Sprintf("%d of %d", in, tot)
}

func rmse(est, exactMeans []float64) float64 {
	var s float64
	for i := range est {
		s += (est[i] - exactMeans[i]) * (est[i] - exactMeans[i])
	}
	return math.Sqrt(s / float64(len(est)))
}

// iidRMSE is the expected RMSE of the means of n exact i.i.d. samples.
func iidRMSE(m model.Model, ex *exact.Result, n int) float64 {
	var v float64
	for i := range ex.Means {
		for s, p := range ex.Marginals[i] {
			dv := m.States(i)[s] - ex.Means[i]
			v += p * dv * dv
		}
	}
	return math.Sqrt(v / float64(n) / float64(len(ex.Means)))
}

func printMeanColumns(w io.Writer, exactMeans []float64, outs []*infer.Output, show int) {
	d := len(exactMeans)
	if show <= 0 || show > d {
		show = d
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "E[z_i]\texact\tmethod\tGibbs\texact MC\t")
	for i := range show {
		fmt.Fprintf(tw, "z%d\t%.4f\t%.4f\t%.4f\t%.4f\t\n", i, exactMeans[i], outs[0].Means[i], outs[1].Means[i], outs[2].Means[i])
	}
	tw.Flush()
	if show < d {
		fmt.Fprintf(w, "(showing %d of %d variables; --show N for more)\n", show, d)
	}
}
