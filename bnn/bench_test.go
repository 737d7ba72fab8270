package bnn

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkTrainStepCNN times one STE training step (forward, log-likelihood,
// backward) of the small CNN on a batch of 64 MNIST-sized examples; the
// examples/s metric is the throughput of one network (without the optimizer
// step, which the ensemble package adds).
func BenchmarkTrainStepCNN(b *testing.B) {
	benchStep(b, "cnn", Shape{28, 28, 1}, STE)
}

// BenchmarkTrainStepCNNRelaxed is the same step in the relaxed mode
// (GF-SVGD's surrogate).
func BenchmarkTrainStepCNNRelaxed(b *testing.B) {
	benchStep(b, "cnn", Shape{28, 28, 1}, Relaxed)
}

// BenchmarkTrainStepMLP is the STE step of the MLP.
func BenchmarkTrainStepMLP(b *testing.B) {
	benchStep(b, "mlp", Shape{28, 28, 1}, STE)
}

func benchStep(b *testing.B, arch string, in Shape, mode Mode) {
	n, err := New(arch, in, 10)
	if err != nil {
		b.Fatal(err)
	}
	n.Init(rand.New(rand.NewPCG(1, 1)))
	const batch = 64
	x, y := randomBatch(batch, in, 10, 1)
	d := make([]float32, batch*10)
	o := PassOptions{Mode: mode, Train: true}
	b.ReportAllocs()
	for b.Loop() {
		LogLik(n.Forward(x, batch, o), y, 10, 1, d)
		n.Backward(d)
	}
	b.ReportMetric(float64(batch)*float64(b.N)/b.Elapsed().Seconds(), "examples/s")
}
