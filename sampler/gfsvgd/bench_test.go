package gfsvgd

import (
	"context"
	"fmt"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/transform"
)

// benchSampler returns a sampler on a random RBM with d visible and 25
// hidden units (W entries with variance 0.05), relaxed surrogate, after a
// few warm-up iterations.
func benchSampler(b *testing.B, m model.Model, n int, relaxed bool) *Sampler {
	b.Helper()
	tr, err := transform.ForModel(nil, m)
	if err != nil {
		b.Fatal(err)
	}
	var rho transform.Surrogate = transform.BaseSurrogate{T: tr}
	if relaxed {
		rho, err = transform.NewRelaxed(tr, m.(model.Relaxed), 1)
		if err != nil {
			b.Fatal(err)
		}
	}
	s, err := newGF(m, tr, rho, n, Settings{}, rng.NewKey(1).For(rng.Init).Rand())
	if err != nil {
		b.Fatal(err)
	}
	for range 3 {
		if err := s.Step(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkStepRBM times one GF-SVGD iteration on the RBM target (M = 25,
// relaxed surrogate) at the sizes of BENCHMARKS.md.
func BenchmarkStepRBM(b *testing.B) {
	for _, sz := range [][2]int{{100, 100}, {1000, 100}, {1000, 1000}} {
		n, d := sz[0], sz[1]
		b.Run(fmt.Sprintf("n=%d/d=%d", n, d), func(b *testing.B) {
			m, err := rbm.Random(d, 25, 0.2236, 1, 7)
			if err != nil {
				b.Fatal(err)
			}
			s := benchSampler(b, m, n, true)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := s.Step(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStepCategorical1D times one iteration of the paper's 1-D
// categorical example with n = 1000 particles.
func BenchmarkStepCategorical1D(b *testing.B) {
	m, err := categorical.New([]categorical.Variable{{States: []float64{-1, -0.5, 0, 0.5, 1}, Probs: []float64{0.1, 0.2, 0.3, 0.1, 0.3}}})
	if err != nil {
		b.Fatal(err)
	}
	s := benchSampler(b, m, 1000, false)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := s.Step(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReferenceProducts times, with gonum's Dgemm, the two matrix
// products an iteration needs at each size: the Gram matrix X·Xᵀ
// (n×n×d) and the kernel-weighted sums A·[S X] (n×n×2d). BENCHMARKS.md
// compares one iteration with their sum.
func BenchmarkReferenceProducts(b *testing.B) {
	for _, sz := range [][2]int{{100, 100}, {1000, 100}, {1000, 1000}} {
		n, d := sz[0], sz[1]
		b.Run(fmt.Sprintf("n=%d/d=%d", n, d), func(b *testing.B) {
			r := rng.Key{Seed: 1, Stream: 0}.Rand()
			x := make([]float64, n*d)
			sx := make([]float64, n*2*d)
			a := make([]float64, n*n)
			for i := range x {
				x[i] = r.NormFloat64()
			}
			for i := range sx {
				sx[i] = r.NormFloat64()
			}
			for i := range a {
				a[i] = r.Float64()
			}
			g := make([]float64, n*n)
			out := make([]float64, n*2*d)
			impl := gonum.Implementation{}
			for b.Loop() {
				impl.Dgemm(blas.NoTrans, blas.Trans, n, n, d, 1, x, d, x, d, 0, g, n)
				impl.Dgemm(blas.NoTrans, blas.NoTrans, n, 2*d, n, 1, a, n, sx, 2*d, 0, out, 2*d)
			}
		})
	}
}
