package journal

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/memlimit"
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
// an option the journal does not Record had its default) are the same,
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
// A journal may also be packed, NAME.trials.csv.gz: the same bytes
// compressed with gzip, which dstein reproduce leaves once a result is
// finished (Spec.Pack), as the journals committed under docs/results are
// (a quarter of the size). It is read where NAME.trials.csv is absent; a
// run that records new trials in it unpacks it first (the plain journal is
// then the one that counts, until a packing run ends well and replaces the
// packed one with it).
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

// DoneMarker is the metric of the row that closes a trial's Record.
const DoneMarker = "_done"

const Columns = "method,x,trial,metric,value"

// FormatVersion is the version of the journal's layout: 3 has a checksum
// in each trial's closing row, 2 had the value 1 there.
const FormatVersion = 3

// Key names one unit of work: one method at one setting x in one trial.
type Key struct {
	Method string
	X      float64
	Trial  int
}

// Journal holds finished trials and appends new ones.
type Journal struct {
	path string
	side string
	// settings are those recorded in the sidecar (with Methods as found
	// there and added since).
	settings Settings
	done     map[Key]map[string]float64
	order    []Key
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
	// packed: the rows were read from the packed journal (path + ".gz")
	// and the plain one does not exist yet; pack: replace the packed
	// journal with the plain one when the run ends well (Spec.Pack).
	packed, pack bool
	// readPath is the packed journal the rows were read from ("" when
	// they came from the plain one, or none).
	readPath string
	// log receives the journal's notes (may be nil).
	log io.Writer
	// selectOnly: Spec.SelectOnly.
	selectOnly map[string]bool
}

// Spec names the journal to open and gives the settings of the run that
// opens it.
type Spec struct {
	// Dir is the directory of NAME.trials.csv and NAME.trials.json;
	// Name the experiment.
	Dir, Name string
	// Want are the run's settings (Open sets Format and Experiment; an
	// empty Version is recorded as "devel").
	Want Settings
	// Defaults are the values of options that a journal does not Record
	// (one added to the experiment after the journal was written).
	Defaults map[string]float64
	// SelectOnly names options that choose which settings run without
	// changing any trial's result (such as nmax): a resume may change
	// them.
	SelectOnly map[string]bool
	// Restart sets an existing journal and its settings aside instead of
	// resuming it; Pack leaves the journal packed when the run ends well.
	Restart, Pack bool
	// Budget bounds the memory of reading the journal.
	Budget memlimit.Budget
	// Log receives the journal's notes (may be nil).
	Log io.Writer
}

