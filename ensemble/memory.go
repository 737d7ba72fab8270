package ensemble

import (
	"fmt"
	"math"
	"strings"

	"github.com/dstein/dstein/bnn"
	"github.com/dstein/dstein/dataset"
	"github.com/dstein/dstein/memlimit"
)

// Memory is the estimated memory of a training run, by part, in bytes:
// what Train and the data set it trains on hold at their peak. Each part
// counts the arrays the code allocates, from the data set's sizes (Probe)
// and the architecture's (bnn.Measure), so that nothing is built to be
// counted. The counts were checked against runs measured with
// /usr/bin/time -v (see TrainMemory).
type Memory struct {
	// Data is the images and labels of both sets (all of them, whatever
	// the limits: the training set's statistics come from every image).
	Data int64
	// Networks is every network's arrays (bnn.Footprint.NetBytes) and
	// Adam's two moments of every parameter (8 bytes).
	Networks int64
	// Passes is the buffers that the training and evaluation passes leave
	// in every network, at the larger of the two batches.
	Passes int64
	// Method is what the method keeps besides the networks: the minibatch,
	// the example orders, GF-SVGD's particle matrices and kernel
	// workspace, boosting's sample weights.
	Method int64
	// Evaluation is every member's test-set probabilities and the
	// averages of them.
	Evaluation int64
	// Checkpoint is the peak of writing the checkpoint (the networks'
	// states and gob's buffer of the encoded file) or, on resume, of
	// reading it.
	Checkpoint int64
}

// Total is memlimit.Base and the parts with runtimeShare added.
func (m Memory) Total() float64 {
	parts := float64(m.Data) + float64(m.Networks) + float64(m.Passes) + float64(m.Method) + float64(m.Evaluation) + float64(m.Checkpoint)
	return float64(memlimit.Base) + (1+runtimeShare)*parts
}

// runtimeShare is the memory the runtime and the small allocations take
// beside a heap, per byte of it: the peak resident memory of training runs
// was up to 19 MiB above their heap's peak (heaps of 75 to 635 MiB, with
// the soft limit at 1 MiB), 3 MiB more than memlimit.Base, and the heap's
// peak up to 3 MiB above the parts counted for the smallest run; 5%.
const runtimeShare = 0.05

// String lists the parts, for a refusal's message.
func (m Memory) String() string {
	var parts []string
	for _, p := range []struct {
		name string
		n    int64
	}{{"data", m.Data}, {"networks", m.Networks}, {"passes", m.Passes}, {"method", m.Method}, {"evaluation", m.Evaluation}, {"checkpoint", m.Checkpoint}} {
		parts = append(parts, p.name+" "+memlimit.Format(p.n))
	}
	return strings.Join(parts, ", ")
}

// Measured margins of the estimate (see TrainMemory).
const (
	// checkpointFloat32 and checkpointFloat64 bound the bytes gob writes
	// per float32 and float64 value: a float is sent as the uint of its
	// float64 bits byte-reversed, a length byte and at most 5 bytes for a
	// float32 (the low 29 bits of its float64 mantissa are zero) or 8 for
	// a float64.
	checkpointFloat32 = 6
	checkpointFloat64 = 9
	// gobGrowth is the most a buffer that gob grows by appending holds,
	// per byte of its final length, while it grows: the old and the new
	// array together, 2.25 with Go's growth factor of 1.25 for large
	// slices.
	gobGrowth = 2.25
	// gobRead is the memory of reading a message per byte of it: gob
	// appends it chunk by chunk, the old and the new array together 2.25
	// bytes per byte at each growth, and those it outgrew garbage until
	// collected. Measured 2.7 (the heap's peak of reading a 109 MiB
	// checkpoint, less its networks, with the soft limit at 1 MiB); 3.
	gobRead = 3
	// gobEncode is the memory of encoding the checkpoint per byte of the
	// file: gob builds the whole message in one buffer that grows by
	// appending, and the arrays it outgrows are garbage until the
	// collector, which runs beside the encoder, frees them. Measured with
	// the runtime's soft limit at 1 MiB (a collection after every
	// allocation): 2.55 bytes per byte for checkpoints of 36 and 109 MiB,
	// 3.1 for one of 4.5 MiB; 3.5 here.
	gobEncode = 3.5
	// gobChunk is the largest array gob allocates ahead of the data that
	// fills it (saferio's 10 MB chunk).
	gobChunk = 10 << 20
)

// CheckpointBytes bounds the size of the checkpoint of a run of cfg on
// nTrain training examples after units units of work: every network's
// parameters and Adam's two moments of each, the running statistics, the
// boosting weights, the epochs' logs and the settings.
func CheckpointBytes(cfg Config, f bnn.Footprint, nTrain, units int) int64 {
	cfg = cfg.WithDefaults()
	n := int64(cfg.Ensemble)
	// Per array at most four lengths and Adam's three field numbers and
	// end; per network a few more.
	perNet := 3*checkpointFloat32*int64(f.Params) + 2*checkpointFloat64*int64(f.Channels) + 4*checkpointFloat64*int64(f.Arrays) + 64
	var boost int64
	if cfg.Spec().Boosted {
		boost = checkpointFloat64 * (int64(nTrain) + n)
	}
	// An epoch's log is 12 numbers, each at most 9 bytes and a field
	// number; the settings and gob's descriptions of the types take about
	// 2 kB.
	return n*perNet + boost + 128*int64(units) + 16<<10
}

