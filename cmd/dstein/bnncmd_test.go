package main

import (
	"encoding/json"
	"github.com/dstein/dstein/dataset"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBNNTrain(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "r.json")
	args := []string{"bnn", "train", "--data", "mnist", "--arch", "mlp", "--method", "gfsvgd", "--ensemble", "2", "--epochs", "1",
		"--train-limit", "512", "--test-limit", "300", "--out-dir", filepath.Join(dir, "run"), "--json", js}
	code, out, errs := dstein(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"ensemble   test accuracy", "members", "repulsive/driving", "examples/s over all networks", "wrote"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	var res struct {
		Ensemble float64   `json:"ensemble_test_accuracy"`
		Members  []float64 `json:"member_test_accuracy"`
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	// Chance is 0.1; 300 test examples give a standard error ≤ 0.03, and
	// even 512 training examples take a binarized MLP far above 0.4.
	if res.Ensemble < 0.4 || len(res.Members) != 2 {
		t.Errorf("result %+v", res)
	}
	// A second run into the same folder needs --resume; with it, the
	// finished run is reported again without training.
	code, _, errs = dstein(t, args...)
	checkCLIError(t, "rerun without --resume", code, exitUsage, errs, "--resume", "")
	code, out2, errs := dstein(t, append(args, "--resume")...)
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "resuming from") || firstLine(out2, "ensemble") != firstLine(out, "ensemble") {
		t.Errorf("resumed run: stderr %q\nstdout %q", errs, out2)
	}
	// --json may not name a file the run keeps in its folder: the
	// checkpoint (the trained networks), result.json, the lock, the record.
	run := filepath.Join(dir, "run")
	cp, err := os.ReadFile(filepath.Join(run, "checkpoint.gob"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"checkpoint.gob", "result.json", "train.lock", ".dstein-files.json"} {
		code, _, errs := dstein(t, append(args[:len(args)-2], "--json", filepath.Join(run, name), "--resume")...)
		want := "one of the files this run keeps there"
		if name == "checkpoint.gob" {
			want = "never writes over its inputs" // --resume reads it
		}
		checkCLIError(t, "--json "+name, code, exitError, errs, want, "")
	}
	if after, _ := os.ReadFile(filepath.Join(run, "checkpoint.gob")); string(after) != string(cp) {
		t.Errorf("the checkpoint changed")
	}
	fresh := filepath.Join(dir, "fresh")
	code, _, errs = dstein(t, "bnn", "train", "--data", "mnist", "--arch", "mlp", "--method", "ste", "--ensemble", "1", "--epochs", "1",
		"--train-limit", "64", "--test-limit", "10", "--out-dir", fresh, "--json", filepath.Join(fresh, "checkpoint.gob"))
	checkCLIError(t, "a fresh folder's checkpoint as --json", code, exitError, errs, "one of the files this run keeps there", "")
	if _, err := os.Stat(filepath.Join(fresh, "checkpoint.gob")); err == nil {
		t.Errorf("a checkpoint.gob was written in the fresh folder")
	}
	// Nor a data file: --json once replaced the training labels.
	info, err := dataset.Probe("mnist", "")
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range info.Files() {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	labels := filepath.Join(data, "train-labels-idx1-ubyte.gz")
	before, _ := os.ReadFile(labels)
	code, _, errs = dstein(t, "bnn", "train", "--data-dir", data, "--arch", "mlp", "--method", "ste", "--ensemble", "1", "--epochs", "1",
		"--train-limit", "64", "--test-limit", "10", "--out-dir", filepath.Join(dir, "d"), "--json", labels)
	checkCLIError(t, "a data file as --json", code, exitError, errs, "never writes over its inputs", "")
	if after, _ := os.ReadFile(labels); string(after) != string(before) {
		t.Errorf("the labels file changed")
	}
}

func firstLine(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func TestBNNTrainBadInput(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args     []string
		code     int
		contains string
	}{
		{[]string{"bnn", "train"}, exitUsage, "--out-dir"},
		{[]string{"bnn", "train", "--out-dir", dir, "--ensemble", "0"}, exitUsage, "--ensemble must be at least 1"},
		{[]string{"bnn", "train", "--out-dir", dir, "--batch", "0"}, exitUsage, "--batch must be at least 1"},
		{[]string{"bnn", "train", "--out-dir", dir, "--temperature", "0"}, exitUsage, "--temperature must be a finite number > 0"},
		// float32 rounded these to 0 (training at τ = 1) or made 1/τ infinite.
		{[]string{"bnn", "train", "--out-dir", dir, "--temperature", "1e-300", "--temperature-end", "0"}, exitUsage, "relaxation temperature 1e-300; want at least 1e-06"},
		{[]string{"bnn", "train", "--out-dir", dir, "--temperature-end", "1e-50"}, exitUsage, "final relaxation temperature 1e-50; want 0 (no annealing) or at least 1e-06"},
		{[]string{"bnn", "train", "--out-dir", dir, "--batch", "100000", "--train-limit", "640"}, exitUsage, "--batch 100000 is more than the 640 training examples that --train-limit keeps"},
		{[]string{"bnn", "train", "--out-dir", dir, "--method", "adaboost"}, exitUsage, "unknown method"},
		// A method's own flags, given to another method, had no effect.
		{[]string{"bnn", "train", "--out-dir", dir, "--method", "ste", "--temperature", "0.5"}, exitUsage, "--temperature applies to --method gfsvgd, not to --method ste"},
		{[]string{"bnn", "train", "--out-dir", dir, "--method", "bagging", "--weights", "self"}, exitUsage, "--weights applies to --method gfsvgd"},
		{[]string{"bnn", "train", "--out-dir", dir, "--swish-beta", "3"}, exitUsage, "--swish-beta applies to --method bnnplus, not to --method gfsvgd"},
		{[]string{"bnn", "train", "--out-dir", dir, "--arch", "vgg"}, exitUsage, "unknown architecture"},
		{[]string{"bnn", "train", "--out-dir", dir, "--data", "svhn"}, exitUsage, "unknown data set"},
		{[]string{"bnn", "train", "--out-dir", dir, "--batch", "1"}, exitUsage, "batch size"},
		{[]string{"bnn", "train", "--out-dir", dir, "--data", "cifar10"}, exitError, "--data-dir"},
		{[]string{"bnn", "train", "--out-dir", dir, "--data", "fashion", "--data-dir", dir}, exitError, "install-fashion-mnist.sh"},
	}
	for _, c := range cases {
		code, _, errs := dstein(t, c.args...)
		checkCLIError(t, strings.Join(c.args, " "), code, c.code, errs, c.contains, "")
	}
}