// NoLink refuses a path that is a symbolic link or not a regular file.
func NoLink(path string) (exists bool, err error) {
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

// Open takes the output directory's lock for the experiment (so
// that two runs never append to one journal), reads DIR/NAME.trials.csv if
// it exists (refusing one made with settings that change results, or a
// corrupt one) and opens it for appending. The lock is held until Close.
func Open(spec Spec) (*Journal, error) {
	lock, err := Lock(spec.Dir, spec.Name)
	if err != nil {
		return nil, err
	}
	j, err := openLocked(spec)
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	j.lock = lock
	return j, nil
}

// Lock takes an exclusive lock on DIR/NAME.trials.lock
// (safeio.TryLock: flock, not waiting, the file removed when the lock is
// given up). A second run of the same experiment into the same directory
// is refused instead of interleaving its rows with the first's.
func Lock(dir, name string) (*safeio.Lock, error) {
	path := filepath.Join(dir, name+".trials.lock")
	l, err := safeio.TryLock(path)
	var busy *safeio.Busy
	if errors.As(err, &busy) {
		return nil, fmt.Errorf("another dstein is running experiment %s in %s (it holds %s); wait for it to finish, or use another --out-dir", name, dir, path)
	}
	return l, err
}

// openLocked is Open once the lock is held. It reads and
// checks an existing journal and writes nothing (see flush).
func openLocked(spec Spec) (*Journal, error) {
	name := spec.Name
	path := filepath.Join(spec.Dir, name+".trials.csv")
	side := filepath.Join(spec.Dir, name+".trials.json")
	want := spec.Want
	want.Format, want.Experiment = FormatVersion, name
	if want.Version == "" {
		want.Version = "devel"
	}
	j := &Journal{path: path, side: side, done: map[Key]map[string]float64{}, settings: want, checksums: true, log: spec.Log, pack: spec.Pack, selectOnly: spec.SelectOnly}
	exists, err := NoLink(path)
	if err != nil {
		return nil, err
	}
	packedExists, err := NoLink(path + PackedSuffix)
	if err != nil {
		return nil, err
	}
	sideExists, err := NoLink(side)
	if err != nil {
		return nil, err
	}
	if (exists || packedExists) && spec.Restart {
		j.create, j.restart, j.sideDirty = true, true, true
		return j, nil
	}
	if exists && packedExists && spec.Pack {
		// The run will replace the packed journal with the plain one:
		// only when it is a journal (a file the user put there is kept).
		if err := CheckPacked(path + PackedSuffix); err != nil {
			return nil, err
		}
	}
	j.packed = !exists && packedExists
	if j.packed {
		j.readPath = path + PackedSuffix
	}
	exists = exists || packedExists
	if !exists {
		if sideExists {
			// Settings without a journal: replaced only when they are
			// this experiment's journal settings.
			if _, err := ReadSettings(side, name); err != nil {
				return nil, fmt.Errorf("%w; it is in the place of the settings of a new journal (move it, or use another --out-dir)", err)
			}
		}
		j.create, j.sideDirty = true, true
		return j, nil
	}
	if err := CheckMemory(spec.Budget, path); err != nil {
		return nil, err
	}
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	data, legacy, err := legacyHeader(data, &want, spec.SelectOnly)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if legacy {
		if sideExists {
			// A first-round journal had no settings file: whatever is in
			// its place is replaced only when it is this experiment's.
			if _, err := ReadSettings(side, name); err != nil {
				return nil, fmt.Errorf("%w; it is in the place of the settings of %s (move it, or use another --out-dir)", err, path)
			}
		}
		j.checksums = false
		j.rewrite, j.sideDirty = true, true
	} else {
		have, err := ReadSettings(side, name)
		if err != nil {
			return nil, fmt.Errorf("%w (it records the settings of %s; --restart starts over)", err, path)
		}
		if have.Format > FormatVersion {
			return nil, fmt.Errorf("%s was written by a newer dstein (journal format %d; this one reads up to %d); use that dstein, another --out-dir, or --restart to start over", path, have.Format, FormatVersion)
		}
		j.checksums = have.Format >= 3
		if !j.checksums {
			j.rewrite = true
		}
		for k, v := range spec.Defaults {
			if _, ok := have.Options[k]; !ok {
				have.Options[k] = v
			}
		}
		if a, b := ResultSettings(have, spec.SelectOnly), ResultSettings(want, spec.SelectOnly); a != b {
			return nil, fmt.Errorf("%s was written with other settings (%s; now %s); use another --out-dir, or --restart to start over", path, a, b)
		}
		if have.Shard != want.Shard {
			return nil, fmt.Errorf("%s holds %s; now %s; use the shard's own --out-dir", path, ShardWords(have.Shard), ShardWords(want.Shard))
		}
		if err := SameInputs(have.Inputs, want.Inputs); err != nil {
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

// flush does the work that opening deferred, before the first trial is
// appended: sets an old journal aside (--restart), creates the files or
// rewrites the rows read in today's form, writes the settings, and opens
// the journal for appending.
func (j *Journal) flush() error {
	if j.f != nil {
		return nil
	}
	if j.restart {
		moved, err := safeio.SetAside(j.path, j.path+PackedSuffix, j.side)
		if err != nil {
			return err
		}
		j.restart = false
		j.logf("the old journal is set aside as %s", strings.Join(moved, " and "))
	}
	if j.sideDirty || j.create {
		if err := WriteSettings(j.side, j.settings); err != nil {
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
		if _, err := fmt.Fprintln(f, Columns); err != nil {
			f.Close()
			return fmt.Errorf("writing %s: %w", j.path, err)
		}
		j.create = false
		j.f, j.w = f, csv.NewWriter(f)
		return nil
	case j.rewrite || j.packed:
		// The rows read, in today's form; a packed journal's are unpacked
		// into the plain journal, which new trials are appended to.
		if err := Write(j.path, j.order, j.done); err != nil {
			return err
		}
		j.rewrite, j.packed = false, false
	}
	f, err := os.OpenFile(j.path, os.O_APPEND|os.O_WRONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("opening the trial journal: %w", err)
	}
	j.f, j.w = f, csv.NewWriter(f)
	return nil
}

// logf writes a note of the journal's to the run's log.
func (j *Journal) logf(format string, a ...any) {
	if j.log != nil {
		fmt.Fprintf(j.log, format+"\n", a...)
	}
}

// Write replaces path with the trials of order, in today's form.
func Write(path string, order []Key, done map[Key]map[string]float64) error {
	return safeio.Rewrite(path, Fill(order, done))
}

// Fill writes the trials of order as a journal in today's form.
func Fill(order []Key, done map[Key]map[string]float64) func(*bufio.Writer) error {
	return func(b *bufio.Writer) error {
		if _, err := b.WriteString(Columns + "\n"); err != nil {
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

// Record appends one trial's metrics (in sorted metric order) and syncs.
func (j *Journal) Record(k Key, vals map[string]float64) error {
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
func writeTrialRows(w *csv.Writer, k Key, vals map[string]float64) error {
	names := make([]string, 0, len(vals))
	for m := range vals {
		names = append(names, m)
	}
	sort.Strings(names)
	var sum uint32
	var line bytes.Buffer
	lw := csv.NewWriter(&line)
	for _, m := range names {
		rec := []string{k.Method, report.FormatValue(k.X), strconv.Itoa(k.Trial), m, report.FormatValue(vals[m])}
		line.Reset()
		lw.Write(rec)
		lw.Flush()
		sum = RowSum(sum, strings.TrimSuffix(line.String(), "\n"))
		if err := w.Write(rec); err != nil {
			return err
		}
	}
	return w.Write([]string{k.Method, report.FormatValue(k.X), strconv.Itoa(k.Trial), DoneMarker, strconv.FormatUint(uint64(sum), 10)})
}

// Finish adds to b, the batch that writes a finished run's outputs, the
// work that opening deferred and no recorded trial has done: the settings
// (methods described, the trials' count, the version) and an older
// journal's conversion. A journal that does not exist yet stays so.
func (j *Journal) Finish(b *safeio.Batch) error {
	if j.create || j.f != nil {
		return nil
	}
	if j.sideDirty {
		if err := b.Rewrite(j.side, SettingsFill(j.settings)); err != nil {
			return err
		}
	}
	if j.rewrite {
		if err := b.Rewrite(j.path, Fill(j.order, j.done)); err != nil {
			return err
		}
	}
	j.sideDirty, j.rewrite = false, false
	return nil
}

// Close closes the journal and gives up its lock (removing the lock
// file). After a run that ended well (ok), the work that opening deferred
// is done first (see flush): a resume that computed nothing still records
// its settings and converts an older journal.
func (j *Journal) Close(ok bool) error {
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

// Path is the journal's file (NAME.trials.csv).
func (j *Journal) Path() string { return j.path }

// Done returns the metrics of unit k when the journal holds it.
func (j *Journal) Done(k Key) (map[string]float64, bool) {
	v, ok := j.done[k]
	return v, ok
}

// Order lists the units the journal holds in the order they were
// recorded (the caller must not change it).
func (j *Journal) Order() []Key { return j.order }

// MethodSettings is the recorded settings of method (nil when none are).
func (j *Journal) MethodSettings(method string) json.RawMessage { return j.settings.Methods[method] }