// TrainMemory estimates the memory of Train(cfg) on the data set that
// data describes, resuming from a checkpoint when resume is set, with
// memlimit.Base: the whole of bnn train's.
//
// Measured with /usr/bin/time -v on MNIST (--train-limit 1000–2000,
// --test-limit 300–500, one epoch), with the runtime's soft limit at 1 MiB
// so that the peak is what the run needs rather than what the collector's
// pace leaves, against the estimate: 1 × mlp (ste) 93–98 MiB against 100
// MiB; 1 × cnn (ste) 107 against 136; 8 × mlp (gfsvgd) 257 against 313;
// 5 × cnn (gfsvgd) 230 against 315; 3 × cnn (benn) 163 against 222; 4 ×
// mlp (bagging, 2 epochs) 156 against 179; 24 × mlp (gfsvgd, a 109 MiB
// checkpoint) 633 against 793. 1 × alexnet on 200 CIFAR-10 images,
// estimated 3.7 GB, peaked at 3.3 GiB under a limit of 3.8 GB.
func TrainMemory(cfg Config, data dataset.Info, resume bool) (Memory, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return Memory{}, err
	}
	in := bnn.Shape{H: data.H, W: data.W, C: data.C}
	f, err := bnn.Measure(cfg.Arch, in, data.Classes)
	if err != nil {
		return Memory{}, err
	}
	nTrain, nTest := data.Train, data.Test
	if cfg.TrainLimit > 0 && cfg.TrainLimit < nTrain {
		nTrain = cfg.TrainLimit
	}
	if cfg.TestLimit > 0 && cfg.TestLimit < nTest {
		nTest = cfg.TestLimit
	}
	n := int64(cfg.Ensemble)
	size, classes := int64(in.Size()), int64(data.Classes)
	m := Memory{Data: data.Bytes()}
	m.Networks = n * (f.NetBytes() + 8*int64(f.Params))
	// The evaluation passes run on batches of evalBatch (fewer when the
	// set is smaller); boosting's pass over the training set too.
	eval := min(evalBatch, nTest)
	if cfg.Spec().Boosted {
		eval = max(eval, min(evalBatch, nTrain))
	}
	m.Passes = n * f.PassBytes(max(cfg.Batch, eval))
	if cfg.Batch != eval {
		// A network's buffers of the smaller batch are garbage once it
		// runs the larger one, until they are collected.
		m.Passes += f.PassBytes(min(cfg.Batch, eval))
	}
	// The minibatch (images, labels, indices, the logits' gradient) and
	// the evaluation batch.
	m.Method = int64(cfg.Batch)*(4*size+1+8+4*classes) + evalBatch*(4*size+1+8)
	// Example orders of 8-byte indices, a new one per unit while the last
	// is still held: every particle's for GF-SVGD, one member's otherwise.
	orders := int64(1)
	if cfg.Spec().Joint {
		orders = n
		d := int64(f.Binary)
		// The particles, their scores and the direction (n×d float32
		// each), and svgd's pairwise workspace: per 4096-coordinate block
		// the n(n−1)/2 pair sums and 2n norms, and three n×n matrices.
		blocks := (d + 4095) / 4096
		m.Method += 3*4*n*d + 8*blocks*(n*(n-1)/2+2*n) + 3*8*n*n
	}
	m.Method += 2 * 8 * orders * int64(nTrain)
	if cfg.Spec().Boosted {
		// The sample weights, their cumulative sums and the misses.
		m.Method += (8 + 8 + 1) * int64(nTrain)
	}
	// Every member's class probabilities (float64) and two averages.
	m.Evaluation = (n + 2) * 8 * int64(nTest) * classes
	// Writing the checkpoint: the states of every network, and gob's
	// buffer of the whole file as it grows (gobEncode). Reading it on
	// resume (before training, so the larger of the two counts): gob's
	// buffer of the file, the states and Adam's moments it decodes, and
	// one array growing beyond gob's chunk.
	file := CheckpointBytes(cfg, f, nTrain, cfg.Ensemble*cfg.Epochs)
	m.Checkpoint = n*f.StateBytes() + int64(math.Ceil(gobEncode*float64(file)))
	if resume {
		load := int64(gobMessage(file)) + n*(f.StateBytes()+8*int64(f.Params)) + int64(gobGrowth*4*float64(f.LargestBinary))
		m.Checkpoint = max(m.Checkpoint, load)
	}
	return m, nil
}

// Describe names the run TrainMemory estimates, for messages.
func Describe(cfg Config, data dataset.Info) string {
	cfg = cfg.WithDefaults()
	return fmt.Sprintf("training %d × %s (%s) on %s, %d training and %d test images of %d×%d×%d", cfg.Ensemble, cfg.Arch, cfg.Method, data.Name, data.Train, data.Test, data.H, data.W, data.C)
}
