package ensemble

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/dstein/dstein/bnn"
	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/memlimit"
)

// CheckpointName is the checkpoint file inside Options.Dir.
const CheckpointName = "checkpoint.gob"

// checkpointVersion numbers the checkpoint's format and meaning. Version 2
// (optim's Adam, svgd's direction, one random stream per purpose) continues
// runs differently from the unnumbered version 0 before it, which is
// refused.
const checkpointVersion = 2

// adamState is Adam's moments of one parameter array.
type adamState struct {
	M, V []float32
}

// checkpoint is everything needed to continue a run after a unit of work (a
// GF-SVGD epoch, or one member's epoch for the sequential methods).
type checkpoint struct {
	Version int
	Config  Config
	Units   int
	Members []bnn.State
	// Adam[k][i] are the moments of parameter i of network k.
	Adam          [][]adamState
	Alphas        []float64
	SampleWeights []float64
	History       []EpochLog
	Seconds       float64
	// InputMean and InputStd are the training set's per-channel mean and
	// standard deviation of pixel/255 that standardised the inputs (nil in
	// checkpoints written before they were kept), for bnn export.
	InputMean, InputStd []float64
}

// save writes the checkpoint atomically.
func (t *trainer) save() error {
	if t.opt.Dir == "" {
		return nil
	}
	t.cp.Members = t.cp.Members[:0]
	t.cp.Adam = t.cp.Adam[:0]
	for k, n := range t.nets {
		t.cp.Members = append(t.cp.Members, n.State())
		a := make([]adamState, len(t.adams[k]))
		for i, s := range t.adams[k] {
			a[i] = adamState{M: s.M, V: s.V}
		}
		t.cp.Adam = append(t.cp.Adam, a)
	}
	err := safeio.Rewrite(filepath.Join(t.opt.Dir, CheckpointName), func(w *bufio.Writer) error {
		h := sha256.New()
		if err := gob.NewEncoder(io.MultiWriter(w, h)).Encode(&t.cp); err != nil {
			return err
		}
		_, err := w.Write(h.Sum([]byte(checksumMagic)))
		return err
	})
	// The states are copies, needed only while they are written.
	t.cp.Members, t.cp.Adam = nil, nil
	return err
}

// checksumMagic opens the checkpoint's trailer, which ends the file: the
// magic, then the SHA-256 of the gob message before it (32 bytes). A byte
// changed anywhere in the message is then found before the checkpoint is
// used (gob decoded such files into other weights without a word).
// Checkpoints written before the trailer have none, and are read as they
// are.
const checksumMagic = "dstein-sha256:\x00\n"

// trailerLen is the trailer's length.
const trailerLen = len(checksumMagic) + sha256.Size

// verifyCheckpoint checks the trailer of the checkpoint f of size bytes
// and returns the length of its gob message: size less the trailer, or
// size for a checkpoint without one. It reads at offsets only, so that a
// reader of f from its start is not moved.
func verifyCheckpoint(f io.ReaderAt, path string, size int64) (int64, error) {
	if size < int64(trailerLen) {
		return size, nil
	}
	tr := make([]byte, trailerLen)
	if _, err := f.ReadAt(tr, size-int64(trailerLen)); err != nil {
		return 0, err
	}
	if string(tr[:len(checksumMagic)]) != checksumMagic {
		return size, nil
	}
	n := size - int64(trailerLen)
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, n)); err != nil {
		return 0, err
	}
	if string(h.Sum(nil)) != string(tr[len(checksumMagic):]) {
		return 0, fmt.Errorf("%s is damaged: its checksum does not match its content (a byte changed since dstein wrote it); start again in another --out-dir, or from a copy", path)
	}
	return n, nil
}

// readCheckpoint reads dir's checkpoint. It reads only a regular file: a
// symbolic link in its place is refused, not followed. A missing checkpoint
// gives an error that matches os.ErrNotExist.
// A checkpoint larger than max bytes (max > 0) is refused before it is
// decoded.
func readCheckpoint(dir string, max int64) (checkpoint, error) {
	var cp checkpoint
	path := filepath.Join(dir, CheckpointName)
	fi, err := os.Lstat(path)
	if err != nil {
		return cp, err
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return cp, fmt.Errorf("%s is a symbolic link; dstein reads a checkpoint only from a regular file in the output directory, and does not follow links", path)
	case !fi.Mode().IsRegular():
		return cp, fmt.Errorf("%s is not a regular file (%v); it cannot be a dstein checkpoint", path, fi.Mode().Type())
	case max > 0 && fi.Size() > max:
		return cp, fmt.Errorf("%s is %s, more than a checkpoint of this run's settings can be (%s): it is damaged or another run's (other settings, such as another --arch, make checkpoints of other sizes); start again in another --out-dir, or with that run's settings", path, memlimit.Format(fi.Size()), memlimit.Format(max))
	}
	f, err := os.Open(path)
	if err != nil {
		return cp, err
	}
	defer f.Close()
	// The file opened must be the one examined, not a link put in its place
	// since.
	if of, err := f.Stat(); err != nil {
		return cp, err
	} else if !os.SameFile(fi, of) {
		return cp, fmt.Errorf("%s was replaced while it was being opened", path)
	}
	n, err := verifyCheckpoint(f, path, fi.Size())
	if err != nil {
		return cp, err
	}
	// Reading at most the message's size: gob's buffer of the message,
	// read in chunks as its length prefix claims them, stays within the
	// file.
	if err := gob.NewDecoder(bufio.NewReader(io.LimitReader(f, n))).Decode(&cp); err != nil {
		return cp, fmt.Errorf("%s is not a dstein checkpoint or is damaged: %w", path, err)
	}
	cp.Config = decodedConfig(cp.Config)
	return cp, nil
}

