package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dstein/dstein/experiment"
	"github.com/dstein/dstein/internal/shellquote"
	"github.com/dstein/dstein/internal/suggest"
)

func newReproduceCmd(e *env) *cobra.Command {
	var out, only, uaiDir string
	var quick, tiny, svg, restart bool
	var mem memoryFlag
	cmd := &cobra.Command{
		Use:   "reproduce --out-dir DIR [--quick]",
		Short: "Run every experiment of EXPERIMENTS.md and write DIR/index.html with every figure, table and verdict",
		Long: `Run every published experiment with the settings that made the numbers in
EXPERIMENTS.md (docs/results/ID), each into DIR/ID, resuming from the trial
journals found there, and write DIR/index.html: one page with every figure,
table and note, the commands, the machine, the dstein version and the date.
The page needs no network. DIR/reproduce.json lists each result's command,
status and wall time. Files in DIR are replaced only when dstein wrote them
and nobody changed them since (each folder's .dstein-files.json records
them); every result is checked before the first one runs.

--quick runs every experiment's quick mode (about 4 minutes in all on 2
cores). The suite on UAI networks runs only with --uai DIR. Running
"dstein reproduce --out-dir docs/results" on a checkout resumes the
committed journals: it computes nothing and rebuilds the tables, figures
and page. Each finished result's journal is left packed, NAME.trials.csv.gz
(gzip; zcat reads it), and figures are PNG only unless --svg.

Results: ` + strings.Join(reproductionIDs(), ", ") + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("--out-dir DIR is required")
			}
			if quick && tiny {
				return usagef("--quick and --tiny exclude each other")
			}
			all := experiment.Reproductions()
			var want []string
			if cmd.Flags().Changed("only") {
				ids := reproductionIDs()
				for _, id := range strings.Split(only, ",") {
					id = strings.TrimSpace(id)
					if id == "" {
						continue
					}
					if !slices.Contains(ids, id) {
						return usagef("--only: unknown result %q%s (the results: %s)", id, suggest.Hint(id, ids), strings.Join(ids, ", "))
					}
					if !slices.Contains(want, id) {
						want = append(want, id)
					}
				}
				if len(want) == 0 {
					return usagef("--only %q names no result; give a comma-separated list of %s", only, strings.Join(ids, ", "))
				}
				for _, p := range all {
					if slices.Contains(want, p.ID) && p.Needs == "uai" && uaiDir == "" {
						return usagef("--only %s: that result needs --uai DIR (a directory of UAI networks)", p.ID)
					}
				}
			}
			if uaiDir != "" {
				if info, err := os.Stat(uaiDir); err != nil || !info.IsDir() {
					return usagef("--uai %s is not a directory", uaiDir)
				}
			}
			mode := experiment.Full
			if quick {
				mode = experiment.Quick
			}
			if tiny {
				mode = experiment.Tiny
			}
			budget, err := mem.budget()
			if err != nil {
				return err
			}
			if err := e.makeOutDir(out); err != nil {
				return err
			}
			title := "dstein: every experiment of EXPERIMENTS.md"
			if len(want) > 0 {
				title = "dstein: experiments of EXPERIMENTS.md (those of --only, and earlier results found in the folder)"
			}
			if quick {
				title += " (quick runs)"
			}
			if tiny {
				title += " (tiny runs: a check that the pipeline runs, not results)"
			}
			rep, err := experiment.Reproduce(e.ctx, experiment.ReproduceOptions{
				Out: out, Mode: mode, Only: want, UAIDir: uaiDir, Budget: budget, SVG: svg, Restart: restart,
				Version: version(), Command: "dstein " + shellquote.Join(e.args), Title: title,
				MakeDir: e.makeOutDir,
				Progress: func(id string) experiment.ResultProgress {
					if pr := newExpProgress(e, id); pr != nil {
						return pr
					}
					return nil
				},
				Log: e.stderr, Report: e.stdout, Flatten: oneLine,
			})
			var intr *experiment.Interrupted
			if errors.As(err, &intr) {
				return interrupted{intr.Message}
			}
			if err != nil {
				return err
			}
			if rep.Failed > 0 {
				return fmt.Errorf("%d of the results failed (see %s)", rep.Failed, rep.List)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&out, "out-dir", "", "output directory: one folder per result and index.html (created if missing)")
	fs.BoolVar(&svg, "svg", false, "also write each figure as SVG (vector, about 200 KB each; the PNGs are always written)")
	fs.BoolVar(&quick, "quick", false, "every experiment's quick mode (about 4 minutes in all on 2 cores)")
	fs.BoolVar(&tiny, "tiny", false, "every experiment's tiny mode: seconds, for testing the pipeline (not results)")
	fs.StringVar(&only, "only", "", "run only these results, comma-separated")
	fs.StringVar(&uaiDir, "uai", "", "a directory of UAI networks (NAME.uai, NAME.uai.evid) for the suite-uai result")
	fs.BoolVar(&restart, "restart", false, "set aside the trial journal of every result it runs (NAME.trials.csv.old, .old.2, …) and start those over, instead of resuming")
	mem.register(fs)
	return cmd
}

func reproductionIDs() []string {
	var ids []string
	for _, p := range experiment.Reproductions() {
		ids = append(ids, p.ID)
	}
	return ids
}
