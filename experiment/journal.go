package experiment

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/dstein/dstein/internal/memlimit"
	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/internal/strictjson"
	"github.com/dstein/dstein/report"
)

// The trial journal of experiment NAME is two files in the output
// directory:
//
//   - NAME.trials.csv, a tidy CSV with the header method,x,trial,metric,value
//     and one row per metric of a finished trial; each trial's rows end with
//     a row whose metric is "_done", which marks it complete and whose value
//     is the CRC-32C checksum of the trial's rows (drop those rows for
//     analysis: df[df.metric != "_done"]);
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
// twice, and each trial's checksum (the CRC-32C of its rows' bytes, each
// line without its CR and with its LF): a changed digit, a lost or repeated
// line or a moved row is refused, naming the line. A checksum detects
// damage, not forgery: anyone can recompute it. A row cut short by a crash
// at the end of the file, and the rows of a trial without its closing row,
// are dropped (the file is rewritten without them before new trials are
// appended). CRLF line ends are accepted. The files are never followed
// through symbolic links.
//
// Nothing is written until the first new trial is recorded (or the run
// ends successfully): a run refused or interrupted before that leaves the
// directory as it found it. The lock file NAME.trials.lock exists while a
// run holds it.
//
// Older journals are read too and converted to this form when a run
// records its first trial in them: format 2 (the same rows, closing rows
// of value 1, no checksums) and the first round's (a "# dstein experiment
// …" comment line before the header, no sidecar).

// doneMarker is the metric of the row that closes a trial's record.
const doneMarker = "_done"

const journalColumns = "method,x,trial,metric,value"

// journalFormat is the version of the journal's layout: 3 has a checksum
// in each trial's closing row, 2 had the value 1 there.
const journalFormat = 3

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

// version is what a journal records of cfg's dstein build.
func (cfg Config) version() string {
	if cfg.Version == "" {
		return "devel"
	}
	return cfg.Version
}

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
	// checksums: the rows read carry checksums (format 3).
	checksums bool
	f         *os.File
	w         *csv.Writer
	// lock is the held NAME.trials.lock (nil for a journal read by merge).
	lock *safeio.Lock
	// Work deferred until the first trial is recorded or the run ends
	// well (flush): create the files (after setting an old journal aside,
	// on --restart), rewrite the rows read in today's form, write the
	// settings.
	create, restart, rewrite, sideDirty bool
	// log receives the journal's notes (may be nil).
	log io.Writer
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
	lock, err := lockJournal(cfg.dir(), name)
	if err != nil {
		return nil, err
	}
	j, err := openLockedJournal(name, cfg)
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	j.lock = lock
	return j, nil
}

// lockJournal takes an exclusive lock on DIR/NAME.trials.lock
// (safeio.TryLock: flock, not waiting, the file removed when the lock is
// given up). A second run of the same experiment into the same directory
// is refused instead of interleaving its rows with the first's.
func lockJournal(dir, name string) (*safeio.Lock, error) {
	path := filepath.Join(dir, name+".trials.lock")
	l, err := safeio.TryLock(path)
	var busy *safeio.Busy
	if errors.As(err, &busy) {
		return nil, fmt.Errorf("another dstein is running experiment %s in %s (it holds %s); wait for it to finish, or use another --out-dir", name, dir, path)
	}
	return l, err
}