// decodedConfig restores what gob leaves out of a checkpoint's settings: a
// pointer to a zero value. A checkpoint's settings always hold their
// defaults, so a missing regulariser was 0 (--regularizer 0 could not be
// resumed, and bnn export would have shown the default 1e-6).
func decodedConfig(c Config) Config {
	if c.Regularizer == nil {
		c.Regularizer = new(0.0)
	}
	return c
}

// load reads the checkpoint, if any, and restores the networks and their
// optimizers.
func (t *trainer) load() (bool, error) {
	path := filepath.Join(t.opt.Dir, CheckpointName)
	f, err := bnn.Measure(t.cfg.Arch, t.nets[0].Input(), t.nets[0].Classes())
	if err != nil {
		return false, err
	}
	cp, err := readCheckpoint(t.opt.Dir, CheckpointBytes(t.cfg, f, t.nTrain, t.totalUnits()))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if cp.Version != checkpointVersion {
		return false, fmt.Errorf("%s was written by another version of dstein (checkpoint format %d; this one reads %d), whose training draws and computes differently, so resuming it would match neither version: start again in another --out-dir", path, cp.Version, checkpointVersion)
	}
	if !reflect.DeepEqual(cp.Config, t.cfg) {
		return false, fmt.Errorf("%s was written by a run with different settings (%s): use another --out-dir or the same settings", path, configDiff(cp.Config, t.cfg))
	}
	if len(cp.Members) != len(t.nets) || len(cp.Adam) != len(t.nets) {
		return false, fmt.Errorf("%s holds %d networks, want %d", path, len(cp.Members), len(t.nets))
	}
	for k, n := range t.nets {
		if len(cp.Adam[k]) != len(t.adams[k]) {
			return false, fmt.Errorf("%s: network %d has %d optimizer states, want %d", path, k+1, len(cp.Adam[k]), len(t.adams[k]))
		}
		for i, a := range t.adams[k] {
			if len(cp.Adam[k][i].M) != len(a.M) || len(cp.Adam[k][i].V) != len(a.V) {
				return false, fmt.Errorf("%s: network %d optimizer state %d has the wrong size", path, k+1, i)
			}
		}
		if err := n.SetState(cp.Members[k]); err != nil {
			return false, fmt.Errorf("%s: network %d: %w", path, k+1, err)
		}
		for i, a := range t.adams[k] {
			copy(a.M, cp.Adam[k][i].M)
			copy(a.V, cp.Adam[k][i].V)
		}
	}
	if t.cfg.Spec().Boosted && len(cp.SampleWeights) != t.nTrain {
		return false, fmt.Errorf("%s: %d boosting weights, want %d", path, len(cp.SampleWeights), t.nTrain)
	}
	if cp.Units < 0 || cp.Units > t.totalUnits() {
		return false, fmt.Errorf("%s: %d units completed, want 0 to %d", path, cp.Units, t.totalUnits())
	}
	if cp.InputMean == nil {
		cp.InputMean, cp.InputStd = t.cp.InputMean, t.cp.InputStd
	}
	t.cp = cp
	// The decoded states are in the networks and optimizers now.
	t.cp.Members, t.cp.Adam = nil, nil
	return true, nil
}

// digest is the SHA-256 of every network's parameters and running
// statistics, in order.
func digest(nets []*bnn.Net) string {
	h := sha256.New()
	for _, n := range nets {
		st := n.State()
		for _, p := range st.Params {
			binary.Write(h, binary.LittleEndian, p)
		}
		for i := range st.Mean {
			binary.Write(h, binary.LittleEndian, st.Mean[i])
			binary.Write(h, binary.LittleEndian, st.Var[i])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// configDiff names the settings in which the checkpoint's (was) and this
// run's (now) differ: "Epochs 6 in the checkpoint, 8 now".
func configDiff(was, now Config) string {
	a, b := reflect.ValueOf(was), reflect.ValueOf(now)
	var parts []string
	for i := range a.NumField() {
		if x, y := a.Field(i).Interface(), b.Field(i).Interface(); !reflect.DeepEqual(x, y) {
			parts = append(parts, fmt.Sprintf("%s %v in the checkpoint, %v now", settingFlag(a.Type().Field(i)), deref(a.Field(i)), deref(b.Field(i))))
		}
	}
	return strings.Join(parts, "; ")
}

// settingFlag names a Config field by the flag of dstein bnn train that
// sets it: its JSON name with hyphens (--train-limit), --lr for the
// learning rate.
func settingFlag(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	if name == "learning_rate" {
		return "--lr"
	}
	return "--" + strings.ReplaceAll(name, "_", "-")
}

// deref is a setting's value for a message: what a pointer points to (not
// its address), "unset" for nil.
func deref(v reflect.Value) any {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "unset"
		}
		return v.Elem().Interface()
	}
	return v.Interface()
}
