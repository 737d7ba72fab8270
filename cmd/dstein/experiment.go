package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dstein/dstein/experiment"
)

// maxTrials bounds --trials (a journal numbers trials below 2³⁰; a
// million trials of the fastest experiment would take weeks).
const maxTrials = 1_000_000

func newExperimentCmd(e *env) *cobra.Command {
	var out string
	var trials int
	var seed uint64
	var quick, tiny, restart bool
	var variants, uaiDir, methods string
	var opts *optionFlags
	var shard string
	var sl slurmOptions
	var mem memoryFlag
	cmd := &cobra.Command{
		Use:   "experiment NAME --out-dir DIR",
		Short: "Reproduce an experiment of the paper: a table, DIR/NAME.csv, .png and .svg",
		Long: `Reproduce an experiment of the paper. Prints a table and writes DIR/NAME.csv
(tidy: one row per method, setting and metric with the mean over trials, its
standard error and the number of trials), DIR/NAME.png and DIR/NAME.svg.
Every finished trial is kept in DIR/NAME.trials.csv (settings in
DIR/NAME.trials.json): run the same command again to resume an interrupted
run; --restart sets the journal aside (NAME.trials.csv.old, .old.2, …) and
starts over. The table and figures are written when the last trial is done,
and replace files in DIR only when dstein wrote them and nobody changed them
since (DIR/.dstein-files.json records them).

On a cluster: --shard K/N runs one shard of the trials into its own
--out-dir and "dstein merge NAME --out-dir DIR SHARD_DIRS..." joins them;
--slurm writes (and with --submit submits) a Slurm job array of N shards and
a merge job that runs when they all succeed.

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
				return usagef("--out-dir DIR is required")
			}
			if cmd.Flags().Changed("trials") && (trials < 1 || trials > maxTrials) {
				return usagef("--trials must be between 1 and %d, got %d", maxTrials, trials)
			}
			budget, err := mem.budget()
			if err != nil {
				return err
			}
			if opts.err != nil {
				return opts.err
			}
			settings, err := opts.settings(ex)
			if err != nil {
				return usageError{err}
			}
			cfg := experiment.Config{Out: out, Trials: trials, Seed: seed, Log: e.stderr, Settings: settings, Restart: restart, Budget: budget}
			if quick && tiny {
				return usagef("--quick and --tiny exclude each other")
			}
			if quick {
				cfg.Mode = experiment.Quick
			}
			if tiny {
				cfg.Mode = experiment.Tiny
			}
			if cmd.Flags().Changed("variants") {
				if !ex.UsesVariants {
					return usagef("--variants applies to %s, not to %s", strings.Join(experiment.NamesWhere(func(e *experiment.Experiment) bool { return e.UsesVariants }), ", "), ex.Name)
				}
				cfg.Variants = strings.Split(variants, ",")
			}
			if cmd.Flags().Changed("methods") {
				cfg.Methods = strings.Split(methods, ",")
				if err := ex.CheckMethods(cfg.Methods); err != nil {
					return usageError{err}
				}
			}
			if cmd.Flags().Changed("uai") {
				if !ex.UsesUAI {
					return usagef("--uai applies to the suite experiment, not to %s", ex.Name)
				}
				if uaiDir == "" {
					return usagef("--uai needs a directory of .uai files")
				}
				cfg.UAIDir = uaiDir
			}
			if cmd.Flags().Changed("shard") {
				if cfg.Shard, err = experiment.ParseShard(shard); err != nil {
					return usagef("--shard: %v", err)
				}
				if ex.Unsharded {
					return usagef("--shard: experiment %s is one trial and is not sharded", ex.Name)
				}
			}
			if sl.on {
				if cmd.Flags().Changed("shard") {
					return usagef("--slurm makes the shards itself: leave out --shard")
				}
				if ex.Unsharded {
					return usagef("--slurm: experiment %s is one trial and is not sharded", ex.Name)
				}
				if n := ex.TrialsFor(cfg.Mode, cfg.Trials); sl.shards > n {
					// A task of no trials writes no journal, and the merge
					// after the array would fail on it: the default's 10
					// shards become n, more given are refused.
					if cmd.Flags().Changed("shards") {
						return usagef("--shards %d: %s runs %d trials here, so at most %d shards hold any", sl.shards, ex.Name, n, n)
					}
					sl.shards = n
				}
				return writeSlurm(e, cmd, ex.Name, out, sl)
			}
			if sl.changed(cmd) {
				return usagef("--shards, --partition, --time, --cpus, --submit and --dstein go with --slurm")
			}
			if err := e.makeOutDir(out); err != nil {
				return err
			}
			cfg.Version = version()
			pr := newExpProgress(e, ex.Name)
			if pr != nil {
				cfg.Progress, cfg.Log = pr, pr
			}
			res, err := ex.Run(e.ctx, cfg)
			pr.Finish()
			if err != nil {
				if e.ctx.Err() != nil {
					return interruptedRun(out, ex.Name)
				}
				return err
			}
			fmt.Fprintf(e.stdout, "%s: %s\n\n", ex.Name, ex.Title)
			experiment.PrintTable(e.stdout, res)
			if p, ok := experiment.Match(ex.Name, cfg); ok {
				label := "verdict"
				if scale := cfg.Mode.VerdictScale(); scale != "" {
					label += " " + scale
				}
				fmt.Fprintf(e.stdout, "\nclaim (%s): %s\n%s: %s\n", p.ID, p.Claim, label, p.Judge(res.Rows, cfg.Mode).Sentence())
			}
			fmt.Fprintf(e.stdout, "\nwrote %s\n", strings.Join(res.Files, ", "))
			if cfg.Mode == experiment.Quick {
				for _, p := range experiment.Reproductions() {
					if p.Name == ex.Name && p.FullTime != "" {
						fmt.Fprintf(e.stdout, "the published full run, %s, took %s on the project's 2-core machine (dstein reproduce runs every one)\n", p.Command("DIR", experiment.Full), p.FullTime)
					}
				}
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&out, "out-dir", "", "output directory (created if missing)")
	fs.BoolVar(&restart, "restart", false, "set an existing trial journal (for example a corrupt one) aside as NAME.trials.csv.old (.old.2, …) and start over")
	fs.IntVar(&trials, "trials", 0, "number of trials (default: the experiment's)")
	fs.Uint64Var(&seed, "seed", 1, "seed of the models and of every trial")
	fs.BoolVar(&quick, "quick", false, "a reduced run that finishes in under a minute")
	fs.BoolVar(&tiny, "tiny", false, "a run of a few seconds, for testing the pipeline")
	fs.StringVar(&variants, "variants", strings.Join(experiment.DefaultVariants, ","), "variants-ising, variants-rbm: the GF-SVGD variants to compare, comma-separated, of "+strings.Join(experiment.VariantNames(), ", "))
	fs.StringVar(&methods, "methods", "", "run only these of the experiment's methods, comma-separated ("+strings.Join(experiment.NamesWhere(func(e *experiment.Experiment) bool { return e.MethodNames != nil }), ", ")+"; the suite always runs exact and gibbs: the ratios need them); default all")
	fs.StringVar(&uaiDir, "uai", "", "suite: also score every NAME.uai network of this directory (with NAME.uai.evid as evidence when present)")
	fs.StringVar(&shard, "shard", "", "run only shard K/N of the trials (trial t is shard t mod N + 1's, counting from 0), with its own --out-dir; dstein merge joins the shards")
	sl.register(fs)
	mem.register(fs)
	opts = registerOptionFlags(fs)
	cmd.SetHelpFunc(experimentHelp(cmd.HelpFunc()))
	return cmd
}

// interruptedRun is the error of an experiment stopped by a signal: it
// says where the finished trials are, if any finished.
func interruptedRun(out, name string) error {
	journal := filepath.Join(out, name+".trials.csv")
	if _, err := os.Lstat(journal); err != nil {
		return interrupted{"interrupted before the first trial finished; nothing written"}
	}
	return interrupted{"interrupted; the finished trials are kept in " + journal + " (no table or figure written): run the same command to resume"}
}
