package main

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dstein/dstein/dataset"
	"github.com/dstein/dstein/ensemble"
)

// writeMNISTFiles writes the four MNIST files (gzip-compressed) of nTrain
// and nTest 28×28 images into dir: blank images of class 0, which compress
// to a thousandth of their size, or, with varied set, pixels and labels
// that vary (for a network that learns something).
func writeMNISTFiles(t *testing.T, dir string, nTrain, nTest int, varied bool) {
	t.Helper()
	write := func(name string, header []uint32, n, size int) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		bw := bufio.NewWriterSize(f, 1<<16)
		z, _ := gzip.NewWriterLevel(bw, gzip.BestSpeed)
		binary.Write(z, binary.BigEndian, header)
		row := make([]byte, size)
		for i := range n {
			if varied {
				for k := range row {
					row[k] = byte((i*7 + k*13) % 256)
					if size == 1 {
						row[k] = byte(i % 10)
					}
				}
			}
			z.Write(row)
		}
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	for _, s := range []struct {
		prefix string
		n      int
	}{{"train", nTrain}, {"t10k", nTest}} {
		write(s.prefix+"-images-idx3-ubyte.gz", []uint32{2051, uint32(s.n), 28, 28}, s.n, 784)
		write(s.prefix+"-labels-idx1-ubyte.gz", []uint32{2049, uint32(s.n)}, s.n, 1)
	}
}

// bnnTrainArgs are the settings of the bnn train case: one small network,
// a few steps, so that the data set is what the memory grows with.
var bnnTrainArgs = []string{"--data", "mnist", "--arch", "mlp", "--method", "ste", "--ensemble", "1", "--epochs", "1", "--batch", "64", "--train-limit", "256", "--test-limit", "100"}

// bnnTrainImages returns the number of training images for which bnn
// train's estimate with bnnTrainArgs (and 100 test images) is need bytes,
// from the command's own estimate: it grows by the same amount per image.
func bnnTrainImages(t *testing.T, need int64) int {
	t.Helper()
	cfg := ensemble.Config{Data: "mnist", Arch: "mlp", Method: "ste", Ensemble: 1, Epochs: 1, Batch: 64, TrainLimit: 256, TestLimit: 100}
	est := func(n int) float64 {
		m, err := ensemble.TrainMemory(cfg, dataset.Info{Name: "mnist", Train: n, Test: 100, H: 28, W: 28, C: 1, Classes: 10}, false)
		if err != nil {
			t.Fatal(err)
		}
		return m.Total()
	}
	lo := est(256)
	perImage := (est(256+1000) - lo) / 1000
	n := 256 + int(math.Floor((float64(need)-lo)/perImage))
	if n < 256 {
		t.Fatalf("an estimate of %d bytes is below that of the smallest data set (%.0f)", need, lo)
	}
	return n
}

// bnnCheckpoint trains k small networks on a small data set in dir with
// the built dstein and returns the run's checkpoint. (Not in this process:
// a child process's peak resident memory starts from its parent's, which
// must stay small.)
func bnnCheckpoint(t *testing.T, bin, dir string, k int) string {
	t.Helper()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	writeMNISTFiles(t, data, 128, 100, true)
	run := filepath.Join(dir, "run")
	out, err := exec.Command(bin, "bnn", "train", "--data", "mnist", "--data-dir", data, "--arch", "mlp", "--method", "ste", "--ensemble", strconv.Itoa(k),
		"--epochs", "1", "--batch", "64", "--train-limit", "128", "--test-limit", "100", "--out-dir", run).CombinedOutput()
	if err != nil {
		t.Fatalf("bnn train: %v: %s", err, out)
	}
	return filepath.Join(run, ensemble.CheckpointName)
}

// TestMaxMemoryPeakRSSBNN is TestMaxMemoryPeakRSS for bnn train (the data
// set's size is the input: blank MNIST-format images, estimated from the
// files' headers) and bnn export (a checkpoint of k networks, estimated
// from its size; its size grows by k, so the input is the nearest to the
// wanted estimate).
func TestMaxMemoryPeakRSSBNN(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and measures its processes")
	}
	bin := buildDstein(t)
	// The size of one network's checkpoint (the file's fixed part is a
	// few kB).
	one, err := os.Stat(bnnCheckpoint(t, bin, t.TempDir(), 1))
	if err != nil {
		t.Fatal(err)
	}
	cases := []limitCase{
		{name: "bnn train", args: func(t *testing.T, dir string, need int64) []string {
			data := filepath.Join(dir, "data")
			os.Mkdir(data, 0o755)
			writeMNISTFiles(t, data, bnnTrainImages(t, need), 100, false)
			return append([]string{"bnn", "train", "--data-dir", data, "--out-dir", filepath.Join(dir, "run")}, bnnTrainArgs...)
		}},
		{name: "bnn export", args: func(t *testing.T, dir string, need int64) []string {
			base := ensemble.CheckpointMemory(0) + bnnExportOutputs
			perNet := ensemble.CheckpointMemory(one.Size()) - ensemble.CheckpointMemory(0)
			k := max(1, int(math.Round((float64(need)-base)/perNet)))
			cp := bnnCheckpoint(t, bin, dir, k)
			info, err := os.Stat(cp)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d networks: a checkpoint of %d bytes, estimated %.0f bytes for %d wanted", k, info.Size(), ensemble.CheckpointMemory(info.Size())+bnnExportOutputs, need)
			return []string{"bnn", "export", "--model", cp, "--out-dir", filepath.Join(dir, "export")}
		}},
	}
	for _, c := range cases {
		checkLimit(t, bin, c, 160<<20)
	}
}
