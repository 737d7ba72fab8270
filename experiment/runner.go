package experiment

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/dstein/dstein/internal/safeio"
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
	// Log receives one line per finished trial block (may be nil).
	Log io.Writer
	// Options are experiment-specific settings (such as "field" for the
	// Ising experiments), each recorded in the journal's settings.
	Options map[string]float64
	// Variants names the variants of the variants-* experiments (nil: the
	// defaults).
	Variants []string
	// Restart discards an existing journal (kept as NAME.trials.csv.old)
	// instead of resuming from it.
	Restart bool
	// Methods, for the suite, names the methods to run (nil: all); exact
	// and gibbs always run. Trials of other methods in the journal are
	// kept and left out of the tables.
	Methods []string
	// UAIDir, for the suite, is a directory of UAI networks (NAME.uai and
	// optional NAME.uai.evid) to add to its targets.
	UAIDir string
	// inputs are the SHA-256 digests of the input files (UAIDir's), which
	// a journal records among the settings that change results.
	inputs map[string]string
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
}

// runner is handed to an experiment's body.
type runner struct {
	ctx       context.Context
	cfg       Config
	name      string
	trials    int
	j         *journal
	ran       int // trials computed in this run (not from the journal)
	setting   string
	presets   map[string]string
	requested map[key]bool
	methods   map[string]bool
}

// trialKey returns the random key of trial t: the experiment seed's root
// key split t ways (rng.Key.Split), the derivation every published trial
// was drawn with.
func (r *runner) trialKey(t int) rng.Key { return rng.NewKey(r.cfg.Seed).Split(t) }

// want marks (method, x, trial) as part of this run and reports whether the
// journal already holds it.
func (r *runner) want(method string, x float64, t int) bool {
	k := key{method, x, t}
	r.requested[k] = true
	r.methods[method] = true
	_, ok := r.j.done[k]
	return ok
}

// trial returns the metrics of one (method, x, trial): from the journal
// when it is there, else by calling f and recording the result.
func (r *runner) trial(method string, x float64, t int, f func() (map[string]float64, error)) (map[string]float64, error) {
	k := key{method, x, t}
	r.requested[k] = true
	r.methods[method] = true
	if v, ok := r.j.done[k]; ok {
		return v, nil
	}
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	v, err := f()
	if err != nil {
		return nil, fmt.Errorf("%s at %s = %v, trial %d: %w", method, r.setting, x, t, err)
	}
	for m, val := range v {
		if math.IsNaN(val) || math.IsInf(val, 0) {
			return nil, fmt.Errorf("%s at %s = %v, trial %d: metric %s is %v", method, r.setting, x, t, m, val)
		}
	}
	r.ran++
	return v, r.j.record(k, v)
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
	for _, k := range r.j.order {
		if k.trial >= r.trials || !r.requested[k] {
			continue
		}
		for m, v := range r.j.done[k] {
			g := [3]string{k.method, report.FormatValue(k.x), m}
			if groups[g] == nil {
				groups[g] = &agg{}
				order = append(order, g)
				xs[g] = k.x
			}
			groups[g].vals = append(groups[g].vals, v)
		}
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

// WriteCSV writes the tidy summary.
func WriteCSV(path, name string, rows []Row) error {
	return atomicWriteCSV(path, func(w *csv.Writer) {
		w.Write([]string{"experiment", "method", "preset", "setting", "x", "metric", "mean", "se", "trials"})
		for _, r := range rows {
			w.Write([]string{name, r.Method, r.Preset, r.Setting, report.FormatValue(r.X), r.Metric, report.FormatValue(r.Mean), report.FormatValue(r.SE), strconv.Itoa(r.Trials)})
		}
	})
}

func atomicWriteCSV(path string, fill func(w *csv.Writer)) error {
	return safeio.Replace(path, func(b *bufio.Writer) error {
		w := csv.NewWriter(b)
		fill(w)
		w.Flush()
		return w.Error()
	})
}
