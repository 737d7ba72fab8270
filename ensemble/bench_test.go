package ensemble

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/dstein/dstein/dataset"
)

// mnistLike is random 28×28 data of 10 classes (timing only).
func mnistLike(n int) *dataset.Set {
	r := rand.New(rand.NewPCG(1, 1))
	s := &dataset.Set{Name: "bench", N: n, H: 28, W: 28, C: 1, Classes: 10, Pixels: make([]uint8, n*784), Labels: make([]uint8, n),
		Mean: []float64{0.13}, Std: []float64{0.31}}
	for i := range s.Pixels {
		s.Pixels[i] = uint8(r.IntN(256))
	}
	for i := range s.Labels {
		s.Labels[i] = uint8(r.IntN(10))
	}
	return s
}

// benchTrain times whole training steps (data, forward, backward, update)
// of the small CNN: examples/s counts the training examples of all networks.
func benchTrain(b *testing.B, method string, n int) {
	train, test := mnistLike(64*20), mnistLike(64)
	cfg := Config{Arch: "cnn", Method: method, Ensemble: n, Epochs: 1, Batch: 64, Seed: 1}
	var ex float64
	for b.Loop() {
		res, err := Train(context.Background(), cfg, train, test, Options{})
		if err != nil {
			b.Fatal(err)
		}
		ex = res.ExamplesPerSecond
	}
	b.ReportMetric(ex, "examples/s")
}

func BenchmarkTrainSTE(b *testing.B)     { benchTrain(b, "ste", 1) }
func BenchmarkTrainGFSVGD5(b *testing.B) { benchTrain(b, "gfsvgd", 5) }

// benchStep times single steps of the training stepper of the small CNN in
// its steady state (data, passes, Adam, clipping; GF-SVGD also its
// binarized pass, weights, kernel and direction): examples/s counts the
// training examples of all networks. The epoch of 100 steps is long enough
// that no end-of-epoch evaluation falls into a run of -benchtime 20x.
func benchStep(b *testing.B, method string, n int) {
	train, test := mnistLike(64*100), mnistLike(64)
	cfg := Config{Arch: "cnn", Method: method, Ensemble: n, Epochs: 1, Batch: 64, Seed: 1}
	t, err := newTrainer(cfg, train, test, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := t.Step(ctx); err != nil { // first touch of the buffers
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if t.unit == 1 {
			b.Fatal("the benchmark ran past the epoch")
		}
		if err := t.Step(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cfg.Batch*n)*float64(b.N)/b.Elapsed().Seconds(), "examples/s")
}

func BenchmarkTrainStepSTE(b *testing.B)     { benchStep(b, "ste", 1) }
func BenchmarkTrainStepGFSVGD1(b *testing.B) { benchStep(b, "gfsvgd", 1) }
func BenchmarkTrainStepGFSVGD5(b *testing.B) { benchStep(b, "gfsvgd", 5) }
