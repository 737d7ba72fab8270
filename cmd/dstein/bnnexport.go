package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dstein/dstein/bnn"
	"github.com/dstein/dstein/ensemble"
	"github.com/dstein/dstein/internal/npy"
	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/report"
)

// bnnIndexName is the JSON index of an export, and bnnIndexFormat the value
// of its first key, by which a later export recognises a folder it may
// refresh.
const (
	bnnIndexName    = "index.json"
	bnnIndexFormat  = "dstein.bnn-export"
	bnnIndexVersion = 1
)

// bnnIndexPrefix is how an export's index file begins.
const bnnIndexPrefix = "{\n  \"format\": \"" + bnnIndexFormat + "\","

// bnnIndex is the JSON index of an export: what the files are and how the
// networks compute. Every key is always present.
type bnnIndex struct {
	Format     string  `json:"format"`
	Version    int     `json:"version"`
	Checkpoint string  `json:"checkpoint"`
	Arch       string  `json:"arch"`
	Data       string  `json:"data"`
	Method     string  `json:"method"`
	Members    int     `json:"members"`
	Input      bnnIn   `json:"input"`
	Classes    int     `json:"classes"`
	Units      int     `json:"units_completed"`
	TotalUnits int     `json:"units_total"`
	Complete   bool    `json:"complete"`
	Digest     string  `json:"weights_sha256"`
	Alphas     any     `json:"benn_alphas"`
	Prediction string  `json:"prediction"`
	Sign       string  `json:"sign"`
	BNEpsilon  float64 `json:"bn_epsilon"`
	// Config is the training run's settings.
	Config ensemble.Config `json:"config"`
	Layers []bnnLayer      `json:"layers"`
	Files  []bnnFile       `json:"files"`
}

type bnnIn struct {
	Height   int    `json:"height"`
	Width    int    `json:"width"`
	Channels int    `json:"channels"`
	Layout   string `json:"layout"`
	// Mean and Std are the per-channel standardisation of pixel/255 that
	// training used (null for checkpoints written before they were kept).
	Mean []float64 `json:"mean"`
	Std  []float64 `json:"std"`
}

type bnnLayer struct {
	Index       int      `json:"index"`
	Kind        string   `json:"kind"`
	Description string   `json:"description"`
	In          [3]int   `json:"in"`
	Out         [3]int   `json:"out"`
	Kernel      int      `json:"kernel"`
	Stride      int      `json:"stride"`
	Pad         int      `json:"pad"`
	Rate        float64  `json:"rate"`
	Arrays      []string `json:"arrays"`
}

type bnnFile struct {
	Member int    `json:"member"`
	Layer  int    `json:"layer"`
	Array  string `json:"array"`
	File   string `json:"file"`
	Dtype  string `json:"dtype"`
	Shape  []int  `json:"shape"`
}

