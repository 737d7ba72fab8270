package experiment

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/report"
)

// ReproduceOptions say which published results Reproduce runs, where, and
// how it reports.
type ReproduceOptions struct {
	// Out is the directory of the page: each result goes to Out/ID.
	Out  string
	Mode Mode
	// Only are the IDs of the results to run (nil: all).
	Only []string
	// UAIDir is the directory of UAI networks for the results that need
	// one (without it they are listed as not run).
	UAIDir string
	Budget memlimit.Budget
	// SVG also writes each figure as SVG.
	SVG bool
	// Restart sets aside the journal of every result it runs (Config's
	// Restart) instead of resuming from it.
	Restart bool
	// Version is the dstein build, Command the command line, for the
	// journals, the list and the page.
	Version, Command string
	// Title is the page's title.
	Title string
	// MakeDir creates a result's directory (nil: os.MkdirAll); the CLI's
	// records what it made.
	MakeDir func(dir string) error
	// Progress returns the display of one result's run (a terminal bar),
	// or nil for plain lines in Log.
	Progress func(id string) ResultProgress
	// Log receives the lines about the run (each result as it starts, its
	// failures, its preparations); Report the lines of its outcome (done,
	// the verdict, the page written). Either may be nil.
	Log, Report io.Writer
	// Flatten makes an error's message one line for the list and the
	// page (nil: as it is).
	Flatten func(string) string
}

// ResultProgress displays one result's run: its trials (Progress), the
// lines of its preparations (io.Writer), and Finish when it ends.
type ResultProgress interface {
	Progress
	io.Writer
	Finish()
}

// Reproduced is what the page and reproduce.json say about one result.
type Reproduced struct {
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
	Claim   string   `json:"claim"`
	Verdict *Verdict `json:"verdict,omitempty"`
	// Earlier is the date of the earlier run whose record this is, for a
	// result that --only left out (ReproduceOptions.Only): the page and
	// the list keep it as that run wrote it.
	Earlier string `json:"earlier_run,omitempty"`
}

// ReproduceReport is what Reproduce wrote.
type ReproduceReport struct {
	// Index is the page, List reproduce.json.
	Index, List string
	Results     []Reproduced
	// Failed counts the results that failed.
	Failed int
}

// Interrupted is Reproduce's error when ctx was canceled: Message says
// what was kept.
type Interrupted struct{ Message string }

func (i *Interrupted) Error() string { return i.Message }

