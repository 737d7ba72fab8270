package ensemble

import (
	"bufio"
	"encoding/gob"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/dstein/dstein/bnn"
	"github.com/dstein/dstein/dataset"
	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/memlimit"
)

// Trained is the ensemble a checkpoint holds: the networks at the end of
// its last completed unit of work, for export.
type Trained struct {
	// Path is the checkpoint file read.
	Path   string
	Config Config
	// Units of work (epochs of all networks for GF-SVGD, one member's
	// epochs for the sequential methods) completed, of TotalUnits.
	Units, TotalUnits int
	Input             bnn.Shape
	Classes           int
	Nets              []*bnn.Net
	// Alphas are BENN's boosting coefficients of the members trained so
	// far (nil for the other methods).
	Alphas []float64
	// WeightsSHA256 is the digest that result.json's weights_sha256 holds
	// for these networks.
	WeightsSHA256 string
	// InputMean and InputStd standardised the inputs (per channel, of
	// pixel/255); nil for checkpoints written before they were kept.
	InputMean, InputStd []float64
}

// Complete reports whether the checkpoint is of a finished run.
func (t *Trained) Complete() bool { return t.Units == t.TotalUnits }

// LoadTrained reads the checkpoint at path (a checkpoint file, or a
// training run's --out-dir holding CheckpointName) and rebuilds its
// networks. Checkpoints of any format version up to this one's hold the
// same weights and are read.
func LoadTrained(path string) (*Trained, error) {
	return LoadTrainedWithin(path, memlimit.Budget{}, "reading", 0)
}

// CheckpointPath returns the checkpoint file that path names: path itself,
// or CheckpointName inside it when it is a directory.
func CheckpointPath(path string) string {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return filepath.Join(path, CheckpointName)
	}
	return path
}

// How LoadTrainedWithin reads a checkpoint. The checkpoint is one gob
// message. gob reads a message's length prefix (at most 8 GB), then the
// message through saferio.ReadData, which allocates at most 10 MB ahead of
// the bytes that arrive and appends the rest in 10 MB chunks; a slice's
// length prefix likewise gets at most 10 MB ahead of its decoded elements
// (saferio.SliceCapWithSize). So a length that claims more than the file
// holds costs at most gobChunk, and the message about gobRead times the
// file's size while it is appended: LoadTrainedWithin reads no more
// than the size it examined (io.LimitReader), so that a file that grows
// meanwhile is cut there. It decodes twice: first the settings alone (gob
// skips the fields a type lacks without allocating them: the networks,
// Adam's moments, the logs), which give the networks' sizes and the exact
// estimate (TrainedMemory); then the networks, straight into the arrays of
// networks built for them (gob fills a slice in place when it has the
// capacity; bnn.Net.StateView), with Adam's moments and the logs again
// skipped. Settings that describe networks the file cannot hold (a byte
// at least for each value of their states, minCheckpointBytes) are
// refused before the networks are built, budget or not. What remains
// unbounded by the estimate is a crafted file whose gob structure holds
// many more (empty) arrays or networks than its settings say: each costs
// a slice header or a State (24 or 72 bytes) per byte of the file before
// the count is checked after decoding, up to about 5 times that while an
// array past gobChunk grows by appending, and gob allocates 80 bytes for
// each array it skips (Adam's inner arrays), in both decodings: 350
// bytes a byte was measured for a megabyte of empty States (see
// FuzzLoadTrained).

// trainedHeader is what the first decoding reads.
type trainedHeader struct {
	Version             int
	Config              Config
	Units               int
	InputMean, InputStd []float64
}

// trainedBody is what the second decoding reads.
type trainedBody struct {
	Members []bnn.State
	Alphas  []float64
}

// trainedBytesPerByte is the memory LoadTrainedWithin (and bnn export
// after it) takes per byte of a checkpoint, for the estimate before it
// decodes anything: the message as gob reads it (gobRead), the networks it
// fills (16 bytes per parameter, against about 18 bytes per parameter in
// the file: the parameter and Adam's two moments, 6 bytes each), the
// digest's copy of one network. Measured with /usr/bin/time -v and the
// runtime's soft limit at 1 MiB, exporting checkpoints of 8 and 24 mlp
// networks (36 and 109 MiB): peak resident memory 3.0 and 2.7 bytes per
// byte above memlimit.Base, the heap's peak 3.7 and 3.1; 4.5 here. A
// checkpoint that encodes more densely (weights at ±1, moments at 0) is
// caught by the second estimate, from its settings (TrainedMemory).
const trainedBytesPerByte = 4.5

// CheckpointMemory estimates, from its size alone, the memory of reading
// a checkpoint of size bytes with LoadTrainedWithin: memlimit.Base, gob's
// first chunk and trainedBytesPerByte per byte.
func CheckpointMemory(size int64) float64 {
	return float64(memlimit.Base) + gobChunk + trainedBytesPerByte*float64(size)
}

// gobMessage is the most gob holds while it reads a message of size
// bytes: the message, and while it is appended chunk by chunk beyond the
// first chunk, the arrays it outgrew (gobRead) and the chunk.
func gobMessage(size int64) float64 {
	if size <= gobChunk {
		return float64(size)
	}
	return gobRead*float64(size) + gobChunk
}

// TrainedMemory estimates LoadTrainedWithin's memory for a checkpoint of
// size bytes holding n networks of footprint f: memlimit.Base, gob's
// message, the networks (bnn.Footprint.NetBytes) and the copy of one
// network's state that the digest takes.
func TrainedMemory(f bnn.Footprint, n int, size int64) float64 {
	return float64(memlimit.Base) + gobMessage(size) + float64(n)*float64(f.NetBytes()) + float64(f.StateBytes())
}

