package experiment

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dstein/dstein/experiment/journal"
	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/report"
	"github.com/dstein/dstein/rng"
)

// Mode scales an experiment's cost.
type Mode int

const (
	// Full runs the paper's settings.
	Full Mode = iota
	// Quick runs a reduced grid that finishes in under a minute.
	Quick
	// Tiny runs a setting that takes seconds, for tests.
	Tiny
)

func (m Mode) String() string {
	switch m {
	case Quick:
		return "quick"
	case Tiny:
		return "tiny"
	}
	return "full"
}

// Config says how to run an experiment.
type Config struct {
	// Out is the directory for NAME.csv, NAME.png, NAME.svg and the trial
	// journal NAME.trials.csv.
	Out string
	// Trials overrides the experiment's number of trials when > 0.
	Trials int
	// Seed fixes the models and every trial's randomness.
	Seed uint64
	Mode Mode
	// Log receives progress lines (trials loaded, trials done with the time
	// left, long preparations) when Progress is nil, and the preparation
	// lines in any case (may be nil).
	Log io.Writer
	// Progress, when set, receives the progress of the run instead of the
	// plain lines (a progress bar on a terminal).
	Progress Progress
	// Settings are the experiment's own options (such as the Ising
	// experiments' field strength): a value of the type of its
	// Experiment.Settings, nil for its defaults. The journal records
	// each by its key.
	Settings any
	// Variants names the variants of the variants-* experiments (nil: the
	// defaults).
	Variants []string
	// Restart sets an existing journal and its settings aside (the first
	// of NAME.trials.csv.old, .old.2, … free for both)
	// instead of resuming from it.
	Restart bool
	// Methods names the methods to run (nil: all) of an experiment with
	// MethodNames (the suite: exact and gibbs always run). Trials of other
	// methods in the journal are kept and left out of the tables.
	Methods []string
	// Text also writes DIR/NAME.txt, the printed table and notes, with
	// the other outputs (dstein reproduce's).
	Text bool
	// NoSVG writes the figure as PNG only, without NAME.svg (dstein
	// reproduce's, unless --svg).
	NoSVG bool
	// Pack leaves the journal packed (NAME.trials.csv.gz) when the run
	// ends well (dstein reproduce's; see the journal's doc).
	Pack bool
	// Shard, when Shard.N > 0, runs only the trials of shard K of N
	// (trial t belongs to shard t mod N + 1), for runs spread over the
	// tasks of a job array; dstein merge joins the shards' journals.
	Shard Shard
	// UAIDir, for the suite, is a directory of UAI networks (NAME.uai and
	// optional NAME.uai.evid) to add to its targets.
	UAIDir string
	// Version is the dstein build recorded in new journals (informative;
	// a journal of another version resumes). Empty: "devel".
	Version string
	// Budget bounds the memory that grows with the run's inputs: the
	// trial journal read on a resume (and the shards' journals of a
	// merge), the suite's UAI networks and their exact answers. Over it,
	// the run is refused before it reads them (*memlimit.Exceeded). The
	// zero value is no limit. An experiment's own working memory is fixed
	// by its settings (BENCHMARKS.md lists the published runs' peaks).
	Budget memlimit.Budget
	// inputs are the SHA-256 digests of the input files (UAIDir's), which
	// a journal records among the settings that change results.
	inputs map[string]string
	// options are the settings as the journal records them, settings
	// the complete settings (Settings or the defaults).
	options  map[string]float64
	settings any
	// defaults are the values of options that a journal does not record
	// (one added to the experiment after the journal was written): their
	// defaults, or their Legacy values.
	defaults map[string]float64
	// trials is the number of trials of the run (Trials or the mode's).
	trials int
	// offline runs compute nothing: a trial the journal lacks is an
	// error (errMissing), for dstein merge.
	offline bool
	// journalDir, when set, is where the journal is read and kept
	// instead of Out (merge's joined journal, in a scratch directory).
	journalDir string
	// extra are files written with the outputs, in the same batch
	// (merge's joined journal and its settings).
	extra []extraFile
}

// extraFile is a file that Run writes with its outputs.
type extraFile struct {
	path string
	fill func(*bufio.Writer) error
}

// Shard is shard K (1 ≤ K ≤ N) of N; the zero value runs every trial.
type Shard struct{ K, N int }

// String is "K/N", or "" for no sharding.
func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// Has reports whether trial t (0-based) belongs to the shard.
func (s Shard) Has(t int) bool { return s.N == 0 || t%s.N == s.K-1 }

// Validate refuses a shard outside 1 ≤ K ≤ N.
func (s Shard) Validate() error {
	if s.N == 0 && s.K == 0 {
		return nil
	}
	if s.N < 1 || s.K < 1 || s.K > s.N {
		return fmt.Errorf("shard %d/%d: want K/N with 1 ≤ K ≤ N", s.K, s.N)
	}
	return nil
}

