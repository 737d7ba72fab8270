package ensemble

import (
	"bufio"
	"encoding/gob"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dstein/dstein/bnn"
	"github.com/dstein/dstein/dataset"
	"github.com/dstein/dstein/internal/safeio"
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
}

// Complete reports whether the checkpoint is of a finished run.
func (t *Trained) Complete() bool { return t.Units == t.TotalUnits }

// LoadTrained reads the checkpoint at path (a checkpoint file, or a
// training run's --out-dir holding CheckpointName) and rebuilds its
// networks. Checkpoints of any format version up to this one's hold the
// same weights and are read.
func LoadTrained(path string) (*Trained, error) {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		path = filepath.Join(path, CheckpointName)
	}
	f, err := safeio.Open(path, "checkpoint", 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cp checkpoint
	if err := gob.NewDecoder(bufio.NewReader(f)).Decode(&cp); err != nil {
		return nil, fmt.Errorf("%s is not a dstein checkpoint or is damaged: %w", path, err)
	}
	if cp.Version > checkpointVersion {
		return nil, fmt.Errorf("%s has checkpoint format %d, newer than this dstein's %d", path, cp.Version, checkpointVersion)
	}
	cfg := cp.Config
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
	if len(cp.Members) != cfg.Ensemble {
		return nil, fmt.Errorf("%s holds %d networks; its settings say %d", path, len(cp.Members), cfg.Ensemble)
	}
	if cp.Units < 0 || cp.Units > total {
		return nil, fmt.Errorf("%s: %d units completed, want 0 to %d", path, cp.Units, total)
	}
	t := &Trained{Path: path, Config: cfg, Units: cp.Units, TotalUnits: total, Input: bnn.Shape{H: h, W: w, C: c}, Classes: classes}
	for k, st := range cp.Members {
		n, err := bnn.New(cfg.Arch, t.Input, classes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if err := n.SetState(st); err != nil {
			return nil, fmt.Errorf("%s: network %d: %w", path, k+1, err)
		}
		t.Nets = append(t.Nets, n)
	}
	if cfg.Method == "benn" {
		t.Alphas = append([]float64{}, cp.Alphas...)
	}
	t.WeightsSHA256 = digest(t.Nets)
	return t, nil
}
