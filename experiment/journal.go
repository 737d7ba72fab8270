package experiment

import (
	"bufio"
	"bytes"
	"encoding/csv"
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
// A journal may also be packed, NAME.trials.csv.gz: the same bytes
// compressed with gzip, which dstein reproduce leaves once a result is
// finished (Config.Pack), as the journals committed under docs/results are
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

// doneMarker is the metric of the row that closes a trial's record.
const doneMarker = "_done"

const journalColumns = "method,x,trial,metric,value"

// journalFormat is the version of the journal's layout: 3 has a checksum
// in each trial's closing row, 2 had the value 1 there.
const journalFormat = 3

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
	// packed: the rows were read from the packed journal (path + ".gz")
	// and the plain one does not exist yet; pack: replace the packed
	// journal with the plain one when the run ends well (Config.Pack).
	packed, pack bool
	// log receives the journal's notes (may be nil).
	log io.Writer
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
	want := journalSettings{Format: journalFormat, Experiment: name, Seed: cfg.Seed, Mode: cfg.Mode.String(), Options: cfg.options, Version: cfg.version(), Inputs: cfg.inputs, Trials: cfg.trials, Shard: cfg.Shard.String(), Selected: cfg.Methods}
	j := &journal{path: path, side: side, done: map[key]map[string]float64{}, settings: want, checksums: true, log: cfg.Log, pack: cfg.Pack}
	exists, err := noLink(path)
	if err != nil {
		return nil, err
	}
	packedExists, err := noLink(path + packedSuffix)
	if err != nil {
		return nil, err
	}
	sideExists, err := noLink(side)
	if err != nil {
		return nil, err
	}
	if (exists || packedExists) && cfg.Restart {
		j.create, j.restart, j.sideDirty = true, true, true
		return j, nil
	}
	if exists && packedExists && cfg.Pack {
		// The run will replace the packed journal with the plain one:
		// only when it is a journal (a file the user put there is kept).
		if err := checkPacked(path + packedSuffix); err != nil {
			return nil, err
		}
	}
	j.packed = !exists && packedExists
	exists = exists || packedExists
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
	data, err := readJournalFile(path)
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

// flush does the work that opening deferred, before the first trial is
// appended: sets an old journal aside (--restart), creates the files or
// rewrites the rows read in today's form, writes the settings, and opens
// the journal for appending.
func (j *journal) flush() error {
	if j.f != nil {
		return nil
	}
	if j.restart {
		moved, err := safeio.SetAside(j.path, j.path+packedSuffix, j.side)
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
	case j.rewrite || j.packed:
		// The rows read, in today's form; a packed journal's are unpacked
		// into the plain journal, which new trials are appended to.
		if err := writeJournal(j.path, j.order, j.done); err != nil {
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

// dir is the directory of the journal.
func (c Config) dir() string {
	if c.journalDir != "" {
		return c.journalDir
	}
	return c.Out
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