// Reproduce runs the published results (Reproductions) into o.Out, each
// resuming from the journal in its folder, and writes the page
// (index.html) and the list (reproduce.json) with every result's status,
// files and verdict. Before any work it checks every output (the page,
// the list, each result's files and journal: a file dstein did not write
// is never replaced) and takes the directory's lock. A result that fails
// does not stop the others (ReproduceReport.Failed counts them); a
// canceled ctx stops at once with *Interrupted, the results finished
// before it kept, the page and the list left as they were.
func Reproduce(ctx context.Context, o ReproduceOptions) (*ReproduceReport, error) {
	mkdir := o.MakeDir
	if mkdir == nil {
		mkdir = func(d string) error { return os.MkdirAll(d, 0o755) }
	}
	flatten := o.Flatten
	if flatten == nil {
		flatten = func(s string) string { return s }
	}
	lock, err := safeio.TryLock(filepath.Join(o.Out, "reproduce.lock"))
	var busy *safeio.Busy
	if errors.As(err, &busy) {
		return nil, fmt.Errorf("another dstein reproduce is writing into %s (it holds %s); wait for it to finish, or use another --out-dir", o.Out, busy.Path)
	}
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	rep := &ReproduceReport{Index: filepath.Join(o.Out, "index.html"), List: filepath.Join(o.Out, "reproduce.json")}
	for _, f := range []string{rep.Index, rep.List} {
		if err := safeio.Owned(f); err != nil {
			return nil, err
		}
	}
	all := Reproductions()
	wanted := func(p Reproduction) bool { return len(o.Only) == 0 || slices.Contains(o.Only, p.ID) }
	earlier := map[string]Reproduced{}
	if len(o.Only) > 0 {
		earlier = earlierResults(rep.List, o.Mode, o.Log)
	}
	runs := map[string]bool{}
	for _, p := range all {
		if !wanted(p) || p.Needs == "uai" && o.UAIDir == "" {
			continue
		}
		ex, cfg, err := o.config(p)
		if err != nil {
			return nil, err
		}
		if err := ex.Check(cfg); err != nil {
			return nil, fmt.Errorf("%s: %w", p.ID, err)
		}
		runs[p.ID] = true
	}
	start := time.Now()
	page := report.Page{Title: o.Title, Version: o.Version, Machine: report.ThisMachine(), Command: o.Command}
	kept, selected, done := 0, 0, 0
	for _, p := range all {
		if wanted(p) && runs[p.ID] {
			selected++
		}
	}
	for _, p := range all {
		if !wanted(p) {
			if rec, ok := earlier[p.ID]; ok {
				rep.Results = append(rep.Results, rec)
				page.Sections = append(page.Sections, section(o.Out, p, rec, o.Mode))
				kept++
			}
			continue
		}
		dir := filepath.Join(o.Out, p.ID)
		rec := Reproduced{ID: p.ID, Command: p.Command(dir, o.Mode), Claim: p.Claim}
		if !runs[p.ID] {
			rec.Status, rec.Error = "not run", "needs --uai DIR (a directory of UAI networks)"
		} else {
			done++
			fmt.Fprintf(w(o.Log), "reproduce: %s (%d of %d): %s\n", p.ID, done, selected, rec.Command)
			t0 := time.Now()
			res, err := o.run(ctx, p, dir, mkdir)
			rec.Seconds = time.Since(t0).Seconds()
			if ctx.Err() != nil {
				return rep, &Interrupted{"interrupted; the results finished before the signal are written, the finished trials of " + p.ID + " are kept in its journal, and " + rep.Index + " was not rewritten: run the same command to resume"}
			}
			if res != nil {
				rec.Files, rec.Loaded = res.Files, res.Loaded
			}
			if err != nil {
				rec.Status, rec.Error = "failed", flatten(err.Error())
				rep.Failed++
				fmt.Fprintf(w(o.Log), "reproduce: %s failed: %s\n", p.ID, rec.Error)
			} else {
				rec.Status = "ran"
				fmt.Fprintf(w(o.Report), "%s: done in %s → %s\n", p.ID, roundSeconds(time.Since(t0)), dir)
				if v, err := judgeFiles(p, res.Files, o.Mode); err != nil {
					fmt.Fprintf(w(o.Log), "reproduce: %s: no verdict: %s\n", p.ID, flatten(err.Error()))
				} else {
					rec.Verdict = &v
					scale := ""
					if v.Status != NotJudged && o.Mode != Full {
						scale = "verdict " + o.Mode.VerdictScale() + ": "
					}
					fmt.Fprintf(w(o.Report), "%s: %s%s\n", p.ID, scale, v.Sentence())
				}
			}
		}
		rep.Results = append(rep.Results, rec)
		page.Sections = append(page.Sections, section(o.Out, p, rec, o.Mode))
	}
	if kept > 0 {
		fmt.Fprintf(w(o.Report), "kept %s of the earlier run in %s (--only ran %d)\n", plural(kept, "result"), rep.List, len(o.Only))
	}
	page.Date = time.Now().UTC().Format("2006-01-02 15:04 MST")
	// The list and the page together, or neither (a signal).
	var b safeio.Batch
	defer b.Abort()
	if err := b.Replace(rep.List, func(bw *bufio.Writer) error {
		return report.WriteJSON(bw, struct {
			Date    string       `json:"date"`
			Version string       `json:"dstein_version"`
			Command string       `json:"command"`
			Quick   bool         `json:"quick"`
			Mode    string       `json:"mode"` // full, quick or tiny (a check of the pipeline, not results)
			Seconds float64      `json:"seconds"`
			Results []Reproduced `json:"results"`
		}{page.Date, page.Version, page.Command, o.Mode == Quick, o.Mode.String(), time.Since(start).Seconds(), rep.Results})
	}); err != nil {
		return rep, err
	}
	if err := report.AddPage(&b, rep.Index, page); err != nil {
		return rep, err
	}
	if err := b.Commit(ctx); err != nil {
		if ctx.Err() != nil {
			return rep, &Interrupted{"interrupted; the results are written, " + rep.Index + " and " + rep.List + " are as they were: run the same command to write them"}
		}
		return rep, err
	}
	if err := report.CheckPage(rep.Index); err != nil {
		return rep, fmt.Errorf("the page %s: %w", rep.Index, err)
	}
	fmt.Fprintf(w(o.Report), "wrote %s (%s in all)\n", rep.Index, roundSeconds(time.Since(start)))
	return rep, nil
}

