package experiment

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/dstein/dstein/internal/atomicfile"
	"github.com/dstein/dstein/report"
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
	// Ising experiments), each recorded in the journal header.
	Options map[string]float64
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

// doneMarker is the metric of the line that closes a trial's record in the
// journal: a trial whose lines were cut short by an interruption lacks it
// and is run again.
const doneMarker = "_done"

type key struct {
	method string
	x      float64
	trial  int
}

// journal holds finished trials and appends new ones.
type journal struct {
	path  string
	done  map[key]map[string]float64
	order []key
	f     *os.File
	w     *csv.Writer
}

func journalHeader(name string, cfg Config, trials int) string {
	var opts []string
	for k, v := range cfg.Options {
		opts = append(opts, k+"="+strconv.FormatFloat(v, 'g', -1, 64))
	}
	sort.Strings(opts)
	return fmt.Sprintf("# dstein experiment %s seed=%d mode=%s %s", name, cfg.Seed, cfg.Mode, strings.Join(opts, " "))
}

// openJournal reads DIR/NAME.trials.csv if it exists (refusing one made
// with other settings) and opens it for appending.
func openJournal(name string, cfg Config, trials int) (*journal, error) {
	path := filepath.Join(cfg.Out, name+".trials.csv")
	hdr := journalHeader(name, cfg, trials)
	j := &journal{path: path, done: map[key]map[string]float64{}}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		f, err := os.Create(path)
		if err != nil {
			return nil, fmt.Errorf("creating the trial journal: %w", err)
		}
		fmt.Fprintln(f, hdr)
		fmt.Fprintln(f, "method,x,trial,metric,value")
		j.f = f
	case err != nil:
		return nil, fmt.Errorf("reading the trial journal: %w", err)
	default:
		lines := strings.SplitN(string(data), "\n", 2)
		if lines[0] != hdr {
			return nil, fmt.Errorf("%s was written with other settings (%q, now %q); use another --out or remove it", path, strings.TrimPrefix(lines[0], "# "), strings.TrimPrefix(hdr, "# "))
		}
		r := csv.NewReader(strings.NewReader(data2(lines)))
		r.FieldsPerRecord = -1
		r.LazyQuotes = true
		pending := map[key]map[string]float64{}
		recs, err := r.ReadAll()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for n, rec := range recs {
			if n == 0 {
				continue // column names
			}
			if len(rec) != 5 {
				continue // a line cut by an interruption
			}
			x, e1 := strconv.ParseFloat(rec[1], 64)
			t, e2 := strconv.Atoi(rec[2])
			v, e3 := strconv.ParseFloat(rec[4], 64)
			if e1 != nil || e2 != nil || e3 != nil {
				continue
			}
			k := key{rec[0], x, t}
			if pending[k] == nil {
				pending[k] = map[string]float64{}
			}
			if rec[3] == doneMarker {
				// The trial's last line: it is complete.
				if j.done[k] == nil {
					j.order = append(j.order, k)
				}
				j.done[k] = pending[k]
				delete(pending, k)
				continue
			}
			pending[k][rec[3]] = v
		}
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, fmt.Errorf("opening the trial journal: %w", err)
		}
		// A run killed mid-line leaves a partial last line: end it.
		if len(data) > 0 && data[len(data)-1] != '\n' {
			f.WriteString("\n")
		}
		j.f = f
	}
	j.w = csv.NewWriter(j.f)
	return j, nil
}

func data2(lines []string) string {
	if len(lines) < 2 {
		return ""
	}
	return lines[1]
}

// record appends one trial's metrics (in sorted metric order) and flushes.
func (j *journal) record(k key, vals map[string]float64) error {
	names := make([]string, 0, len(vals))
	for m := range vals {
		names = append(names, m)
	}
	sort.Strings(names)
	for _, m := range names {
		j.w.Write([]string{k.method, report.FormatValue(k.x), strconv.Itoa(k.trial), m, report.FormatValue(vals[m])})
	}
	j.w.Write([]string{k.method, report.FormatValue(k.x), strconv.Itoa(k.trial), doneMarker, "1"})
	j.w.Flush()
	if err := j.w.Error(); err != nil {
		return err
	}
	if err := j.f.Sync(); err != nil {
		return err
	}
	if j.done[k] == nil {
		j.order = append(j.order, k)
	}
	j.done[k] = vals
	return nil
}

func (j *journal) close() error { return j.f.Close() }

// runner is handed to an experiment's body.
type runner struct {
	ctx     context.Context
	cfg     Config
	name    string
	trials  int
	j       *journal
	ran     int // trials computed in this run (not from the journal)
	setting string
	presets map[string]string
}

// trial returns the metrics of one (method, x, trial): from the journal
// when it is there, else by calling f and recording the result.
func (r *runner) trial(method string, x float64, t int, f func() (map[string]float64, error)) (map[string]float64, error) {
	k := key{method, x, t}
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
		if math.IsNaN(val) {
			return nil, fmt.Errorf("%s at %s = %v, trial %d: metric %s is NaN", method, r.setting, x, t, m)
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
		if k.trial >= r.trials {
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
	return atomicfile.Write(path, func(b *bufio.Writer) error {
		w := csv.NewWriter(b)
		fill(w)
		w.Flush()
		return w.Error()
	})
}