// openLockedJournal is openJournal once the lock is held. It reads and
// checks an existing journal and writes nothing (see flush).
func openLockedJournal(name string, cfg Config) (*journal, error) {
	path := filepath.Join(cfg.dir(), name+".trials.csv")
	side := filepath.Join(cfg.dir(), name+".trials.json")
	want := journalSettings{Format: journalFormat, Experiment: name, Seed: cfg.Seed, Mode: cfg.Mode.String(), Options: cfg.Options, Version: cfg.version(), Inputs: cfg.inputs, Trials: cfg.trials, Shard: cfg.Shard.String(), Selected: cfg.Methods}
	j := &journal{path: path, side: side, done: map[key]map[string]float64{}, settings: want, checksums: true, log: cfg.Log}
	exists, err := noLink(path)
	if err != nil {
		return nil, err
	}
	sideExists, err := noLink(side)
	if err != nil {
		return nil, err
	}
	if exists && cfg.Restart {
		j.create, j.restart, j.sideDirty = true, true, true
		return j, nil
	}
	if !exists {
		if sideExists {
			// Settings without a journal: replaced only when they are
			// this experiment's journal settings.
			if _, err := readSettings(side, name); err != nil {
				return nil, fmt.Errorf("%w; it is in the place of the settings of a new journal (move it, or use another --out-dir)", err)
			}
		}
		j.create, j.sideDirty = true, true
		return j, nil
	}
	if err := checkJournalMemory(cfg.Budget, path); err != nil {
		return nil, err
	}
	data, err := safeio.ReadFile(path, "trial journal", 0)
	if err != nil {
		return nil, err
	}
	data, legacy, err := legacyHeader(data, &want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if legacy {
		if sideExists {
			// A first-round journal had no settings file: whatever is in
			// its place is replaced only when it is this experiment's.
			if _, err := readSettings(side, name); err != nil {
				return nil, fmt.Errorf("%w; it is in the place of the settings of %s (move it, or use another --out-dir)", err, path)
			}
		}
		j.checksums = false
		j.rewrite, j.sideDirty = true, true
	} else {
		have, err := readSettings(side, name)
		if err != nil {
			return nil, fmt.Errorf("%w (it records the settings of %s; --restart starts over)", err, path)
		}
		if have.Format > journalFormat {
			return nil, fmt.Errorf("%s was written by a newer dstein (journal format %d; this one reads up to %d); use that dstein, another --out-dir, or --restart to start over", path, have.Format, journalFormat)
		}
		j.checksums = have.Format >= 3
		if !j.checksums {
			j.rewrite = true
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
		if err := sameInputs(have.Inputs, want.Inputs); err != nil {
			return nil, fmt.Errorf("%s: %w; use another --out-dir, or --restart to start over", path, err)
		}
		want.Methods, want.MergedFrom = have.Methods, have.MergedFrom
		if len(have.Inputs) > 0 {
			// Record every input seen, so that a later resume checks them all.
			merged := map[string]string{}
			for k, v := range have.Inputs {
				merged[k] = v
			}
			for k, v := range want.Inputs {
				merged[k] = v
			}
			want.Inputs = merged
		}
		j.settings = want
		if have.Format != want.Format || have.Trials != want.Trials || have.Version != want.Version || strings.Join(have.Selected, ",") != strings.Join(want.Selected, ",") || len(want.Inputs) != len(have.Inputs) {
			j.sideDirty = true
		}
	}
	keep, incomplete, err := j.read(data)
	if err != nil {
		return nil, fmt.Errorf("%s %w; fix or remove that line, or rerun with --restart to start over", path, err)
	}
	if keep < len(data) || incomplete {
		j.rewrite = true
	}
	return j, nil
}

// journalBytesPerByte is the memory that reading a journal takes per byte
// of the file: the file itself, and each trial's metrics in maps (11 bytes
// per byte for a journal of 100,000 trials of 7 metrics, measured with
// /usr/bin/time -v; 16 here).
const journalBytesPerByte = 16

// journalMemory estimates the memory of reading the journals at paths.
func journalMemory(paths ...string) float64 {
	var size int64
	for _, p := range paths {
		if info, err := os.Lstat(p); err == nil && info.Mode().IsRegular() {
			size += info.Size()
		}
	}
	return memlimit.Base + journalBytesPerByte*float64(size)
}

// checkJournalMemory refuses journals whose reading would not fit b.
func checkJournalMemory(b memlimit.Budget, paths ...string) error {
	what := "reading the trial journal " + paths[0]
	if len(paths) > 1 {
		what = fmt.Sprintf("reading the %d shards' journals", len(paths))
	}
	return b.Check(what, journalMemory(paths...))
}

// readSettings reads a journal's settings file and checks that it is
// experiment name's.
func readSettings(side, name string) (journalSettings, error) {
	var have journalSettings
	raw, err := safeio.ReadFile(side, "journal settings", 1<<20)
	if err != nil {
		return have, err
	}
	if err := strictjson.Unmarshal(raw, &have); err != nil {
		return have, fmt.Errorf("%s: %w (--restart starts over)", side, err)
	}
	if have.Experiment != name {
		return have, fmt.Errorf("%s holds the settings of experiment %q, not %s", side, have.Experiment, name)
	}
	if have.Options == nil {
		have.Options = map[string]float64{}
	}
	return have, nil
}

// flush does the work that opening deferred, before the first trial is
// appended: sets an old journal aside (--restart), creates the files or
// rewrites the rows read in today's form, writes the settings, and opens
// the journal for appending.
func (j *journal) flush() error {
	if j.f != nil {
		return nil
	}
	if j.restart {
		moved, err := safeio.SetAside(j.path, j.side)
		if err != nil {
			return err
		}
		j.restart = false
		j.logf("the old journal is set aside as %s", strings.Join(moved, " and "))
	}
	if j.sideDirty || j.create {
		if err := writeSettings(j.side, j.settings); err != nil {
			return err
		}
		j.sideDirty = false
	}
	switch {
	case j.create:
		f, err := os.OpenFile(j.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			return fmt.Errorf("creating the trial journal: %w", err)
		}
		if _, err := fmt.Fprintln(f, journalColumns); err != nil {
			f.Close()
			return fmt.Errorf("writing %s: %w", j.path, err)
		}
		j.create = false
		j.f, j.w = f, csv.NewWriter(f)
		return nil
	case j.rewrite:
		if err := writeJournal(j.path, j.order, j.done); err != nil {
			return err
		}
		j.rewrite = false
	}
	f, err := os.OpenFile(j.path, os.O_APPEND|os.O_WRONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("opening the trial journal: %w", err)
	}
	j.f, j.w = f, csv.NewWriter(f)
	return nil
}

// logf writes a note of the journal's to the run's log.
func (j *journal) logf(format string, a ...any) {
	if j.log != nil {
		fmt.Fprintf(j.log, format+"\n", a...)
	}
}

// writeJournal replaces path with the trials of order, in today's form.
func writeJournal(path string, order []key, done map[key]map[string]float64) error {
	return safeio.Rewrite(path, journalFill(order, done))
}

// journalFill writes the trials of order as a journal in today's form.
func journalFill(order []key, done map[key]map[string]float64) func(*bufio.Writer) error {
	return func(b *bufio.Writer) error {
		if _, err := b.WriteString(journalColumns + "\n"); err != nil {
			return err
		}
		w := csv.NewWriter(b)
		for _, k := range order {
			if err := writeTrialRows(w, k, done[k]); err != nil {
				return err
			}
		}
		w.Flush()
		return w.Error()
	}
}

// settingsFill writes journal settings.
func settingsFill(s journalSettings) func(*bufio.Writer) error {
	if s.Options == nil {
		s.Options = map[string]float64{}
	}
	s.Format = journalFormat
	return func(w *bufio.Writer) error { return report.WriteJSON(w, s) }
}

// dir is the directory of the journal.
func (c Config) dir() string {
	if c.journalDir != "" {
		return c.journalDir
	}
	return c.Out
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
		if sameSettings(had, now) || sameSettings(renamedPresets(had, now), now) {
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
	if j.f == nil {
		j.sideDirty = true // written with the first trial
		return nil
	}
	return writeSettings(j.side, j.settings)
}

// renamedPresets returns a recorded method's settings with the presets
// that were renamed under their present names: journals written before
// round three's switch of the default recorded "preset":"default" and a
// pipeline named "default" for the preset now called "tempering" (the
// same stages and chains, which sameSettings still compares; it does not
// compare the rewritten description), so that their trials still resume
// and merge. The record itself is left as it was written.
func renamedPresets(had, now []byte) []byte {
	var h, n map[string]any
	if json.Unmarshal(had, &h) != nil || json.Unmarshal(now, &n) != nil || h["preset"] != "default" || n["preset"] != "tempering" {
		return had
	}
	h["preset"] = "tempering"
	hp, ok1 := h["pipeline"].(map[string]any)
	np, ok2 := n["pipeline"].(map[string]any)
	if ok1 && ok2 && hp["name"] == "default" && np["name"] == "tempering" {
		hp["name"] = "tempering"
	}
	b, err := json.Marshal(h)
	if err != nil {
		return had
	}
	return b
}

// sameSettings reports whether two recorded settings (JSON) are the same:
// equal values, where a key that only one side has counts as equal when its
// value there is empty ("", 0, false, null, [] or {}), the zero value that
// means "the default" in dstein's settings, so that a field added to a
// record later does not invalidate the journals written before. A
// "description" (a pipeline's prose, rewritten as the docs are) is not
// compared.
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
			if k == "description" {
				continue // a pipeline's prose, rewritten with the docs; never a result
			}
			if w, ok := my[k]; ok {
				if !sameValue(v, w) {
					return false
				}
			} else if !emptyValue(v) {
				return false
			}
		}
		for k, w := range my {
			if _, ok := mx[k]; !ok && !emptyValue(w) && k != "description" {
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

// otherMethods lists, sorted, the methods the journal holds trials of that
// are not in used.
func (j *journal) otherMethods(used map[string]bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range j.order {
		if !used[k.method] && !seen[k.method] {
			seen[k.method] = true
			out = append(out, k.method)
		}
	}
	sort.Strings(out)
	return out
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
	return safeio.Rewrite(path, settingsFill(s))
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
// returns the length of its prefix that ends with the last complete line,
// and whether it holds rows of trials that were never closed.
func (j *journal) read(data []byte) (keep int, incomplete bool, err error) {
	keep = len(data)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		// The last row was cut short by a crash: drop it.
		keep = bytes.LastIndexByte(data, '\n') + 1
	}
	body := data[:keep]
	first, body, _ := bytes.Cut(body, []byte("\n"))
	if strings.TrimSuffix(string(first), "\r") != journalColumns {
		return 0, false, fmt.Errorf("line 1: want the columns %s", journalColumns)
	}
	type open struct {
		vals map[string]float64
		sum  uint32
	}
	pending := map[key]*open{}
	// Methods and metrics repeat on every row: one string each.
	names := map[string]string{}
	intern := func(s string) string {
		if v, ok := names[s]; ok {
			return v
		}
		names[s] = s
		return s
	}
	for no := 2; len(body) > 0; no++ {
		raw, rest, _ := bytes.Cut(body, []byte("\n"))
		body = rest
		text := strings.TrimSuffix(string(raw), "\r")
		if text == "" {
			if len(body) == 0 {
				break // the final newline
			}
			return 0, false, fmt.Errorf("line %d: empty line", no)
		}
		var rec []string
		if strings.IndexByte(text, '"') < 0 {
			rec = strings.Split(text, ",") // what the CSV reader gives a row without quotes
		} else {
			var err error
			rec, err = csv.NewReader(strings.NewReader(text)).Read()
			if err != nil && !errors.Is(err, io.EOF) {
				return 0, false, fmt.Errorf("line %d: %v", no, err)
			}
		}
		if len(rec) != 5 {
			return 0, false, fmt.Errorf("line %d: %d fields, want 5 (%s)", no, len(rec), journalColumns)
		}
		x, err := strconv.ParseFloat(rec[1], 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, false, fmt.Errorf("line %d: x = %q is not a finite number", no, rec[1])
		}
		t, err := strconv.Atoi(rec[2])
		if err != nil || t < 0 || t >= 1<<30 {
			return 0, false, fmt.Errorf("line %d: trial %q is not a whole number ≥ 0", no, rec[2])
		}
		if rec[0] == "" || rec[3] == "" {
			return 0, false, fmt.Errorf("line %d: empty method or metric", no)
		}
		k := key{intern(rec[0]), x, t}
		if _, dup := j.done[k]; dup {
			return 0, false, fmt.Errorf("line %d: trial %d of %s at %s is recorded twice", no, t, k.method, rec[1])
		}
		p := pending[k]
		if p == nil {
			p = &open{vals: map[string]float64{}}
			pending[k] = p
		}
		if rec[3] == doneMarker {
			if j.checksums {
				sum, err := strconv.ParseUint(rec[4], 10, 32)
				if err != nil {
					return 0, false, fmt.Errorf("line %d: the checksum %q of trial %d of %s at %s is not a whole number below 2³²", no, rec[4], t, k.method, rec[1])
				}
				if uint32(sum) != p.sum {
					return 0, false, fmt.Errorf("line %d: trial %d of %s at %s does not match its checksum (the rows before this line were changed or damaged after they were written)", no, t, k.method, rec[1])
				}
			} else if rec[4] != "1" {
				return 0, false, fmt.Errorf("line %d: the closing row of trial %d of %s has value %q, want 1", no, t, k.method, rec[4])
			}
			j.done[k] = p.vals
			j.order = append(j.order, k)
			delete(pending, k)
			continue
		}
		v, err := strconv.ParseFloat(rec[4], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, false, fmt.Errorf("line %d: value %q of metric %s is not a finite number", no, rec[4], rec[3])
		}
		if err := checkMetric(rec[3], v); err != nil {
			return 0, false, fmt.Errorf("line %d: %w", no, err)
		}
		p.vals[intern(rec[3])] = v
		p.sum = rowSum(p.sum, text)
	}
	return keep, len(pending) > 0, nil
}

// castagnoli is the CRC-32C table of the trials' checksums.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// rowSum adds one row (its text without the line end) to a trial's
// checksum: the CRC-32C of the rows, each followed by LF.
func rowSum(sum uint32, text string) uint32 {
	sum = crc32.Update(sum, castagnoli, []byte(text))
	return crc32.Update(sum, castagnoli, []byte{'\n'})
}

// record appends one trial's metrics (in sorted metric order) and syncs.
func (j *journal) record(k key, vals map[string]float64) error {
	if err := j.flush(); err != nil {
		return err
	}
	if err := writeTrialRows(j.w, k, vals); err != nil {
		return err
	}
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
// then the row that closes it with their checksum.
func writeTrialRows(w *csv.Writer, k key, vals map[string]float64) error {
	names := make([]string, 0, len(vals))
	for m := range vals {
		names = append(names, m)
	}
	sort.Strings(names)
	var sum uint32
	var line bytes.Buffer
	lw := csv.NewWriter(&line)
	for _, m := range names {
		rec := []string{k.method, report.FormatValue(k.x), strconv.Itoa(k.trial), m, report.FormatValue(vals[m])}
		line.Reset()
		lw.Write(rec)
		lw.Flush()
		sum = rowSum(sum, strings.TrimSuffix(line.String(), "\n"))
		if err := w.Write(rec); err != nil {
			return err
		}
	}
	return w.Write([]string{k.method, report.FormatValue(k.x), strconv.Itoa(k.trial), doneMarker, strconv.FormatUint(uint64(sum), 10)})
}

// finish adds to b, the batch that writes a finished run's outputs, the
// work that opening deferred and no recorded trial has done: the settings
// (methods described, the trials' count, the version) and an older
// journal's conversion. A journal that does not exist yet stays so.
func (j *journal) finish(b *safeio.Batch) error {
	if j.create || j.f != nil {
		return nil
	}
	if j.sideDirty {
		if err := b.Rewrite(j.side, settingsFill(j.settings)); err != nil {
			return err
		}
	}
	if j.rewrite {
		if err := b.Rewrite(j.path, journalFill(j.order, j.done)); err != nil {
			return err
		}
	}
	j.sideDirty, j.rewrite = false, false
	return nil
}

// close closes the journal and gives up its lock (removing the lock
// file). After a run that ended well (ok), the work that opening deferred
// is done first (see flush): a resume that computed nothing still records
// its settings and converts an older journal.
func (j *journal) close(ok bool) error {
	var err error
	if ok && !j.create && (j.rewrite || j.sideDirty) {
		err = j.flush()
	}
	if j.f != nil {
		if cerr := j.f.Close(); err == nil {
			err = cerr
		}
	}
	j.lock.Unlock()
	return err
}

// checkMetric refuses values outside a metric's range: errors, times,
// counts and sizes are ≥ 0; rates, probabilities, p-values and accuracies
// lie in [0, 1]. Metrics not listed here (a signed statistic, an unbiased
// MMD²) only need to be finite.
func checkMetric(name string, v float64) error {
	unit := name == "reject" || name == "p_value" || name == "ks_uniform" || name == "tv" || name == "max_error" || name == "energy_tv" || name == "mode_mass" ||
		strings.HasPrefix(name, "accuracy") || name == "member_accuracy" || strings.HasPrefix(name, "freq:")
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