func newBNNExportCmd(e *env) *cobra.Command {
	var model, out string
	var mem memoryFlag
	cmd := &cobra.Command{
		Use:   "export --model DIR/checkpoint.gob --out-dir DIR",
		Short: "Write a trained ensemble's weights as NumPy .npy files, one per member, layer and array, with a JSON index",
		Long: `Write the networks of a bnn train checkpoint (--model: the checkpoint file,
or the run's --out-dir) as NumPy arrays, one file per member (from 0), layer
(numbered from 1 as the training log lists them) and array:

  memberK_layerL_weight.npy        latent real weights, float32: convolutions
                                   (out, in, k, k), dense layers (in, out)
  memberK_layerL_sign.npy          their signs, int8 ±1: the binary weights the
                                   forward pass uses (sign(0) = +1)
  memberK_layerL_gamma.npy, _beta  batch normalisation's affine map, float32
  memberK_layerL_running_mean.npy, _running_var   its running statistics, float64

and index.json: the architecture (every layer's kind, shapes, kernel, stride,
padding), the input's layout, how the members' predictions combine, the
training settings and every file's member, layer, array, dtype and shape.

The folder is created if missing. Files are written atomically; a file that
is already there is replaced only when the folder holds an earlier export
(its index.json), whose files the new export does not write are removed.

Before it decodes the checkpoint, the command estimates the memory from the
file's size, and again from the networks its settings describe; a
checkpoint over --max-memory is refused (exit code 3).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			budget, err := mem.budget()
			if err != nil {
				return err
			}
			return runBNNExport(e, model, out, budget)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&model, "model", "", "the checkpoint of a bnn train run: DIR/checkpoint.gob, or DIR (required)")
	fs.StringVar(&out, "out-dir", "", "folder for the .npy files and index.json (required; created if missing)")
	mem.register(fs)
	return cmd
}

// bnnExportOutputs is the memory of writing an export besides the
// networks: each file goes through a 64 kB buffer and npy's chunk of 4096
// values into a temporary file (the sign arrays too, a chunk at a time),
// so that only the index and the outputs' records grow with the export:
// about 200 bytes of JSON per file (84 kB for the 432 files of 24 mlp
// networks, measured) and a few hundred bytes of structures. 4 MB covers
// 1 kB per file of the largest export, 64 alexnet members (3,072 files).
const bnnExportOutputs = 4 << 20

// bnnArray is one file of an export.
type bnnArray struct {
	file  bnnFile
	write func(w *bufio.Writer) error
}

func runBNNExport(e *env, model, out string, budget memlimit.Budget) error {
	switch {
	case model == "":
		return usagef("--model is required: the checkpoint of a bnn train run (DIR/checkpoint.gob, or DIR)")
	case out == "":
		return usagef("--out-dir DIR is required (the .npy files and index.json go there)")
	}
	// The estimate from the file's size, before anything is decoded; the
	// exact one follows from the settings it holds (LoadTrainedWithin).
	path := ensemble.CheckpointPath(model)
	if info, err := os.Stat(path); err == nil && info.Mode().IsRegular() {
		what := fmt.Sprintf("exporting the checkpoint %s (%s)", path, memlimit.Format(info.Size()))
		if err := budget.Check(what, ensemble.CheckpointMemory(info.Size())+bnnExportOutputs); err != nil {
			return err
		}
	}
	tr, err := cancelable(e, func() (*ensemble.Trained, error) {
		return ensemble.LoadTrainedWithin(path, budget, "exporting", bnnExportOutputs)
	})
	if err != nil {
		return err
	}
	idx, arrays := bnnExport(tr)
	if err := e.makeOutDir(out); err != nil {
		return err
	}
	lock, err := safeio.TryLock(filepath.Join(out, "export.lock"))
	var busy *safeio.Busy
	if errors.As(err, &busy) {
		return fmt.Errorf("another dstein is exporting into %s (it holds %s); wait for it to finish, or use another --out-dir", out, busy.Path)
	}
	if err != nil {
		return err
	}
	defer lock.Unlock()
	names := map[string]bool{bnnIndexName: true}
	for _, a := range arrays {
		names[a.file.File] = true
	}
	// Every file of the export replaces only a file of an earlier export
	// that nobody changed since (the directory's record); the earlier
	// export's files that this one does not write are removed with it,
	// unless they changed since.
	var b safeio.Batch
	defer b.Abort()
	for _, a := range arrays {
		if err := b.Replace(filepath.Join(out, a.file.File), a.write); err != nil {
			return err
		}
	}
	if err := b.Replace(filepath.Join(out, bnnIndexName), func(w *bufio.Writer) error { return report.WriteSidecar(w, idx) }); err != nil {
		return err
	}
	var kept []string
	for _, f := range earlierExport(out, names) {
		if err := b.Remove(filepath.Join(out, f)); err != nil {
			kept = append(kept, f)
		}
	}
	w := e.stdout
	state := "complete"
	if !tr.Complete() {
		state = fmt.Sprintf("INCOMPLETE: %d of %d units of work done", tr.Units, tr.TotalUnits)
	}
	fmt.Fprintf(w, "checkpoint %s: %s, %d × %s on %s, %s\n", tr.Path, tr.Config.Method, tr.Config.Ensemble, tr.Config.Arch, tr.Config.Data, state)
	fmt.Fprintf(w, "weights    sha256 %s\n", tr.WeightsSHA256)
	if err := b.Commit(e.ctx); err != nil {
		if e.ctx.Err() != nil {
			return interrupted{"interrupted; nothing written"}
		}
		return err
	}
	fmt.Fprintf(w, "wrote %d arrays and %s in %s\n", len(arrays), bnnIndexName, out)
	if len(kept) > 0 {
		fmt.Fprintf(w, "kept %s of the earlier export: changed since dstein wrote them\n", strings.Join(kept, ", "))
	}
	return nil
}

// earlierExport returns the files of an earlier export in dir (listed by
// its index.json, when dstein's record holds that index unchanged) that
// the new export, whose files are names, does not write.
func earlierExport(dir string, names map[string]bool) []string {
	path := filepath.Join(dir, bnnIndexName)
	if safeio.Owned(path) != nil {
		return nil
	}
	data, ok := readOwn(path, bnnIndexPrefix)
	if !ok {
		return nil
	}
	var prev struct {
		Files []bnnFile `json:"files"`
	}
	if json.Unmarshal(data, &prev) != nil {
		return nil
	}
	var old []string
	for _, f := range prev.Files {
		// Only plain names of the earlier export's own files.
		if f.File == filepath.Base(f.File) && strings.HasPrefix(f.File, "member") && strings.HasSuffix(f.File, ".npy") && !names[f.File] {
			if info, err := os.Lstat(filepath.Join(dir, f.File)); err == nil && info.Mode().IsRegular() {
				old = append(old, f.File)
			}
		}
	}
	return old
}

// readOwn reads a regular file (at most 4 MB: the index of the largest
// export, 64 alexnet members' 3,072 files, is about 3 MB) when it starts
// with prefix.
func readOwn(path, prefix string) ([]byte, bool) {
	info, err := os.Lstat(path)
	if err != nil || !info.Mode().IsRegular() || info.Size() > 4<<20 {
		return nil, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil || !strings.HasPrefix(string(data), prefix) {
		return nil, false
	}
	return data, true
}

// bnnExport lays out the export of a trained ensemble: its index and one
// array per member, layer and array (and the signs of binary weights).
func bnnExport(tr *ensemble.Trained) (*bnnIndex, []bnnArray) {
	cfg := tr.Config
	idx := &bnnIndex{Format: bnnIndexFormat, Version: bnnIndexVersion, Checkpoint: tr.Path, Arch: cfg.Arch, Data: cfg.Data, Method: cfg.Method,
		Members: len(tr.Nets), Classes: tr.Classes, Units: tr.Units, TotalUnits: tr.TotalUnits, Complete: tr.Complete(), Digest: tr.WeightsSHA256,
		Input: bnnIn{Height: tr.Input.H, Width: tr.Input.W, Channels: tr.Input.C, Mean: tr.InputMean, Std: tr.InputStd,
			Layout: "one image as H×W×C values (NHWC), each pixel/255 standardised per channel c as (x − mean[c]) / std[c], with the training set's mean and standard deviation (null for a checkpoint written before they were kept: recompute them over the whole training file)"},
		Prediction: "the average of the members' softmax(logits)",
		Sign:       "sign(x) = +1 for x ≥ 0, −1 otherwise; every sign layer and every binary weight uses it",
		BNEpsilon:  bnn.BNEpsilon, Config: cfg, Layers: []bnnLayer{}, Files: []bnnFile{}}
	idx.Alphas = nil
	if cfg.Spec().Boosted {
		idx.Alphas = tr.Alphas
		idx.Prediction = "the average of the members' softmax(logits) weighted by benn_alphas"
	}
	var arrays []bnnArray
	for k, n := range tr.Nets {
		for _, li := range n.Layers() {
			if k == 0 {
				l := bnnLayer{Index: li.Index, Kind: li.Kind, Description: li.Description, In: [3]int{li.In.H, li.In.W, li.In.C}, Out: [3]int{li.Out.H, li.Out.W, li.Out.C},
					Kernel: li.Kernel, Stride: li.Stride, Pad: li.Pad, Rate: li.Rate, Arrays: []string{}}
				for _, a := range li.Arrays {
					l.Arrays = append(l.Arrays, a.Name)
					if a.Binary {
						l.Arrays = append(l.Arrays, "sign")
					}
				}
				idx.Layers = append(idx.Layers, l)
			}
			for _, a := range li.Arrays {
				f := bnnFile{Member: k, Layer: li.Index, Array: a.Name, File: fmt.Sprintf("member%d_layer%d_%s.npy", k, li.Index, a.Name), Shape: a.Shape}
				if a.F32 != nil {
					f.Dtype = npy.Descr[float32]()
					vals := a.F32
					arrays = append(arrays, bnnArray{f, func(w *bufio.Writer) error { return npy.Write(w, f.Shape, vals) }})
				} else {
					f.Dtype = npy.Descr[float64]()
					vals := a.F64
					arrays = append(arrays, bnnArray{f, func(w *bufio.Writer) error { return npy.Write(w, f.Shape, vals) }})
				}
				if a.Binary {
					s := bnnFile{Member: k, Layer: li.Index, Array: "sign", File: fmt.Sprintf("member%d_layer%d_sign.npy", k, li.Index), Dtype: npy.Descr[int8](), Shape: a.Shape}
					latent := a.F32
					arrays = append(arrays, bnnArray{s, func(w *bufio.Writer) error { return writeSigns(w, s.Shape, latent) }})
				}
			}
		}
	}
	for _, a := range arrays {
		idx.Files = append(idx.Files, a.file)
	}
	return idx, arrays
}

// writeSigns writes the signs of latent weights (int8 ±1, sign(0) = +1) as
// an array of the given shape, a chunk at a time.
func writeSigns(w *bufio.Writer, shape []int, latent []float32) error {
	aw, err := npy.NewWriter[int8](w, shape)
	if err != nil {
		return err
	}
	var chunk [4096]int8
	for lo := 0; lo < len(latent); lo += len(chunk) {
		part := latent[lo:min(lo+len(chunk), len(latent))]
		for i, v := range part {
			chunk[i] = -1
			if v >= 0 {
				chunk[i] = 1
			}
		}
		if err := aw.Append(chunk[:len(part)]...); err != nil {
			return err
		}
	}
	return aw.Close()
}