// earlierResults reads the records of the list (reproduce.json) of an
// earlier run in the same mode, by result, each marked with the date of
// the run that wrote it, so that a run with --only keeps the results it
// leaves out on the page. A missing or unreadable list, or one of another
// mode (quick results beside full ones would mislead), keeps nothing;
// log says why for the last two.
func earlierResults(list string, mode Mode, log io.Writer) map[string]Reproduced {
	out := map[string]Reproduced{}
	raw, err := os.ReadFile(list)
	if err != nil {
		return out
	}
	var prev struct {
		Date    string       `json:"date"`
		Mode    string       `json:"mode"`
		Quick   bool         `json:"quick"`
		Results []Reproduced `json:"results"`
	}
	if err := json.Unmarshal(raw, &prev); err != nil {
		fmt.Fprintf(w(log), "reproduce: %s is not readable (%v); the page lists only the results run now\n", list, err)
		return out
	}
	if prev.Mode == "" {
		// Lists written before "mode" (and --tiny) say only "quick".
		prev.Mode = Full.String()
		if prev.Quick {
			prev.Mode = Quick.String()
		}
	}
	if prev.Mode != mode.String() {
		fmt.Fprintf(w(log), "reproduce: %s lists a %s run and this one is %s; the page lists only the results run now\n", list, prev.Mode, mode)
		return out
	}
	for _, r := range prev.Results {
		if r.Earlier == "" {
			r.Earlier = prev.Date
		}
		out[r.ID] = r
	}
	return out
}

// roundSeconds rounds a wall time for the page: whole minutes from ten
// minutes, whole seconds below.
func roundSeconds(d time.Duration) time.Duration {
	if d >= 10*time.Minute {
		return d.Round(time.Minute)
	}
	return d.Round(time.Second)
}

// w is a writer that discards when nil.
func w(x io.Writer) io.Writer {
	if x == nil {
		return io.Discard
	}
	return x
}

// config returns the experiment of a result and the configuration of its
// run into Out/ID.
func (o ReproduceOptions) config(p Reproduction) (*Experiment, Config, error) {
	ex, err := Get(p.Name)
	if err != nil {
		return nil, Config{}, err
	}
	cfg := p.Config(filepath.Join(o.Out, p.ID), o.Mode)
	if p.Needs == "uai" {
		cfg.UAIDir = o.UAIDir
	}
	cfg.Budget, cfg.Text, cfg.Version, cfg.Pack, cfg.NoSVG = o.Budget, true, o.Version, true, !o.SVG
	cfg.Restart = o.Restart
	return ex, cfg, nil
}

// run runs one result into dir (its printed table and notes too, as
// dir/NAME.txt).
func (o ReproduceOptions) run(ctx context.Context, p Reproduction, dir string, mkdir func(string) error) (*Result, error) {
	ex, cfg, err := o.config(p)
	if err != nil {
		return nil, err
	}
	if err := mkdir(dir); err != nil {
		return nil, err
	}
	cfg.Log = o.Log
	var pr ResultProgress
	if o.Progress != nil {
		pr = o.Progress(p.ID)
	}
	if pr != nil {
		cfg.Progress, cfg.Log = pr, pr
		defer pr.Finish()
	}
	return ex.Run(ctx, cfg)
}

// judgeFiles computes a result's verdict from its summary CSV (NAME.csv
// among the files its run wrote).
func judgeFiles(p Reproduction, files []string, mode Mode) (Verdict, error) {
	for _, f := range files {
		if filepath.Base(f) == p.Name+".csv" {
			rows, err := ReadRows(f)
			if err != nil {
				return Verdict{}, err
			}
			return p.Judge(rows, mode), nil
		}
	}
	return Verdict{}, fmt.Errorf("the run wrote no %s.csv", p.Name)
}

// section is the page's section of one result: its figures, its printed
// table and notes, and links to its files, all relative to the page's
// directory.
func section(out string, p Reproduction, rec Reproduced, mode Mode) report.Section {
	ex, _ := Get(p.Name)
	s := report.Section{ID: p.ID, Title: p.ID + ": " + ex.Title, Commands: []string{rec.Command}, Summary: "Tests: " + p.Claim + "."}
	if v := rec.Verdict; v != nil {
		whose := "this run's"
		if rec.Earlier != "" {
			whose = "the " + rec.Earlier + " run's"
		}
		s.Verdict = "Verdict, computed from " + whose + " table. " + v.Sentence()
		if scale := mode.VerdictScale(); scale != "" && v.Status != NotJudged {
			s.Verdict = "Verdict " + scale + ", computed from " + whose + " table. " + v.Sentence()
		}
	}
	switch rec.Status {
	case "ran":
		s.Status = fmt.Sprintf("ran in %s on this machine", roundSeconds(time.Duration(rec.Seconds*float64(time.Second))))
		if rec.Earlier != "" {
			s.Status = fmt.Sprintf("ran on %s in %s (an earlier run, kept: --only left this result out)", rec.Earlier, roundSeconds(time.Duration(rec.Seconds*float64(time.Second))))
		}
		if rec.Loaded > 0 {
			s.Status += fmt.Sprintf(" (%s loaded from the journal, not computed again)", plural(rec.Loaded, "trial"))
		}
		switch {
		case p.FullTime == "":
		case mode != Full:
			s.Status += fmt.Sprintf("; the full run (%s) took %s on the project's 2-core machine", p.Command("DIR", Full), p.FullTime)
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