// ParseShard reads "K/N".
func ParseShard(v string) (Shard, error) {
	k, n, ok := strings.Cut(v, "/")
	var s Shard
	var err1, err2 error
	s.K, err1 = strconv.Atoi(strings.TrimSpace(k))
	s.N, err2 = strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want K/N, such as 2/5", v)
	}
	if s.N == 0 {
		return Shard{}, fmt.Errorf("shard %q: want K/N with 1 ≤ K ≤ N", v)
	}
	return s, s.Validate()
}

// Row is one line of the summary: a method at one setting, a metric's
// mean over trials and its standard error.
type Row struct {
	Method  string
	Preset  string
	Setting string
	X       float64
	Metric  string
	Mean    float64
	SE      float64
	Trials  int
}

// Result is what an experiment produced.
type Result struct {
	Name  string
	Rows  []Row
	Notes []string // lines printed under the table (fits, settings)
	Show  []string // metrics printed in the table (all when empty)
	Files []string
	// Loaded is the number of trials the journal already held complete
	// (loaded, not computed again).
	Loaded int
}

// Progress follows a run: the units of work (one method at one setting in
// one trial) as they start, and the trials as they end.
type Progress interface {
	// Loaded reports, once, the trials that the journal already held
	// complete.
	Loaded(trials int)
	// Unit is called before one method at one setting of one trial
	// (0-based) is computed.
	Unit(trial, trials int, method, setting string, x float64)
	// TrialDone is called when a trial with computed units ends: left is
	// the estimated time for the trials still to compute (0 when none).
	TrialDone(trial, trials int, took, left time.Duration)
}

// runner is handed to an experiment's body.
type runner struct {
	ctx       context.Context
	cfg       Config
	name      string
	trials    int
	j         *journal.Journal
	ran       int // trials computed in this run (not from the journal)
	setting   string
	presets   map[string]string
	requested map[journal.Key]bool
	methods   map[string]bool
	// progress: the trial whose units are being visited, whether any of
	// them was computed in this run, when the trial started, the trials
	// computed and found complete, and the time the computed ones took.
	curTrial    int
	curComputed bool
	curStart    time.Time
	computed    int
	loaded      int
	spent       time.Duration
	reported    bool
	// fig is the experiment's figure, written by Run after the body.
	fig *report.Figure
	// xNames name the settings whose x is a key, not a value (the suite's
	// networks), for messages.
	xNames map[float64]string
}

// at names the setting x in messages: "n = 50", or the suite's
// "model uai:Promedus_12" where x is only a key.
func (r *runner) at(x float64) string {
	if name, ok := r.xNames[x]; ok {
		return fmt.Sprintf("%s %s", r.setting, name)
	}
	return fmt.Sprintf("%s = %v", r.setting, x)
}

// save keeps the experiment's figure, which Run writes when every trial
// is done (and not at all when the run is interrupted).
// dir is the directory of the run's journal: Out, or the scratch
// directory of a merge's offline run.
func (c Config) dir() string {
	if c.journalDir != "" {
		return c.journalDir
	}
	return c.Out
}

// settingsOf returns the run's settings, of its experiment's settings
// type T (prepare made them so).
func settingsOf[T any](r *runner) T { return r.cfg.settings.(T) }

func (r *runner) save(fig report.Figure) error {
	r.fig = &fig
	return nil
}

// trialKey returns the random key of trial t: the experiment seed's root
// key split t ways (rng.Key.Split), the derivation every published trial
// was drawn with.
func (r *runner) trialKey(t int) rng.Key { return rng.NewKey(r.cfg.Seed).Split(t) }

// want marks (method, x, trial) as part of this run and reports whether the
// journal already holds it.
func (r *runner) want(method string, x float64, t int) bool {
	k := journal.Key{Method: method, X: x, Trial: t}
	r.requested[k] = true
	r.methods[method] = true
	_, ok := r.j.Done(k)
	return ok
}

// trial returns the metrics of one (method, x, trial): from the journal
// when it is there, else by calling f and recording the result.
func (r *runner) trial(method string, x float64, t int, f func() (map[string]float64, error)) (map[string]float64, error) {
	k := journal.Key{Method: method, X: x, Trial: t}
	r.requested[k] = true
	r.methods[method] = true
	if v, ok := r.j.Done(k); ok {
		return v, nil
	}
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	if err := r.startUnit(method, x, t); err != nil {
		return nil, err
	}
	v, err := f()
	if err != nil {
		return nil, fmt.Errorf("%s at %s, trial %d: %w", method, r.at(x), t, err)
	}
	for m, val := range v {
		if math.IsNaN(val) || math.IsInf(val, 0) {
			return nil, fmt.Errorf("%s at %s, trial %d: metric %s is %v", method, r.at(x), t, m, val)
		}
	}
	r.ran++
	return v, r.j.Record(k, v)
}

