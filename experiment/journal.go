package experiment

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/internal/strictjson"
	"github.com/dstein/dstein/report"
)

// The trial journal of experiment NAME is two files in the output
// directory:
//
//   - NAME.trials.csv, a tidy CSV with the header method,x,trial,metric,value
//     and one row per metric of a finished trial; each trial's rows end with
//     a row whose metric is "_done" (value 1), which marks it complete
//     (drop those rows for analysis: df[df.metric != "_done"]);
//   - NAME.trials.json, the settings the trials were made with (experiment,
//     seed, mode, options) and the dstein version that started it.
//
// A resume checks that the settings which change results (seed, mode and
// the options other than those that only select settings, such as nmax;
// an option the journal does not record had its default) are the same,
// and that the methods it holds trials of were run with the same full
// settings (journal.describe), then skips the complete trials; the
// dstein version and fields added to the sidecar later do not matter. Every row is validated: five
// fields, a finite x and value, a whole trial index, no trial recorded
// twice. A row cut short by a crash at the end of the file is dropped (and
// the file truncated before new trials are appended); anything else
// malformed is an error naming the line. CRLF line ends are accepted. The
// files are never followed through symbolic links.
//
// The first round's journals (a "# dstein experiment …" comment line
// before the header, no sidecar) are read too, and converted to this form
// when a run resumes them.

// doneMarker is the metric of the row that closes a trial's record.
const doneMarker = "_done"

const journalColumns = "method,x,trial,metric,value"

// journalFormat is the version of the journal's layout.
const journalFormat = 2

// journalSettings is the sidecar NAME.trials.json.
type journalSettings struct {
	Format     int                `json:"format"`
	Experiment string             `json:"experiment"`
	Seed       uint64             `json:"seed"`
	Mode       string             `json:"mode"`
	Options    map[string]float64 `json:"options"`
	// Version is the dstein build that started the journal (informative).
	Version string `json:"dstein_version,omitempty"`
	// Inputs are the SHA-256 digests of input files by name (the suite's
	// UAI networks).
	Inputs map[string]string `json:"inputs,omitempty"`
	// Methods are the full settings of each method whose trials the
	// journal holds (runner.describe): its preset, its pipeline with every
	// default resolved, its chains. A method added later is added here; a
	// method whose settings changed is refused.
	Methods map[string]json.RawMessage `json:"methods,omitempty"`
	// Trials is the number of trials of the last run (informative; a
	// resume may ask for more or fewer).
	Trials int `json:"trials,omitempty"`
	// Shard is "K/N" for a journal of shard K of N (Config.Shard): it
	// holds only that shard's trials, and resumes only as that shard.
	Shard string `json:"shard,omitempty"`
	// Selected are the methods a run selected (the suite's --methods;
	// informative: a resume may select others).
	Selected []string `json:"selected_methods,omitempty"`
	// MergedFrom lists the shard directories that dstein merge joined
	// into this journal.
	MergedFrom []string `json:"merged_from,omitempty"`
}

// Version is recorded in new journals; the command line sets it.
var Version = "devel"

type key struct {
	method string
	x      float64
	trial  int
}

// journal holds finished trials and appends new ones.
type journal struct {
	path string
	side string
	// settings are those recorded in the sidecar (with Methods as found
	// there and added since).
	settings journalSettings
	done     map[key]map[string]float64
	order    []key
	f        *os.File
	w        *csv.Writer
	// lock is the held NAME.trials.lock (nil for a journal read by merge).
	lock *os.File
}

// selectOnly lists options that choose which settings run without changing
// any trial's result; they may differ between a journal and its resume.
var selectOnly = map[string]bool{"nmax": true}

// resultSettings returns the settings of cfg that change results.
func resultSettings(s journalSettings) string {
	var parts []string
	parts = append(parts, fmt.Sprintf("experiment=%s", s.Experiment), fmt.Sprintf("seed=%d", s.Seed), "mode="+s.Mode)
	keys := make([]string, 0, len(s.Options))
	for k := range s.Options {
		if !selectOnly[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+strconv.FormatFloat(s.Options[k], 'g', -1, 64))
	}
	return strings.Join(parts, " ")
}

