package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dstein/dstein/experiment"
)

func newExperimentCmd(e *env) *cobra.Command {
	var out string
	var trials int
	var seed uint64
	var quick, tiny bool
	var field, sigma, nmax, epochs, trainN float64
	var fashion bool
	cmd := &cobra.Command{
		Use:   "experiment NAME --out DIR",
		Short: "Reproduce an experiment of the paper: a table, DIR/NAME.csv, .png and .svg",
		Long: `Reproduce an experiment of the paper. Prints a table and writes DIR/NAME.csv
(tidy: one row per method, setting and metric with the mean over trials, its
standard error and the number of trials), DIR/NAME.png and DIR/NAME.svg.
Every finished trial is kept in DIR/NAME.trials.csv: run the same command
again to resume an interrupted run.

Experiments: ` + strings.Join(experiment.Names(), ", ") + `.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("experiment needs one NAME: one of %s", strings.Join(experiment.Names(), ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ex, err := experiment.Get(args[0])
			if err != nil {
				return usageError{err}
			}
			if out == "" {
				return usagef("--out DIR is required")
			}
			if trials < 0 {
				return usagef("--trials must be ≥ 1, got %d", trials)
			}
			cfg := experiment.Config{Out: out, Trials: trials, Seed: seed, Log: e.stderr, Options: map[string]float64{}}
			if quick && tiny {
				return usagef("--quick and --tiny exclude each other")
			}
			if quick {
				cfg.Mode = experiment.Quick
			}
			if tiny {
				cfg.Mode = experiment.Tiny
			}
			if cmd.Flags().Changed("field") {
				cfg.Options["field"] = field
			}
			if cmd.Flags().Changed("nmax") {
				cfg.Options["nmax"] = nmax
			}
			if cmd.Flags().Changed("epochs") {
				cfg.Options["epochs"] = epochs
			}
			if cmd.Flags().Changed("train-limit") {
				cfg.Options["train"] = trainN
			}
			if fashion {
				cfg.Options["fashion"] = 1
			}
			if cmd.Flags().Changed("sigma") {
				cfg.Options["sigma"] = sigma
			}
			res, err := ex.Run(e.ctx, cfg)
			if err != nil {
				if errors.Is(err, e.ctx.Err()) && e.ctx.Err() != nil {
					return interrupted{"interrupted; finished trials are kept in " + out + "/" + ex.Name + ".trials.csv: run the same command to resume"}
				}
				return err
			}
			fmt.Fprintf(e.stdout, "%s: %s\n\n", ex.Name, ex.Title)
			experiment.PrintTable(e.stdout, res)
			fmt.Fprintf(e.stdout, "\nwrote %s\n", strings.Join(res.Files, ", "))
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&out, "out", "", "output directory (created if missing)")
	fs.IntVar(&trials, "trials", 0, "number of trials (default: the experiment's)")
	fs.Uint64Var(&seed, "seed", 1, "seed of the models and of every trial")
	fs.BoolVar(&quick, "quick", false, "a reduced run that finishes in under a minute")
	fs.BoolVar(&tiny, "tiny", false, "a run of a few seconds, for testing the pipeline")
	fs.Float64Var(&field, "field", 0, "Ising experiments: fields drawn once from U(−A, A) with the seed")
	fs.Float64Var(&nmax, "nmax", 0, "ising-n, rbm-n: only sample sizes n ≤ NMAX (0: all)")
	fs.Float64Var(&epochs, "epochs", 0, "bnn: epochs per network (default: the mode's)")
	fs.Float64Var(&trainN, "train-limit", 0, "bnn: train on the first N training examples only (0: all)")
	fs.BoolVar(&fashion, "fashion", false, "bnn: Fashion-MNIST instead of MNIST")
	fs.Float64Var(&sigma, "sigma", 0.05, "gof-rbm-n: standard deviation σ' of the noise added to the RBM's weights")
	return cmd
}
