package gemm

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/dstein/dstein/rng"
)

func naive(a, b []float64, m, n, k int) []float64 {
	c := make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				s += a[i*k+p] * b[j*k+p]
			}
			c[i*n+j] = s
		}
	}
	return c
}

func TestABtMatchesNaive(t *testing.T) {
	r := rng.Key{Seed: 1, Stream: 0}.Rand()
	for _, sz := range [][3]int{{1, 1, 1}, {3, 5, 2}, {4, 4, 4}, {9, 7, 13}, {33, 21, 0}, {64, 70, 100}} {
		m, n, k := sz[0], sz[1], sz[2]
		a := make([]float64, m*k)
		b := make([]float64, n*k)
		for i := range a {
			a[i] = r.NormFloat64()
		}
		for i := range b {
			b[i] = r.NormFloat64()
		}
		want := naive(a, b, m, n, k)
		c := make([]float64, m*n)
		(&ABt{C: c, A: a, B: b, M: m, N: n, K: k, Ldc: n, Lda: k, Ldb: k}).Mul()
		for i := range c {
			if math.Abs(c[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
				t.Fatalf("%v: C[%d] = %v; want %v", sz, i, c[i], want[i])
			}
		}
		if m == n {
			cl := make([]float64, m*n)
			(&ABt{C: cl, A: a, B: a, M: m, N: m, K: k, Ldc: m, Lda: k, Ldb: k, Lower: true}).Mul()
			wl := naive(a, a, m, m, k)
			for i := range m {
				for j := range m {
					got := cl[i*m+j]
					if j < i && math.Abs(got-wl[i*m+j]) > 1e-12*(1+math.Abs(wl[i*m+j])) {
						t.Fatalf("%v lower: C[%d][%d] = %v; want %v", sz, i, j, got, wl[i*m+j])
					}
					if j >= i && got != 0 {
						t.Fatalf("%v lower: wrote C[%d][%d]", sz, i, j)
					}
				}
			}
		}
	}
}

func TestABtSameBitsOnOneAndTwoCores(t *testing.T) {
	r := rng.Key{Seed: 2, Stream: 0}.Rand()
	m, n, k := 103, 57, 77
	a := make([]float64, m*k)
	b := make([]float64, n*k)
	for i := range a {
		a[i] = r.NormFloat64()
	}
	for i := range b {
		b[i] = r.NormFloat64()
	}
	c1 := make([]float64, m*n)
	c2 := make([]float64, m*n)
	old := runtime.GOMAXPROCS(1)
	(&ABt{C: c1, A: a, B: b, M: m, N: n, K: k, Ldc: n, Lda: k, Ldb: k}).Mul()
	runtime.GOMAXPROCS(2)
	(&ABt{C: c2, A: a, B: b, M: m, N: n, K: k, Ldc: n, Lda: k, Ldb: k}).Mul()
	runtime.GOMAXPROCS(old)
	for i := range c1 {
		if c1[i] != c2[i] {
			t.Fatalf("C[%d] differs: %v vs %v", i, c1[i], c2[i])
		}
	}
}

// BenchmarkABt compares this package's product with gonum's Dgemm on the
// shapes of a GF-SVGD iteration at n = 1000, d = 100.
func BenchmarkABt(b *testing.B) {
	r := rng.Key{Seed: 3, Stream: 0}.Rand()
	for _, sz := range [][3]int{{1000, 1000, 100}, {1000, 200, 1000}} {
		m, n, k := sz[0], sz[1], sz[2]
		a := make([]float64, m*k)
		bb := make([]float64, n*k)
		for i := range a {
			a[i] = r.NormFloat64()
		}
		for i := range bb {
			bb[i] = r.NormFloat64()
		}
		c := make([]float64, m*n)
		b.Run(fmt.Sprintf("dstein/m=%d/n=%d/k=%d", m, n, k), func(b *testing.B) {
			p := &ABt{C: c, A: a, B: bb, M: m, N: n, K: k, Ldc: n, Lda: k, Ldb: k}
			for b.Loop() {
				p.Mul()
			}
		})
		b.Run(fmt.Sprintf("gonum/m=%d/n=%d/k=%d", m, n, k), func(b *testing.B) {
			for b.Loop() {
				gonum.Implementation{}.Dgemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, k, bb, k, 0, c, n)
			}
		})
	}
}

func TestGonumAllocs(t *testing.T) {
	m, n, k := 1000, 200, 1000
	a := make([]float64, m*k)
	bb := make([]float64, n*k)
	c := make([]float64, m*n)
	al := testing.AllocsPerRun(5, func() {
		gonum.Implementation{}.Dgemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, k, bb, k, 0, c, n)
	})
	t.Logf("gonum Dgemm allocs per call: %v", al)
}
