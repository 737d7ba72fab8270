package main

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// demoModels are the built-in examples: small enough for exact answers by
// enumeration.
func demoModels(seed uint64) ([]string, []model.Model, error) {
	r := rng.New(seed, rng.StreamModel)
	fields := make([]float64, 16)
	for i := range fields {
		fields[i] = -0.3 + 0.6*r.Float64()
	}
	g, err := ising.Grid(4, 4, false, 0.3, fields)
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
	var f sampleFlags
	var modelSeed uint64
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Sample two built-in models with GF-SVGD and compare with the exact answer",
		Long: `Sample a 4×4 Ising grid and a small RBM with GF-SVGD and compare the
estimated means with exact enumeration. The RMSE of n i.i.d. exact samples
is shown for scale.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.n < 1 {
				return usagef("--n must be at least 1, got %d", f.n)
			}
			if f.iters < 0 {
				return usagef("--iters must be ≥ 0, got %d", f.iters)
			}
			if !contains(infer.Surrogates, f.gf.surrogate) {
				return usagef("unknown surrogate %q; want base or relaxed", f.gf.surrogate)
			}
			set, err := f.gf.settings(cmd.Flags())
			if err != nil {
				return err
			}
			names, models, err := demoModels(modelSeed)
			if err != nil {
				return err
			}
			w := e.stdout
			for k, m := range models {
				ex, err := exact.Enumerate(m, 0)
				if err != nil {
					return err
				}
				b := newBar(e, f.iters, "gfsvgd")
				opts := infer.Options{Method: "gfsvgd", N: f.n, Iters: f.iters, Seed: f.seed, GFSVGD: set,
					Surrogate: f.gf.surrogate, Temperature: f.gf.temperature}
				if b != nil {
					opts.Progress = b
				}
				out, err := infer.Sample(e.ctx, m, opts)
				b.finish()
				if err != nil {
					return err
				}
				if out.Status == sampler.Canceled {
					return interrupted{"interrupted"}
				}
				var mse, iid float64
				for i := range out.Means {
					mse += (out.Means[i] - ex.Means[i]) * (out.Means[i] - ex.Means[i])
					var v float64
					for s, p := range ex.Marginals[i] {
						dv := m.States(i)[s] - ex.Means[i]
						v += p * dv * dv
					}
					iid += v / float64(f.n)
				}
				d := float64(m.Dim())
				if k > 0 {
					fmt.Fprintln(w)
				}
				fmt.Fprintf(w, "%s\n", names[k])
				fmt.Fprintf(w, "GF-SVGD (preset %s, surrogate %s): n = %d, %d iterations, %.2f s, weight ESS %.1f\n",
					f.gf.preset, f.gf.surrogate, f.n, out.Iters, out.Seconds, out.WeightESS)
				printMeans(w, m, out.Means, out.Marginals, ex.Means, f.show)
				fmt.Fprintf(w, "RMSE of the means: GF-SVGD %.4f; expected for %d i.i.d. exact samples %.4f\n", math.Sqrt(mse/d), f.n, math.Sqrt(iid/d))
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.n, "n", 200, "number of particles")
	fs.IntVar(&f.iters, "iters", 500, "number of iterations")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the sampler")
	fs.Uint64Var(&modelSeed, "model-seed", 1, "seed of the built-in models' random parameters")
	fs.IntVar(&f.show, "show", 16, "number of variables to print")
	f.gf.register(fs)
	return cmd
}
