package gpu

import (
	"context"
	"fmt"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gfsvgd"
	"github.com/dstein/dstein/sampler/gibbs"
)

// BenchmarkSVGDStep times one GF-SVGD iteration on the GPU (scores,
// weights, the median bandwidth, kernel, direction, Adam, and the host's
// share: the weights and the median's histograms) on the RBM of the peer
// benchmarks (M = 25 hidden units), at the sizes (n, d), in
// float64 and float32. It needs a real GPU (DSTEIN_GPU_TEST=1): the
// stand-ins run the kernels on the host, thread after thread.
func BenchmarkSVGDStep(b *testing.B) {
	dev := benchDevice(b)
	for _, size := range [][2]int{{100, 100}, {1000, 100}, {1000, 1000}, {10000, 1000}} {
		for _, prec := range []sampler.Precision{sampler.Float64, sampler.Float32} {
			b.Run(fmt.Sprintf("n=%d/d=%d/%s", size[0], size[1], prec), func(b *testing.B) {
				p := rbmProblem(b, size[0], size[1], 25, 1)
				s, err := NewSVGD(dev, p, gfsvgd.Settings{Device: sampler.CUDA, Precision: prec})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				for range 3 { // kernels loaded, cuBLAS warmed up
					if err := s.Step(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				for b.Loop() {
					if err := s.Step(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkGibbsSweep times one sweep of many chains on the GPU at the
// issue's sizes: the 10×10 Ising torus with 10⁴ and 10⁶ chains, a 256×256
// torus with 10³ chains (reported as site updates per second), and block
// Gibbs on an RBM of 784 visible and 500 hidden units with 10⁴ chains in
// float64 and float32 (sweeps per second). It needs a real GPU
// (DSTEIN_GPU_TEST=1).
func BenchmarkGibbsSweep(b *testing.B) {
	dev := benchDevice(b)
	sweep := func(b *testing.B, m model.Model, n int, set gibbs.Settings, perSweep float64, unit string) {
		g, err := NewGibbs(dev, rbmLikeProblem(m, n, 1), set)
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		for range 3 {
			if err := g.Step(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		b.ResetTimer()
		for b.Loop() {
			if err := g.Step(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(perSweep*float64(b.N)/b.Elapsed().Seconds(), unit)
	}
	for _, c := range []struct{ side, chains int }{{10, 10000}, {10, 1000000}, {256, 1000}} {
		m, err := ising.Grid(c.side, c.side, true, 0.4, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("ising/%dx%d/chains=%d", c.side, c.side, c.chains), func(b *testing.B) {
			sweep(b, m, c.chains, gibbs.Settings{Device: sampler.CUDA}, float64(c.side*c.side*c.chains), "site-updates/s")
		})
	}
	r, err := rbm.Random(784, 500, 0.05, 0.1, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, prec := range []sampler.Precision{sampler.Float64, sampler.Float32} {
		b.Run(fmt.Sprintf("rbm/784x500/chains=10000/%s", prec), func(b *testing.B) {
			sweep(b, r, 10000, gibbs.Settings{Device: sampler.CUDA, Precision: prec}, 1, "sweeps/s")
		})
	}
}

// benchDevice opens the real GPU 0 for a benchmark, which skips without
// DSTEIN_GPU_TEST=1 (the stand-ins run the kernels on the host); the
// device is closed when the benchmark ends.
func benchDevice(b *testing.B) *Device {
	b.Helper()
	if !realGPU() {
		b.Skip("DSTEIN_GPU_TEST=1 runs this on a machine with an NVIDIA GPU")
	}
	dev, err := Open(0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(dev.Close)
	return dev
}