// sameInputs refuses input files that the journal recorded with other
// contents. Inputs may be added or left out between runs (each names its
// own targets, so their trials do not mix), but a file whose digest
// changed would give the journal's trials of it a different meaning.
func sameInputs(have, want map[string]string) error {
	names := make([]string, 0, len(want))
	for k := range want {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if h, ok := have[k]; ok && h != want[k] {
			return fmt.Errorf("was written with other settings: input %s has changed since (SHA-256 %.12s…, now %.12s…)", k, h, want[k])
		}
	}
	return nil
}

// noLink refuses a path that is a symbolic link or not a regular file.
func noLink(path string) (exists bool, err error) {
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case info.Mode()&fs.ModeSymlink != 0:
		return true, fmt.Errorf("%s is a symbolic link; dstein does not follow links inside its output directory (remove it, or use another --out-dir)", path)
	case !info.Mode().IsRegular():
		return true, fmt.Errorf("%s is not a regular file", path)
	}
	return true, nil
}

// openJournal takes the output directory's lock for the experiment (so
// that two runs never append to one journal), reads DIR/NAME.trials.csv if
// it exists (refusing one made with settings that change results, or a
// corrupt one) and opens it for appending. The lock is held until close.
func openJournal(name string, cfg Config) (*journal, error) {
	lock, err := lockJournal(cfg.Out, name)
	if err != nil {
		return nil, err
	}
	j, err := openLockedJournal(name, cfg)
	if err != nil {
		lock.Close()
		return nil, err
	}
	j.lock = lock
	return j, nil
}

