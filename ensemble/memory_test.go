package ensemble

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dstein/dstein/bnn"
	"github.com/dstein/dstein/memlimit"
)

// TestCheckpointBytes: CheckpointBytes bounds the checkpoints of every
// method, and not by far (the resume of a run refuses a checkpoint over
// it).
func TestCheckpointBytes(t *testing.T) {
	train, test := toyData(160, 3), toyData(50, 4)
	f, err := bnn.Measure("mlp", bnn.Shape{H: 6, W: 6, C: 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Methods {
		cfg := toyConfig(m, 2)
		cfg.Epochs = 2
		dir := t.TempDir()
		if _, err := Train(context.Background(), cfg, train, test, Options{Dir: dir}); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(filepath.Join(dir, CheckpointName))
		if err != nil {
			t.Fatal(err)
		}
		units := cfg.Epochs
		if cfg.WithDefaults().sequential() {
			units *= cfg.Ensemble
		}
		bound := CheckpointBytes(cfg, f, train.N, units)
		// The settings and gob's type descriptions, counted as 16 kB, take
		// about 2 kB of these small checkpoints.
		if info.Size() > bound || info.Size() < (bound-16<<10)/2 {
			t.Errorf("%s: checkpoint of %d bytes, bound %d", m, info.Size(), bound)
		}
	}
}

// TestLoadTrainedWithin: the networks decoded in place are the trained
// ones; the settings' estimate is refused over the budget; a checkpoint
// holding more networks than its settings say is refused.
func TestLoadTrainedWithin(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Data: "mnist", Arch: "mlp", Method: "benn", Ensemble: 2, Epochs: 1, Batch: 32, Seed: 3}
	res, err := Train(context.Background(), cfg, mnistLike(64), mnistLike(20), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := LoadTrainedWithin(dir, memlimit.Budget{Limit: 1 << 30}, "reading", 0)
	if err != nil {
		t.Fatal(err)
	}
	if tr.WeightsSHA256 != res.WeightsSHA256 || len(tr.Nets) != 2 || len(tr.Alphas) != 2 || !tr.Complete() {
		t.Errorf("loaded %+v; trained digest %s", tr, res.WeightsSHA256)
	}
	path := filepath.Join(dir, CheckpointName)
	info, _ := os.Stat(path)
	f, _ := bnn.Measure("mlp", bnn.Shape{H: 28, W: 28, C: 1}, 10)
	need := TrainedMemory(f, 2, info.Size())
	_, err = LoadTrainedWithin(dir, memlimit.Budget{Limit: int64(need) - 1}, "reading", 0)
	var ex *memlimit.Exceeded
	if !errors.As(err, &ex) || !strings.Contains(err.Error(), "reading the checkpoint "+path) || !strings.Contains(err.Error(), "2 × mlp") {
		t.Errorf("a budget under the estimate: %v", err)
	}
	// The same networks under settings of one network.
	cp, err := readCheckpoint(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	cp.Config.Ensemble, cp.Units = 1, 1
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&cp); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), CheckpointName)
	os.WriteFile(bad, buf.Bytes(), 0o644)
	if _, err := LoadTrained(bad); err == nil || !strings.Contains(err.Error(), "holds 2 networks; its settings say 1") {
		t.Errorf("more networks than the settings say: %v", err)
	}
	// A network of another architecture's sizes.
	cp.Config.Ensemble, cp.Config.Arch = 2, "cnn"
	buf.Reset()
	gob.NewEncoder(&buf).Encode(&cp)
	os.WriteFile(bad, buf.Bytes(), 0o644)
	if _, err := LoadTrained(bad); err == nil || !strings.Contains(err.Error(), "network 1: state has") {
		t.Errorf("arrays of other sizes: %v", err)
	}
}

// TestCheckpointLengthClaims: a checkpoint whose gob message claims 1 GB
// in a file of a few bytes is refused as damaged, having allocated no more
// than gob's first chunk, however the file is read.
func TestCheckpointLengthClaims(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, CheckpointName)
	// A gob count of 2³⁰ − 1: the negated byte count (4), then the bytes.
	os.WriteFile(path, []byte{0xfc, 0x3f, 0xff, 0xff, 0xff, 1, 2, 3}, 0o644)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := LoadTrained(path)
	_, err2 := readCheckpoint(dir, 0)
	runtime.ReadMemStats(&after)
	for _, e := range []error{err, err2} {
		if e == nil || !strings.Contains(e.Error(), "not a dstein checkpoint or is damaged") {
			t.Errorf("a message that claims 1 GB: %v", e)
		}
	}
	d := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d bytes allocated", d)
	if d > 2*gobChunk+1<<20 {
		t.Errorf("%d bytes allocated to refuse it", d)
	}
}

// TestCheckpointSettingsClaims: a checkpoint of a few hundred bytes whose
// settings describe networks (one cnn of 1.7 MB, three MLPs of 13 MB, 64
// AlexNets of 38 GB) that it cannot hold, a byte at least for each value
// of their states, is refused as damaged before they are built, even
// without a budget.
func TestCheckpointSettingsClaims(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, CheckpointName)
	for _, cfg := range []Config{
		{Data: "mnist", Arch: "cnn", Method: "benn", Ensemble: 1, Epochs: 1},
		{Data: "fashion", Arch: "mlp", Method: "ste", Ensemble: 3, Epochs: 1},
		{Data: "cifar10", Arch: "alexnet", Method: "gfsvgd", Ensemble: 64, Epochs: 4096},
	} {
		// One empty network, so that only the sizes can refuse it.
		b := encodeCheckpoint(t, &checkpoint{Version: checkpointVersion, Config: cfg, Units: 1, Members: []bnn.State{{}}})
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		n := allocated(func() { _, err = LoadTrained(path) })
		if err == nil || !strings.Contains(err.Error(), "not a dstein checkpoint or is damaged: its settings describe") {
			t.Errorf("%d × %s in %d bytes: %v", cfg.Ensemble, cfg.Arch, len(b), err)
		}
		if n > 1<<20 {
			t.Errorf("%d × %s in %d bytes: %d bytes allocated to refuse it", cfg.Ensemble, cfg.Arch, len(b), n)
		}
	}
	// The smallest checkpoint that holds a cnn (its parameters at zero, a
	// byte each) is read.
	cfg := Config{Data: "mnist", Arch: "cnn", Method: "ste", Ensemble: 1, Epochs: 1}
	b := encodeCheckpoint(t, &checkpoint{Version: checkpointVersion, Config: cfg, Units: 1, Members: []bnn.State{zeroState(t, "cnn")}})
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, _ := bnn.Measure("cnn", bnn.Shape{H: 28, W: 28, C: 1}, 10)
	if tr, err := LoadTrained(path); err != nil || len(tr.Nets) != 1 {
		t.Errorf("a checkpoint of %d bytes (at least %d): %v", len(b), minCheckpointBytes(f, 1), err)
	}
}
