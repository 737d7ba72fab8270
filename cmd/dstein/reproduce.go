package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dstein/dstein/experiment"
	"github.com/dstein/dstein/internal/memlimit"
	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/internal/shellquote"
	"github.com/dstein/dstein/internal/suggest"
	"github.com/dstein/dstein/report"
)

// reproduced is what the page and reproduce.json say about one result.
type reproduced struct {
	ID      string   `json:"id"`
	Command string   `json:"command"`
	Status  string   `json:"status"` // "ran", "failed", "not run"
	Seconds float64  `json:"seconds"`
	Error   string   `json:"error"`
	Files   []string `json:"files"`
	// Loaded counts the trials found complete in the journal (not
	// computed again).
	Loaded int `json:"loaded_trials"`
	// Claim is what the result tests, Verdict what its rows say about
	// it (computed by the result's judge; absent when it did not run).
	Claim   string              `json:"claim"`
	Verdict *experiment.Verdict `json:"verdict,omitempty"`
}

func newReproduceCmd(e *env) *cobra.Command {
	var out, only, uaiDir string
	var quick, tiny, svg bool
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

--quick runs every experiment's quick mode (under 20 minutes in all on 2
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
			lock, err := safeio.TryLock(filepath.Join(out, "reproduce.lock"))
			var busy *safeio.Busy
			if errors.As(err, &busy) {
				return fmt.Errorf("another dstein reproduce is writing into %s (it holds %s); wait for it to finish, or use another --out-dir", out, busy.Path)
			}
			if err != nil {
				return err
			}
			defer lock.Unlock()
			// Check every output before any work: the page, the list, and
			// each result's files and journal; never replace a file that
			// dstein did not write.
			index, list := filepath.Join(out, "index.html"), filepath.Join(out, "reproduce.json")
			for _, f := range []string{index, list} {
				if err := safeio.Owned(f); err != nil {
					return err
				}
			}
			var runs []experiment.Reproduction
			for _, p := range all {
				if len(want) > 0 && !slices.Contains(want, p.ID) || p.Needs == "uai" && uaiDir == "" {
					continue
				}
				ex, cfg, err := reproductionConfig(p, filepath.Join(out, p.ID), mode, uaiDir, budget, svg)
				if err != nil {
					return err
				}
				if err := ex.Check(cfg); err != nil {
					return fmt.Errorf("%s: %w", p.ID, err)
				}
				runs = append(runs, p)
			}
			start := time.Now()
			var done []reproduced
			page := report.Page{
				Title:   "dstein: every experiment of EXPERIMENTS.md",
				Version: version(),
				Machine: report.ThisMachine(),
				Command: "dstein " + shellquote.Join(e.args),
			}
			if quick {
				page.Title += " (quick runs)"
			}
			failed := 0
			for k, p := range all {
				if len(want) > 0 && !slices.Contains(want, p.ID) {
					continue
				}
				dir := filepath.Join(out, p.ID)
				rec := reproduced{ID: p.ID, Command: p.Command(dir, mode), Claim: p.Claim}
				if !slices.ContainsFunc(runs, func(r experiment.Reproduction) bool { return r.ID == p.ID }) {
					rec.Status = "not run"
					rec.Error = "needs --uai DIR (a directory of UAI networks)"
				} else {
					fmt.Fprintf(e.stderr, "reproduce: %s (%d of %d): %s\n", p.ID, k+1, len(all), rec.Command)
					t0 := time.Now()
					run, err := runReproduction(e, p, dir, mode, uaiDir, budget, svg)
					rec.Seconds = time.Since(t0).Seconds()
					if e.ctx.Err() != nil {
						// Stop here: the results finished before the
						// signal keep their files; the page and the list
						// stay as they were.
						return interrupted{"interrupted; the results finished before the signal are written, the finished trials of " + p.ID + " are kept in its journal, and " + index + " was not rewritten: run the same command to resume"}
					}
					if run != nil {
						rec.Files, rec.Loaded = run.files, run.loaded
					}
					if err != nil {
						rec.Status, rec.Error = "failed", oneLine(err.Error())
						failed++
						fmt.Fprintf(e.stderr, "reproduce: %s failed: %s\n", p.ID, rec.Error)
					} else {
						rec.Status = "ran"
						fmt.Fprintf(e.stdout, "%s: done in %s → %s\n", p.ID, roundLeft(time.Since(t0)), dir)
						if v, err := judgeReproduction(p, run.files, mode); err != nil {
							fmt.Fprintf(e.stderr, "reproduce: %s: no verdict: %s\n", p.ID, oneLine(err.Error()))
						} else {
							rec.Verdict = &v
							fmt.Fprintf(e.stdout, "%s: %s\n", p.ID, v.Sentence())
						}
					}
				}
				done = append(done, rec)
				page.Sections = append(page.Sections, reproductionSection(out, p, rec, mode))
			}
			page.Date = time.Now().UTC().Format("2006-01-02 15:04 MST")
			// The list and the page together, or neither (a signal).
			var b safeio.Batch
			defer b.Abort()
			if err := b.Replace(list, func(w *bufio.Writer) error {
				return report.WriteJSON(w, struct {
					Date    string       `json:"date"`
					Version string       `json:"dstein_version"`
					Command string       `json:"command"`
					Quick   bool         `json:"quick"`
					Seconds float64      `json:"seconds"`
					Results []reproduced `json:"results"`
				}{page.Date, page.Version, page.Command, quick, time.Since(start).Seconds(), done})
			}); err != nil {
				return err
			}
			if err := report.AddPage(&b, index, page); err != nil {
				return err
			}
			if err := b.Commit(e.ctx); err != nil {
				if e.ctx.Err() != nil {
					return interrupted{"interrupted; the results are written, " + index + " and " + list + " are as they were: run the same command to write them"}
				}
				return err
			}
			if err := report.CheckPage(index); err != nil {
				return fmt.Errorf("the page %s: %w", index, err)
			}
			fmt.Fprintf(e.stdout, "wrote %s (%s in all)\n", index, roundLeft(time.Since(start)))
			if failed > 0 {
				return fmt.Errorf("%d of the results failed (see %s)", failed, list)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&out, "out-dir", "", "output directory: one folder per result and index.html (created if missing)")
	fs.BoolVar(&svg, "svg", false, "also write each figure as SVG (vector, about 200 KB each; the PNGs are always written)")
	fs.BoolVar(&quick, "quick", false, "every experiment's quick mode (under 20 minutes in all on 2 cores)")
	fs.BoolVar(&tiny, "tiny", false, "every experiment's tiny mode, for testing the pipeline")
	fs.MarkHidden("tiny")
	fs.StringVar(&only, "only", "", "run only these results, comma-separated")
	fs.StringVar(&uaiDir, "uai", "", "a directory of UAI networks (NAME.uai, NAME.uai.evid) for the suite-uai result")
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

// reproducedRun is what runReproduction made: the files written and the
// trials found complete in the journal.
type reproducedRun struct {
	files  []string
	loaded int
}

// reproductionConfig returns the experiment of a result and the
// configuration of its run into dir.
func reproductionConfig(p experiment.Reproduction, dir string, mode experiment.Mode, uaiDir string, budget memlimit.Budget, svg bool) (*experiment.Experiment, experiment.Config, error) {
	ex, err := experiment.Get(p.Name)
	if err != nil {
		return nil, experiment.Config{}, err
	}
	cfg := p.Config(dir, mode)
	if p.Needs == "uai" {
		cfg.UAIDir = uaiDir
	}
	cfg.Budget, cfg.Text, cfg.Version, cfg.Pack, cfg.NoSVG = budget, true, version(), true, !svg
	return ex, cfg, nil
}

// runReproduction runs one result into dir and writes dir/NAME.txt (the
// printed table and notes).
func runReproduction(e *env, p experiment.Reproduction, dir string, mode experiment.Mode, uaiDir string, budget memlimit.Budget, svg bool) (*reproducedRun, error) {
	ex, cfg, err := reproductionConfig(p, dir, mode, uaiDir, budget, svg)
	if err != nil {
		return nil, err
	}
	if err := e.makeOutDir(dir); err != nil {
		return nil, err
	}
	cfg.Log = e.stderr
	pr := newExpProgress(e, p.ID)
	if pr != nil {
		cfg.Progress, cfg.Log = pr, pr
	}
	res, err := ex.Run(e.ctx, cfg)
	pr.finish()
	if err != nil {
		return nil, err
	}
	return &reproducedRun{files: res.Files, loaded: res.Loaded}, nil
}

// judgeReproduction computes a result's verdict from its summary CSV
// (NAME.csv among the files its run wrote).
func judgeReproduction(p experiment.Reproduction, files []string, mode experiment.Mode) (experiment.Verdict, error) {
	for _, f := range files {
		if filepath.Base(f) == p.Name+".csv" {
			rows, err := experiment.ReadRows(f)
			if err != nil {
				return experiment.Verdict{}, err
			}
			return p.Judge(rows, mode), nil
		}
	}
	return experiment.Verdict{}, fmt.Errorf("the run wrote no %s.csv", p.Name)
}

// reproductionSection is the page's section of one result: its figures,
// its printed table and notes, and links to its files, all relative to
// the page's directory.
func reproductionSection(out string, p experiment.Reproduction, rec reproduced, mode experiment.Mode) report.Section {
	ex, _ := experiment.Get(p.Name)
	s := report.Section{ID: p.ID, Title: p.ID + ": " + ex.Title, Commands: []string{rec.Command}, Summary: "Tests: " + p.Claim + "."}
	if v := rec.Verdict; v != nil {
		s.Verdict = "Verdict, computed from this run's table. " + v.Sentence()
	}
	switch rec.Status {
	case "ran":
		s.Status = fmt.Sprintf("ran in %s on this machine", roundLeft(time.Duration(rec.Seconds*float64(time.Second))))
		if rec.Loaded > 0 {
			s.Status += fmt.Sprintf(" (%d trials loaded from the journal, not computed again)", rec.Loaded)
		}
		switch {
		case p.FullTime == "":
		case mode != experiment.Full:
			s.Status += fmt.Sprintf("; the full run (%s) took %s on the project's 2-core machine", p.Command("DIR", experiment.Full), p.FullTime)
		default:
			s.Status += fmt.Sprintf("; the published run took %s on the project's 2-core machine", p.FullTime)
		}
	case "failed":
		s.Status = "failed: " + rec.Error
	default:
		s.Status = "not run: " + rec.Error
	}
	rel := func(path string) string {
		r, err := filepath.Rel(out, path)
		if err != nil {
			return path
		}
		return filepath.ToSlash(r)
	}
	for _, f := range rec.Files {
		if _, err := os.Stat(f); err != nil {
			continue
		}
		switch filepath.Ext(f) {
		case ".png":
			s.Figures = append(s.Figures, rel(f))
		case ".txt":
			if t, err := report.TextFromFile(f); err == nil {
				s.Texts = append(s.Texts, t)
			}
			s.Files = append(s.Files, rel(f))
		default:
			s.Files = append(s.Files, rel(f))
		}
	}
	for _, j := range []string{ex.Name + ".trials.csv", ex.Name + ".trials.csv.gz", ex.Name + ".trials.json"} {
		if _, err := os.Stat(filepath.Join(out, p.ID, j)); err == nil {
			s.Files = append(s.Files, p.ID+"/"+j)
		}
	}
	return s
}