// lockJournal takes an exclusive lock on DIR/NAME.trials.lock (flock, not
// waiting), released when the file is closed or the process ends, however
// it ends. A second run of the same experiment into the same directory is
// refused instead of interleaving its rows with the first's.
func lockJournal(dir, name string) (*os.File, error) {
	path := filepath.Join(dir, name+".trials.lock")
	if _, err := noLink(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating the journal's lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another dstein is running experiment %s in %s (it holds %s); wait for it to finish, or use another --out-dir", name, dir, path)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return f, nil
}

// openLockedJournal is openJournal once the lock is held.
func openLockedJournal(name string, cfg Config) (*journal, error) {
	path := filepath.Join(cfg.Out, name+".trials.csv")
	side := filepath.Join(cfg.Out, name+".trials.json")
	want := journalSettings{Format: journalFormat, Experiment: name, Seed: cfg.Seed, Mode: cfg.Mode.String(), Options: cfg.Options, Version: Version, Inputs: cfg.inputs, Trials: cfg.trials, Shard: cfg.Shard.String(), Selected: cfg.Methods}
	j := &journal{path: path, side: side, done: map[key]map[string]float64{}, settings: want}
	exists, err := noLink(path)
	if err != nil {
		return nil, err
	}
	if _, err := noLink(side); err != nil {
		return nil, err
	}
	if exists && cfg.Restart {
		if err := os.Rename(path, path+".old"); err != nil {
			return nil, fmt.Errorf("setting the old journal aside: %w", err)
		}
		os.Remove(side)
		exists = false
	}
	if !exists {
		if err := writeSettings(side, want); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			return nil, fmt.Errorf("creating the trial journal: %w", err)
		}
		fmt.Fprintln(f, journalColumns)
		j.f, j.w = f, csv.NewWriter(f)
		return j, nil
	}
	data, err := safeio.ReadFile(path, "trial journal", 0)
	if err != nil {
		return nil, err
	}
	data, legacy, err := legacyHeader(data, &want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !legacy {
		raw, err := safeio.ReadFile(side, "journal settings", 1<<20)
		if err != nil {
			return nil, fmt.Errorf("%w (it records the settings of %s; --restart starts over)", err, path)
		}
		var have journalSettings
		if err := strictjson.Unmarshal(raw, &have); err != nil {
			return nil, fmt.Errorf("%s: %w (--restart starts over)", side, err)
		}
		if have.Options == nil {
			have.Options = map[string]float64{}
		}
		for k, v := range cfg.defaults {
			if _, ok := have.Options[k]; !ok {
				have.Options[k] = v
			}
		}
		if a, b := resultSettings(have), resultSettings(want); a != b {
			return nil, fmt.Errorf("%s was written with other settings (%s; now %s); use another --out-dir, or --restart to start over", path, a, b)
		}
		if have.Shard != want.Shard {
			return nil, fmt.Errorf("%s holds %s; now %s; use the shard's own --out-dir", path, shardWords(have.Shard), shardWords(want.Shard))
		}
		want.Methods, want.MergedFrom = have.Methods, have.MergedFrom
		j.settings = want
		if have.Trials != want.Trials || have.Version != want.Version || strings.Join(have.Selected, ",") != strings.Join(want.Selected, ",") {
			if err := writeSettings(side, want); err != nil {
				return nil, err
			}
		}
		if err := sameInputs(have.Inputs, want.Inputs); err != nil {
			return nil, fmt.Errorf("%s: %w; use another --out-dir, or --restart to start over", path, err)
		}
		if len(have.Inputs) > 0 || len(want.Inputs) > 0 {
			// Record every input seen, so that a later resume checks them all.
			merged := map[string]string{}
			for k, v := range have.Inputs {
				merged[k] = v
			}
			for k, v := range want.Inputs {
				merged[k] = v
			}
			want.Inputs = merged
			j.settings = want
			if err := writeSettings(side, want); err != nil {
				return nil, err
			}
		}
	}
	keep, err := j.read(data)
	if err != nil {
		return nil, fmt.Errorf("%s %w; fix or remove that line, or rerun with --restart to start over", path, err)
	}
	if legacy || keep < len(data) {
		// Rewrite in today's form, without a row cut short at the end.
		body := data[:keep]
		if legacy {
			if err := writeSettings(side, want); err != nil {
				return nil, err
			}
		}
		if err := safeio.Replace(path, func(w *bufio.Writer) error { _, err := w.Write(body); return err }); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the trial journal: %w", err)
	}
	j.f, j.w = f, csv.NewWriter(f)
	return j, nil
}

// shardWords names a journal's shard for messages.
func shardWords(s string) string {
	if s == "" {
		return "every trial (no --shard)"
	}
	return "the trials of shard " + s
}

// describe records the settings of a method (its JSON form b), and
// refuses when the journal holds trials of that method made with other
// settings. Settings recorded for a method without trials are replaced.
func (j *journal) describe(method string, b []byte) error {
	now, err := compactJSON(b)
	if err != nil {
		return err
	}
	if old, ok := j.settings.Methods[method]; ok {
		had, err := compactJSON(old)
		if err != nil {
			return fmt.Errorf("%s: the settings of method %s: %w (--restart starts over)", j.side, method, err)
		}
		if sameSettings(had, now) {
			return nil
		}
		if j.hasMethod(method) {
			return fmt.Errorf("%s holds trials of %s made with other settings (recorded in %s: %s; now %s); use another --out-dir, or --restart to start over", j.path, method, j.side, had, now)
		}
	}
	if j.settings.Methods == nil {
		j.settings.Methods = map[string]json.RawMessage{}
	}
	j.settings.Methods[method] = json.RawMessage(now)
	return writeSettings(j.side, j.settings)
}

// sameSettings reports whether two recorded settings (JSON) are the same:
// equal values, where a key that only one side has counts as equal when its
// value there is empty ("", 0, false, null, [] or {}), the zero value that
// means "the default" in dstein's settings, so that a field added to a
// record later does not invalidate the journals written before.
func sameSettings(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return sameValue(x, y)
}

func sameValue(x, y any) bool {
	mx, okx := x.(map[string]any)
	my, oky := y.(map[string]any)
	if okx != oky {
		return false
	}
	if okx {
		for k, v := range mx {
			if w, ok := my[k]; ok {
				if !sameValue(v, w) {
					return false
				}
			} else if !emptyValue(v) {
				return false
			}
		}
		for k, w := range my {
			if _, ok := mx[k]; !ok && !emptyValue(w) {
				return false
			}
		}
		return true
	}
	ax, okx := x.([]any)
	ay, oky := y.([]any)
	if okx != oky {
		return false
	}
	if okx {
		if len(ax) != len(ay) {
			return false
		}
		for i := range ax {
			if !sameValue(ax[i], ay[i]) {
				return false
			}
		}
		return true
	}
	return x == y
}

func emptyValue(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case float64:
		return v == 0
	case bool:
		return !v
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// compactJSON returns b without insignificant space, the form in which
// recorded settings are compared.
func compactJSON(b []byte) ([]byte, error) {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// hasMethod reports whether the journal holds a trial of method.
func (j *journal) hasMethod(method string) bool {
	for _, k := range j.order {
		if k.method == method {
			return true
		}
	}
	return false
}

func writeSettings(path string, s journalSettings) error {
	if s.Options == nil {
		s.Options = map[string]float64{}
	}
	return safeio.Replace(path, func(w *bufio.Writer) error { return report.WriteJSON(w, s) })
}

// legacyHeader recognises a first-round journal ("# dstein experiment NAME
// seed=S mode=M k=v …" before the columns), checks its settings against
// want and returns the data without that line.
func legacyHeader(data []byte, want *journalSettings) ([]byte, bool, error) {
	if !bytes.HasPrefix(data, []byte("# dstein experiment ")) {
		return data, false, nil
	}
	line, rest, _ := bytes.Cut(data, []byte("\n"))
	fields := strings.Fields(strings.TrimSuffix(string(line), "\r"))
	have := journalSettings{Options: map[string]float64{}}
	if len(fields) < 4 {
		return nil, true, fmt.Errorf("line 1: a first-round header without the experiment's name")
	}
	have.Experiment = fields[3]
	for _, f := range fields[4:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		switch k {
		case "seed":
			have.Seed, _ = strconv.ParseUint(v, 10, 64)
		case "mode":
			have.Mode = v
		default:
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, true, fmt.Errorf("line 1: option %s=%q is not a number", k, v)
			}
			have.Options[k] = x
		}
	}
	// Options absent from the old header had their defaults.
	for k, v := range want.Options {
		if _, ok := have.Options[k]; !ok && v == 0 {
			have.Options[k] = 0
		}
	}
	if a, b := resultSettings(have), resultSettings(*want); a != b {
		return nil, true, fmt.Errorf("was written with other settings (%s; now %s); use another --out-dir, or --restart to start over", a, b)
	}
	return rest, true, nil
}

// read loads the rows of data (the CSV after any legacy comment line) and
// returns the length of its prefix that ends with the last complete line.
func (j *journal) read(data []byte) (int, error) {
	keep := len(data)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		// The last row was cut short by a crash: drop it.
		keep = bytes.LastIndexByte(data, '\n') + 1
	}
	lines := bytes.Split(data[:keep], []byte("\n"))
	if len(lines) == 0 || strings.TrimSuffix(string(lines[0]), "\r") != journalColumns {
		return 0, fmt.Errorf("line 1: want the columns %s", journalColumns)
	}
	pending := map[key]map[string]float64{}
	for ln, raw := range lines[1:] {
		no := ln + 2
		text := strings.TrimSuffix(string(raw), "\r")
		if text == "" {
			if ln == len(lines)-2 {
				break // the final newline
			}
			return 0, fmt.Errorf("line %d: empty line", no)
		}
		rec, err := csv.NewReader(strings.NewReader(text)).Read()
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("line %d: %v", no, err)
		}
		if len(rec) != 5 {
			return 0, fmt.Errorf("line %d: %d fields, want 5 (%s)", no, len(rec), journalColumns)
		}
		x, err := strconv.ParseFloat(rec[1], 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("line %d: x = %q is not a finite number", no, rec[1])
		}
		t, err := strconv.Atoi(rec[2])
		if err != nil || t < 0 || t >= 1<<30 {
			return 0, fmt.Errorf("line %d: trial %q is not a whole number ≥ 0", no, rec[2])
		}
		v, err := strconv.ParseFloat(rec[4], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("line %d: value %q of metric %s is not a finite number", no, rec[4], rec[3])
		}
		if rec[0] == "" || rec[3] == "" {
			return 0, fmt.Errorf("line %d: empty method or metric", no)
		}
		if err := checkMetric(rec[3], v); err != nil {
			return 0, fmt.Errorf("line %d: %w", no, err)
		}
		k := key{rec[0], x, t}
		if _, dup := j.done[k]; dup {
			return 0, fmt.Errorf("line %d: trial %d of %s at %s is recorded twice", no, t, k.method, rec[1])
		}
		if pending[k] == nil {
			pending[k] = map[string]float64{}
		}
		if rec[3] == doneMarker {
			j.done[k] = pending[k]
			j.order = append(j.order, k)
			delete(pending, k)
			continue
		}
		pending[k][rec[3]] = v
	}
	return keep, nil
}

