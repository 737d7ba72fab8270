package gpu

import (
	"context"
	"fmt"
	"testing"

	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gfsvgd"
)

// BenchmarkSVGDStep times one GF-SVGD iteration on the GPU (scores,
// weights, the median bandwidth, kernel, direction, Adam, and the host's
// share: the weights and the median's histograms) on the RBM of the peer
// benchmarks (M = 25 hidden units), at the sizes (n, d), in
// float64 and float32. It needs a real GPU (DSTEIN_GPU_TEST=1): the
// stand-ins run the kernels on the host, thread after thread.
func BenchmarkSVGDStep(b *testing.B) {
	if !realGPU() {
		b.Skip("DSTEIN_GPU_TEST=1 runs this on a machine with an NVIDIA GPU")
	}
	dev, err := Open(0)
	if err != nil {
		b.Fatal(err)
	}
	defer dev.Close()
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