// describe records the full settings v of a method in the journal (see
// journal.describe): a resume refuses trials made with other settings.
func (r *runner) describe(method string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("recording the settings of %s: %w", method, err)
	}
	return r.j.Describe(method, b)
}

// inShard reports whether trial t is this run's to compute.
func (r *runner) inShard(t int) bool { return r.cfg.Shard.Has(t) }

// startUnit notes that a unit of trial t is about to be computed; an
// offline run refuses.
func (r *runner) startUnit(method string, x float64, t int) error {
	if r.cfg.offline {
		return errMissing{journal.Key{Method: method, X: x, Trial: t}}
	}
	if !r.curComputed || r.curTrial != t {
		r.curTrial, r.curComputed, r.curStart = t, true, time.Now()
	}
	if r.cfg.Progress != nil {
		r.cfg.Progress.Unit(t, r.trials, method, r.setting, x)
	} else if r.trials == 1 {
		// One trial (DISCS, bnn) reports no trial until the end, minutes
		// away: off a terminal each unit says when it starts.
		r.logf("%s: %s at %s …", r.name, method, r.at(x))
	}
	return nil
}

// logf writes a progress line.
func (r *runner) logf(format string, a ...any) {
	if r.cfg.Log != nil {
		fmt.Fprintf(r.cfg.Log, format+"\n", a...)
	}
}

// summarize turns the journal into rows: mean and standard error over the
// trials of each (method, x, metric), for trial indices < r.trials.
func (r *runner) summarize() []Row {
	type agg struct {
		vals []float64
	}
	groups := map[[3]string]*agg{}
	var order [][3]string
	xs := map[[3]string]float64{}
	more := 0 // trials of the journal past this run's
	for _, k := range r.j.Order() {
		if k.Trial >= r.trials {
			more = max(more, k.Trial+1-r.trials)
		}
		if k.Trial >= r.trials || !r.requested[k] {
			continue
		}
		vals, _ := r.j.Done(k)
		for m, v := range vals {
			g := [3]string{k.Method, report.FormatValue(k.X), m}
			if groups[g] == nil {
				groups[g] = &agg{}
				order = append(order, g)
				xs[g] = k.X
			}
			groups[g].vals = append(groups[g].vals, v)
		}
	}
	if more > 0 {
		r.logf("%s: the journal holds %d more trials than this run's %d; the tables use the first %d (--trials %d uses them all)", r.name, more, r.trials, r.trials, r.trials+more)
	}
	var rows []Row
	for _, g := range order {
		mean, se := meanSE(groups[g].vals)
		rows = append(rows, Row{Method: g[0], Preset: r.presets[g[0]], Setting: r.setting, X: xs[g], Metric: g[2], Mean: mean, SE: se, Trials: len(groups[g].vals)})
	}
	sort.SliceStable(rows, func(a, b int) bool {
		if rows[a].Metric != rows[b].Metric {
			return rows[a].Metric < rows[b].Metric
		}
		if rows[a].Method != rows[b].Method {
			return rows[a].Method < rows[b].Method
		}
		return rows[a].X < rows[b].X
	})
	return rows
}

// meanSE returns the mean and its standard error (sample standard
// deviation over √n; 0 for one value).
func meanSE(v []float64) (mean, se float64) {
	n := float64(len(v))
	for _, x := range v {
		mean += x
	}
	mean /= n
	if len(v) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / (n - 1) / n)
}

// WriteCSV writes the tidy summary (through safeio.Replace: an existing
// file is replaced only when dstein wrote it).
func WriteCSV(path, name string, rows []Row) error {
	var b safeio.Batch
	if err := addCSV(&b, path, name, rows); err != nil {
		b.Abort()
		return err
	}
	return b.Commit(context.Background())
}

// addCSV adds the tidy summary to a batch of files written together.
func addCSV(b *safeio.Batch, path, name string, rows []Row) error {
	return b.Replace(path, func(bw *bufio.Writer) error {
		w := csv.NewWriter(bw)
		w.Write([]string{"experiment", "method", "preset", "setting", "x", "metric", "mean", "se", "trials"})
		for _, r := range rows {
			w.Write([]string{name, r.Method, r.Preset, r.Setting, report.FormatValue(r.X), r.Metric, report.FormatValue(r.Mean), report.FormatValue(r.SE), strconv.Itoa(r.Trials)})
		}
		w.Flush()
		return w.Error()
	})
}