// record appends one trial's metrics (in sorted metric order) and syncs.
func (j *journal) record(k key, vals map[string]float64) error {
	writeTrialRows(j.w, k, vals)
	j.w.Flush()
	if err := j.w.Error(); err != nil {
		return err
	}
	if err := j.f.Sync(); err != nil {
		return err
	}
	j.done[k] = vals
	j.order = append(j.order, k)
	return nil
}

// writeTrialRows writes one trial's rows: its metrics in sorted order,
// then the row that marks it complete.
func writeTrialRows(w *csv.Writer, k key, vals map[string]float64) {
	names := make([]string, 0, len(vals))
	for m := range vals {
		names = append(names, m)
	}
	sort.Strings(names)
	for _, m := range names {
		w.Write([]string{k.method, report.FormatValue(k.x), strconv.Itoa(k.trial), m, report.FormatValue(vals[m])})
	}
	w.Write([]string{k.method, report.FormatValue(k.x), strconv.Itoa(k.trial), doneMarker, "1"})
}

func (j *journal) close() error {
	err := j.f.Close()
	if j.lock != nil {
		j.lock.Close()
	}
	return err
}

// checkMetric refuses values outside a metric's range: errors, times,
// counts and sizes are ≥ 0; rates, probabilities, p-values and accuracies
// lie in [0, 1]. Metrics not listed here (a signed statistic, an unbiased
// MMD²) only need to be finite.
func checkMetric(name string, v float64) error {
	unit := name == "reject" || name == "p_value" || name == "ks_uniform" || name == "tv" || name == "max_error" || name == "energy_tv" || name == "mode_mass" ||
		strings.HasPrefix(name, "accuracy") || name == "member_accuracy" || strings.HasPrefix(name, "freq:") || name == doneMarker
	nonneg := unit || name == "mse" || name == "mmd2" || name == "seconds" || name == "evaluations" || name == "eff_n" ||
		name == "ess_per_s" || name == "weight_ess" || name == "repulsion" || name == "importance_ess" ||
		name == "pair_rmse" || name == "mode_err2" || name == "mmd2_first"
	switch {
	case unit && (v < 0 || v > 1):
		return fmt.Errorf("%s = %v; want a value in [0, 1]", name, v)
	case nonneg && v < 0:
		return fmt.Errorf("%s = %v; want a value ≥ 0", name, v)
	}
	return nil
}