// minCheckpointBytes is the least a checkpoint of n networks of footprint
// f can take: a byte for each value of their states (the parameters, and
// the running mean and variance of each channel).
func minCheckpointBytes(f bnn.Footprint, n int) int64 {
	return int64(n) * (int64(f.Params) + 2*int64(f.Channels))
}

// decodeCheckpoint decodes the checkpoint file path, reading at most size
// bytes, into v.
func decodeCheckpoint(path string, size int64, v any) error {
	// Non-blocking, so that a FIFO put in the file's place since
	// LoadTrainedWithin looked is refused, not waited on.
	rf, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer rf.Close()
	if fi, err := rf.Stat(); err != nil {
		return err
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file; it cannot be a dstein checkpoint", path)
	}
	n, err := verifyCheckpoint(rf, path, size)
	if err != nil {
		return err
	}
	if err := gob.NewDecoder(bufio.NewReader(io.LimitReader(rf, n))).Decode(v); err != nil {
		return fmt.Errorf("%s is not a dstein checkpoint or is damaged: %w", path, err)
	}
	return nil
}

// LoadTrainedWithin is LoadTrained within the memory budget b: once the
// settings are read, the networks they describe are refused with
// *memlimit.Exceeded when TrainedMemory plus the caller's extra bytes is
// over the limit (the message's verb says what the caller does with the
// checkpoint). The caller checks CheckpointMemory before, which needs no
// decoding.
func LoadTrainedWithin(path string, b memlimit.Budget, verb string, extra float64) (*Trained, error) {
	path = CheckpointPath(path)
	// Open refuses what is not a regular file, without blocking.
	f, err := safeio.Open(path, "checkpoint", 0)
	if err != nil {
		return nil, err
	}
	f.Close()
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	size := info.Size()
	var cp trainedHeader
	if err := decodeCheckpoint(path, size, &cp); err != nil {
		return nil, err
	}
	if cp.Version > checkpointVersion {
		return nil, fmt.Errorf("%s has checkpoint format %d, newer than this dstein's %d", path, cp.Version, checkpointVersion)
	}
	cfg := decodedConfig(cp.Config)
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	h, w, c, classes, err := dataset.Geometry(cfg.Data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	total := cfg.Epochs
	if cfg.sequential() {
		total = cfg.Ensemble * cfg.Epochs
	}
	if cp.Units < 0 || cp.Units > total {
		return nil, fmt.Errorf("%s: %d units completed, want 0 to %d", path, cp.Units, total)
	}
	t := &Trained{Path: path, Config: cfg, Units: cp.Units, TotalUnits: total, Input: bnn.Shape{H: h, W: w, C: c}, Classes: classes}
	if len(cp.InputMean) == c && len(cp.InputStd) == c {
		t.InputMean, t.InputStd = cp.InputMean, cp.InputStd
	}
	fp, err := bnn.Measure(cfg.Arch, t.Input, classes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	what := fmt.Sprintf("%s the checkpoint %s (%s: %d × %s)", verb, path, memlimit.Format(size), cfg.Ensemble, cfg.Arch)
	if err := b.Check(what, TrainedMemory(fp, cfg.Ensemble, size)+extra); err != nil {
		return nil, err
	}
	// Settings of a few bytes can describe 64 networks of gigabytes; with
	// no budget (LoadTrained), or under a large one, they would be built
	// before the file is found to hold none of them. Every value of a
	// network's state takes at least a byte of the file (gob writes a
	// float in 1 to 9 bytes), so a file smaller than that is damaged,
	// refused before the networks are built: what they take is then at
	// most 16 bytes (bnn.Footprint.NetBytes) per byte of the file.
	if need := minCheckpointBytes(fp, cfg.Ensemble); size < need {
		return nil, fmt.Errorf("%s is not a dstein checkpoint or is damaged: its settings describe %d × %s on %s, whose states take at least %s, but the file has %s", path, cfg.Ensemble, cfg.Arch, cfg.Data, memlimit.Format(need), memlimit.Format(size))
	}
	// The first reading's message is garbage now: collecting it before the
	// networks are built keeps the peak at the second reading's, whatever
	// the collector's pace.
	runtime.GC()
	body := trainedBody{Members: make([]bnn.State, 0, cfg.Ensemble), Alphas: make([]float64, 0, cfg.Ensemble)}
	for range cfg.Ensemble {
		n, err := bnn.New(cfg.Arch, t.Input, classes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		t.Nets = append(t.Nets, n)
		// Empty outer slices, so that a member whose arrays are missing
		// is found; the arrays' capacity takes the decoded values.
		v := n.StateView()
		body.Members = append(body.Members, bnn.State{Params: v.Params[:0], Mean: v.Mean[:0], Var: v.Var[:0]})
	}
	body.Members = body.Members[:0]
	if err := decodeCheckpoint(path, size, &body); err != nil {
		return nil, err
	}
	if len(body.Members) != cfg.Ensemble {
		return nil, fmt.Errorf("%s holds %d networks; its settings say %d", path, len(body.Members), cfg.Ensemble)
	}
	for k, st := range body.Members {
		// The values are in place when the arrays had the sizes of the
		// architecture; SetState checks them (and copies arrays that gob
		// had to allocate, which it then refuses).
		if err := t.Nets[k].SetState(st); err != nil {
			return nil, fmt.Errorf("%s: network %d: %w", path, k+1, err)
		}
	}
	if cfg.Spec().Boosted {
		t.Alphas = append([]float64{}, body.Alphas...)
	}
	t.WeightsSHA256 = digest(t.Nets)
	return t, nil
}
