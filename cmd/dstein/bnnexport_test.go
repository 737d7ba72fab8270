package main

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dstein/dstein/bnn"
	"github.com/dstein/dstein/ensemble"
	"github.com/dstein/dstein/internal/npy"
	"github.com/dstein/dstein/internal/safeio"
)

func readNPYFile[T npy.Element](t *testing.T, path string) (npy.Info, []T) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, v, err := npy.Read[T](f, 0)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return info, v
}

// dstein bnn export writes every member's arrays with the documented shapes
// and the checkpoint's values bit for bit, an index whose digest is
// result.json's, refreshes an earlier export (removing its files that no
// longer belong) and refuses to replace files of anything else; with numpy
// present, a forward pass written from the index alone gives the network's
// logits.
func TestBNNExport(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	code, _, errs := dstein(t, "bnn", "train", "--data", "mnist", "--arch", "cnn", "--method", "benn", "--ensemble", "2", "--epochs", "1",
		"--train-limit", "128", "--test-limit", "100", "--batch", "32", "--out-dir", run)
	if code != 0 {
		t.Fatalf("bnn train: exit %d: %s", code, errs)
	}
	exp := filepath.Join(dir, "export")
	code, out, errs := dstein(t, "bnn", "export", "--model", filepath.Join(run, ensemble.CheckpointName), "--out-dir", exp)
	if code != 0 {
		t.Fatalf("bnn export: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "complete") || !strings.Contains(out, "wrote 48 arrays") {
		t.Errorf("output:\n%s", out)
	}
	var idx bnnIndex
	data, err := os.ReadFile(filepath.Join(exp, bnnIndexName))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		t.Fatal(err)
	}
	var res ensemble.Result
	rd, _ := os.ReadFile(filepath.Join(run, "result.json"))
	if err := json.Unmarshal(rd, &res); err != nil {
		t.Fatal(err)
	}
	if idx.Digest != res.WeightsSHA256 || !idx.Complete || idx.Members != 2 || idx.Arch != "cnn" || len(idx.Layers) != 14 || len(idx.Files) != 48 {
		t.Errorf("index %+v; result digest %s", idx, res.WeightsSHA256)
	}
	// The inputs' standardisation travels with the networks (a user once
	// had to recompute it over the whole training file): MNIST's one
	// channel, about 0.13 ± 0.31.
	if len(idx.Input.Mean) != 1 || len(idx.Input.Std) != 1 || !(idx.Input.Mean[0] > 0.12 && idx.Input.Mean[0] < 0.14) || !(idx.Input.Std[0] > 0.29 && idx.Input.Std[0] < 0.33) ||
		!slices.Equal(idx.Input.Mean, res.InputMean) || !slices.Equal(idx.Input.Std, res.InputStd) {
		t.Errorf("index input mean %v, std %v; result.json %v, %v", idx.Input.Mean, idx.Input.Std, res.InputMean, res.InputStd)
	}
	// The documented shapes of the cnn.
	want := map[string][]int{
		"member1_layer1_weight.npy": {16, 1, 5, 5}, "member1_layer1_sign.npy": {16, 1, 5, 5}, "member0_layer3_gamma.npy": {16},
		"member0_layer5_weight.npy": {32, 16, 3, 3}, "member0_layer10_weight.npy": {800, 128}, "member0_layer13_weight.npy": {128, 10},
		"member1_layer14_running_var.npy": {10},
	}
	for name, shape := range want {
		found := false
		for _, f := range idx.Files {
			if f.File == name {
				found = true
				if !reflect.DeepEqual(f.Shape, shape) {
					t.Errorf("index: %s has shape %v; want %v", name, f.Shape, shape)
				}
			}
		}
		if !found {
			t.Errorf("index lacks %s", name)
		}
	}
	// Every array, read back, is the checkpoint's, bit for bit.
	tr, err := ensemble.LoadTrained(run)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range tr.Nets {
		for _, li := range n.Layers() {
			for _, a := range li.Arrays {
				path := filepath.Join(exp, "member"+itoa(k)+"_layer"+itoa(li.Index)+"_"+a.Name+".npy")
				if a.F32 != nil {
					info, v := readNPYFile[float32](t, path)
					if !reflect.DeepEqual(info.Shape, a.Shape) || !reflect.DeepEqual(v, a.F32) {
						t.Errorf("%s: shape %v, values differ from the checkpoint's: %v", path, info.Shape, !reflect.DeepEqual(v, a.F32))
					}
				} else {
					info, v := readNPYFile[float64](t, path)
					if !reflect.DeepEqual(info.Shape, a.Shape) || !reflect.DeepEqual(v, a.F64) {
						t.Errorf("%s: shape %v, values differ from the checkpoint's", path, info.Shape)
					}
				}
				if a.Binary {
					_, s := readNPYFile[int8](t, strings.Replace(path, "_"+a.Name+".npy", "_sign.npy", 1))
					for i, w := range a.F32 {
						if (w >= 0) != (s[i] == 1) || (s[i] != 1 && s[i] != -1) {
							t.Fatalf("%s: sign %d of weight %v", path, s[i], w)
						}
					}
				}
			}
		}
	}
	if idx.Alphas == nil || len(idx.Alphas.([]any)) != 2 {
		t.Errorf("benn_alphas %v", idx.Alphas)
	}

	// A second export into the folder refreshes it and removes files of the
	// earlier export that no longer belong (here: one added to its index,
	// both written as dstein writes them, so that its record holds them),
	// but keeps one that was changed since dstein wrote it.
	edited := strings.Replace(string(data), `"files": [`, `"files": [{"file": "member7_layer1_weight.npy"}, {"file": "member8_layer1_weight.npy"},`, 1)
	for name, body := range map[string]string{bnnIndexName: edited, "member7_layer1_weight.npy": "old", "member8_layer1_weight.npy": "old"} {
		if err := safeio.Replace(filepath.Join(exp, name), func(w *bufio.Writer) error { _, err := w.WriteString(body); return err }); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(exp, "member8_layer1_weight.npy"), []byte("my edit"), 0o644)
	os.WriteFile(filepath.Join(exp, "notes.txt"), []byte("mine"), 0o644)
	if code, _, errs := dstein(t, "bnn", "export", "--model", run, "--out-dir", exp); code != 0 {
		t.Fatalf("second export: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(exp, "member7_layer1_weight.npy")); err == nil {
		t.Error("a file of the earlier export that no longer belongs was kept")
	}
	if d, _ := os.ReadFile(filepath.Join(exp, "member8_layer1_weight.npy")); string(d) != "my edit" {
		t.Error("a file of the earlier export that was edited since was removed")
	}
	if d, _ := os.ReadFile(filepath.Join(exp, "notes.txt")); string(d) != "mine" {
		t.Error("a file that is not the export's was touched")
	}
	// A folder with a file of an export's name and no earlier export is
	// refused, and nothing is written.
	other := filepath.Join(dir, "other")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "member0_layer1_weight.npy"), []byte("mine"), 0o644)
	code, _, errs = dstein(t, "bnn", "export", "--model", run, "--out-dir", other)
	checkCLIError(t, "foreign file", code, exitError, errs, "was not written by dstein", filepath.Join(other, bnnIndexName))
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bnn", "export", "--out-dir", other}, exitUsage, "--model is required"},
		{[]string{"bnn", "export", "--model", run}, exitUsage, "--out-dir DIR is required"},
		{[]string{"bnn", "export", "--model", filepath.Join(run, "result.json"), "--out-dir", filepath.Join(dir, "x")}, exitError, "not a dstein checkpoint"},
	} {
		code, _, errs := dstein(t, c.args...)
		checkCLIError(t, strings.Join(c.args, " "), code, c.code, errs, c.want, filepath.Join(dir, "x", bnnIndexName))
	}

	// numpy: a forward pass written from index.json's layer list, on random
	// inputs, gives member 0's logits as dstein computes them.
	py := pythonWith(t, "numpy")
	const batch = 3
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, batch*28*28)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	logits := append([]float32(nil), tr.Nets[0].Forward(x, batch, bnn.PassOptions{Mode: bnn.STE})...)
	writeNPY := func(name string, shape []int, v []float32) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := npy.Write(f, shape, v); err != nil {
			t.Fatal(err)
		}
	}
	writeNPY("x.npy", []int{batch, 28, 28, 1}, x)
	writeNPY("logits.npy", []int{batch, 10}, logits)
	script := `
import sys, json
import numpy as np
exp, d = sys.argv[1], sys.argv[2]
idx = json.load(open(exp + "/index.json"))
def arr(layer, name):
    return np.load("%s/member0_layer%d_%s.npy" % (exp, layer["index"], name)).astype(np.float64)
def sign(v):
    return np.where(v >= 0, 1.0, -1.0)
def forward(img):  # img: H×W×C
    x = img.astype(np.float64)
    planar = False
    for L in idx["layers"]:
        k = L["kind"]
        if k == "conv":
            if not planar:
                x, planar = x.transpose(2, 0, 1), True  # C×H×W
            W = sign(arr(L, "weight"))
            s, p, kk = L["stride"], L["pad"], L["kernel"]
            xp = np.pad(x, ((0, 0), (p, p), (p, p)))
            oh, ow = L["out"][0], L["out"][1]
            y = np.zeros((W.shape[0], oh, ow))
            for ky in range(kk):
                for kx in range(kk):
                    patch = xp[:, ky:ky + s * oh:s, kx:kx + s * ow:s]
                    y += np.einsum("oc,chw->ohw", W[:, :, ky, kx], patch)
            x = y
        elif k == "max-pool":
            s, kk = L["stride"], L["kernel"]
            oh, ow = L["out"][0], L["out"][1]
            y = np.full((x.shape[0], oh, ow), -np.inf)
            for ky in range(kk):
                for kx in range(kk):
                    y = np.maximum(y, x[:, ky:ky + s * oh:s, kx:kx + s * ow:s])
            x = y
        elif k == "batch-norm":
            g, b, m, v = arr(L, "gamma"), arr(L, "beta"), arr(L, "running_mean"), arr(L, "running_var")
            sh = (-1, 1, 1) if x.ndim == 3 else (-1,)
            x = g.reshape(sh) * (x - m.reshape(sh)) / np.sqrt(v.reshape(sh) + idx["bn_epsilon"]) + b.reshape(sh)
        elif k == "sign":
            x = sign(x)
        elif k == "flatten":
            x = x.reshape(-1)  # (c, h, w) order
        elif k == "dense":
            x = x.reshape(-1) @ sign(arr(L, "weight"))
        elif k == "dropout":
            pass
        else:
            raise ValueError(k)
    return x
xs = np.load(d + "/x.npy")
want = np.load(d + "/logits.npy").astype(np.float64)
got = np.stack([forward(img) for img in xs])
err = np.abs(got - want).max()
assert err < 1e-3 * max(1, np.abs(want).max()), (err, got, want)
print("max |numpy − dstein| over the logits:", err)
`
	pyOut, err := exec.Command(py, "-c", script, exp, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy forward pass: %v\n%s", err, pyOut)
	}
	t.Logf("%s", pyOut)
}

func itoa(i int) string { return strconv.Itoa(i) }
