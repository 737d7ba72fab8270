package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/dstein/dstein/rng"
)

// naive is the definition of the product: each entry accumulated with one
// FMA per k, in order of increasing k, from 0.
func naive(a, b []float64, m, n, k int) []float64 {
	c := make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				s = math.FMA(a[i*k+p], b[j*k+p], s)
			}
			c[i*n+j] = s
		}
	}
	return c
}

func normals(r *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	return x
}

// withPureGo runs f with the assembly kernel switched off.
func withPureGo(f func()) {
	old := useAsm
	useAsm = false
	defer func() { useAsm = old }()
	f()
}

// asmKernels returns the assembly kernels this machine and build can run:
// AVX2 (useWide false), then AVX-512 (useWide true); none without useAsm.
func asmKernels() []bool {
	switch {
	case !useAsm:
		return nil
	case useWide:
		return []bool{false, true}
	}
	return []bool{false}
}

// kernelName names an assembly kernel of asmKernels.
func kernelName(wide bool) string {
	if wide {
		return "AVX-512"
	}
	return "AVX2"
}

// kernelNames names asmKernels.
func kernelNames() []string {
	var s []string
	for _, w := range asmKernels() {
		s = append(s, kernelName(w))
	}
	return s
}

// withKernel runs f with the AVX-512 kernel (wide) or the AVX2 one.
func withKernel(wide bool, f func()) {
	old := useWide
	useWide = wide
	defer func() { useWide = old }()
	f()
}

// withAsmAlways runs f with the assembly kernel used for every size (where
// there is one).
func withAsmAlways(f func()) {
	old := asmMinWork
	asmMinWork = 0
	defer func() { asmMinWork = old }()
	f()
}

func TestABtMatchesNaive(t *testing.T) {
	r := rng.Key{Seed: 1, Stream: 0}.Rand()
	for _, sz := range [][3]int{{1, 1, 1}, {3, 5, 2}, {4, 4, 4}, {9, 7, 13}, {33, 21, 0}, {64, 70, 100}, {130, 150, 300}} {
		m, n, k := sz[0], sz[1], sz[2]
		a, b := normals(r, m*k), normals(r, n*k)
		want := naive(a, b, m, n, k)
		c := make([]float64, m*n)
		(&ABt{C: c, A: a, B: b, M: m, N: n, K: k, Ldc: n, Lda: k, Ldb: k}).Mul()
		for i := range c {
			if math.Float64bits(c[i]) != math.Float64bits(want[i]) {
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
					if j < i && math.Float64bits(got) != math.Float64bits(wl[i*m+j]) {
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

// sentinel marks the entries of C that a product must not write.
const sentinel = -7.25

// oddCase is a product whose operands sit at offsets inside larger slices,
// with leading dimensions larger than the shape needs.
type oddCase struct {
	m, n, k    int
	lower      bool
	bkn        bool      // B stored K×N (BKxN), ldb ≥ n
	a, b       []float64 // the operands, row-major with leading dimension k
	lda, ldb   int
	offA, offB int
	ldc, offC  int
}

// newOddCase makes a case with B stored n×k (or, with bkn, k×n: not with
// lower).
func newOddCase(r *rand.Rand, m, n, k int, lower, bkn bool) *oddCase {
	oc := &oddCase{m: m, n: n, k: k, lower: lower, bkn: bkn, a: normals(r, m*k), b: normals(r, n*k)}
	if lower {
		oc.b = oc.a
	}
	oc.lda, oc.ldb, oc.ldc = k+3, k+1, n+5
	if bkn {
		oc.ldb = n + 2
	}
	oc.offA, oc.offB, oc.offC = 7, 1, 3
	return oc
}

// layouts are the ways an oddCase stores B: n×k (lower or not), and k×n
// (BKxN, not with lower): {lower, bkn}.
var layouts = [][2]bool{{false, false}, {true, false}, {false, true}}

// run computes the product with the current settings and returns C (m×n,
// leading dimension n), checking that nothing outside the written entries
// changed.
func (oc *oddCase) run(t *testing.T) []float64 {
	t.Helper()
	m, n, k := oc.m, oc.n, oc.k
	ab := make([]float64, oc.offA+m*oc.lda+2)
	bb := make([]float64, oc.offB+n*oc.ldb+2)
	for i := range ab {
		ab[i] = math.NaN() // poison: the product must not read outside the operands
	}
	for i := range bb {
		bb[i] = math.NaN()
	}
	for i := range m {
		copy(ab[oc.offA+i*oc.lda:], oc.a[i*k:(i+1)*k])
	}
	if oc.bkn {
		// K rows of N: entry (j, p) of b at p·ldb + j.
		bb = make([]float64, oc.offB+k*oc.ldb+2)
		for i := range bb {
			bb[i] = math.NaN()
		}
		for j := range n {
			for p := range k {
				bb[oc.offB+p*oc.ldb+j] = oc.b[j*k+p]
			}
		}
	} else {
		for j := range n {
			copy(bb[oc.offB+j*oc.ldb:], oc.b[j*k:(j+1)*k])
		}
	}
	cb := make([]float64, oc.offC+m*oc.ldc+4)
	for i := range cb {
		cb[i] = sentinel
	}
	p := &ABt{C: cb[oc.offC:], A: ab[oc.offA:], B: bb[oc.offB:], M: m, N: n, K: k, Ldc: oc.ldc, Lda: oc.lda, Ldb: oc.ldb, Lower: oc.lower, BKxN: oc.bkn}
	if oc.lower {
		p.B = p.A
		p.Ldb = p.Lda
	}
	p.Mul()
	c := make([]float64, m*n)
	for idx, v := range cb {
		i, j := (idx-oc.offC)/oc.ldc, (idx-oc.offC)%oc.ldc
		written := idx >= oc.offC && i < m && j < n && (!oc.lower || j < i)
		if written {
			c[i*n+j] = v
		} else if v != sentinel {
			t.Fatalf("%v: wrote outside the product at offset %d", oc, idx)
		}
	}
	return c
}

func (oc *oddCase) String() string {
	return fmt.Sprintf("m=%d n=%d k=%d lower=%v bkn=%v", oc.m, oc.n, oc.k, oc.lower, oc.bkn)
}

// sameBits reports the first entry (j < i only when lower) whose bits differ.
func sameBits(t *testing.T, what string, oc *oddCase, got, want []float64) {
	t.Helper()
	for i := range oc.m {
		for j := range oc.n {
			if oc.lower && j >= i {
				continue
			}
			g, w := got[i*oc.n+j], want[i*oc.n+j]
			if math.Float64bits(g) != math.Float64bits(w) {
				t.Fatalf("%v: %s: C[%d][%d] = %v (%#x); want %v (%#x)", oc, what, i, j, g, math.Float64bits(g), w, math.Float64bits(w))
			}
		}
	}
}

var oddSizes = []int{1, 2, 3, 5, 7, 8, 9, 17, 31, 64, 100, 129}

// TestAsmMatchesPureGoBits compares the assembly path, the pure-Go path and
// the naive FMA loop bit for bit on odd shapes, strides and offsets.
func TestAsmMatchesPureGoBits(t *testing.T) {
	if !useAsm {
		t.Log("no assembly kernel on this machine or build: checking the pure-Go path only")
	}
	r := rng.Key{Seed: 4, Stream: 0}.Rand()
	sizes := oddSizes
	if testing.Short() {
		sizes = []int{1, 3, 8, 9, 31, 100}
	}
	for _, m := range sizes {
		for _, n := range sizes {
			for _, k := range sizes {
				for _, lay := range layouts {
					lower, bkn := lay[0], lay[1]
					if lower && m != n {
						continue
					}
					oc := newOddCase(r, m, n, k, lower, bkn)
					want := naive(oc.a, oc.b, m, n, k)
					var pure []float64
					withPureGo(func() { pure = oc.run(t) })
					sameBits(t, "pure Go vs naive FMA", oc, pure, want)
					for _, wide := range asmKernels() {
						var asm []float64
						withKernel(wide, func() { withAsmAlways(func() { asm = oc.run(t) }) })
						sameBits(t, kernelName(wide)+" vs naive FMA", oc, asm, want)
					}
				}
			}
		}
	}
}

// TestABtSameBitsAtAnyGOMAXPROCS checks every path at GOMAXPROCS 1, 2 and 16.
func TestABtSameBitsAtAnyGOMAXPROCS(t *testing.T) {
	r := rng.Key{Seed: 2, Stream: 0}.Rand()
	for _, sz := range [][3]int{{103, 57, 77}, {301, 301, 290}, {257, 1031, 513}} {
		m, n, k := sz[0], sz[1], sz[2]
		a, b := normals(r, m*k), normals(r, n*k)
		want := naive(a, b, m, n, k)
		for _, lower := range []bool{false, true} {
			if lower && m != n {
				continue
			}
			bb := b
			if lower {
				bb = a
				want = naive(a, a, m, m, k)
			}
			for _, procs := range []int{1, 2, 16} {
				old := runtime.GOMAXPROCS(procs)
				for _, path := range append([]string{"pure Go"}, kernelNames()...) {
					c := make([]float64, m*n)
					mul := func() {
						(&ABt{C: c, A: a, B: bb, M: m, N: n, K: k, Ldc: n, Lda: k, Ldb: k, Lower: lower}).Mul()
					}
					switch path {
					case "pure Go":
						withPureGo(mul)
					default:
						withKernel(path == kernelName(true), mul)
					}
					oc := &oddCase{m: m, n: n, k: k, lower: lower}
					sameBits(t, fmt.Sprintf("GOMAXPROCS=%d %s", procs, path), oc, c, want)
				}
				runtime.GOMAXPROCS(old)
			}
		}
	}
}

// TestSerialAndRowBlocksKeepBits checks that a product run on the calling
// goroutine (Serial), and products of blocks of A's rows (as callers that
// split particles over the cores make them), give every entry the bits of
// the whole product on every path.
func TestSerialAndRowBlocksKeepBits(t *testing.T) {
	r := rng.Key{Seed: 7, Stream: 0}.Rand()
	for _, sz := range [][3]int{{100, 25, 100}, {97, 100, 25}, {301, 57, 290}} {
		m, n, k := sz[0], sz[1], sz[2]
		a, b := normals(r, m*k), normals(r, n*k)
		want := naive(a, b, m, n, k)
		oc := &oddCase{m: m, n: n, k: k}
		for _, path := range append([]string{"pure Go"}, kernelNames()...) {
			run := func(f func()) {
				if path == "pure Go" {
					withPureGo(f)
					return
				}
				withKernel(path == kernelName(true), func() { withAsmAlways(f) })
			}
			c := make([]float64, m*n)
			run(func() { (&ABt{C: c, A: a, B: b, M: m, N: n, K: k, Ldc: n, Lda: k, Ldb: k, Serial: true}).Mul() })
			sameBits(t, path+" serial", oc, c, want)
			for _, rows := range []int{1, 3, 12, 13} {
				c := make([]float64, m*n)
				run(func() {
					for lo := 0; lo < m; lo += rows {
						hi := min(lo+rows, m)
						(&ABt{C: c[lo*n:], A: a[lo*k:], B: b, M: hi - lo, N: n, K: k, Ldc: n, Lda: k, Ldb: k, Serial: true}).Mul()
					}
				})
				sameBits(t, fmt.Sprintf("%s in blocks of %d rows", path, rows), oc, c, want)
			}
		}
	}
}

// TestMulAllocs checks that Mul allocates nothing once warm, on both paths,
// with the ABt on the caller's stack, even after a garbage collection (the
// packing buffers are kept in free lists, not in a sync.Pool).
func TestMulAllocs(t *testing.T) {
	r := rng.Key{Seed: 5, Stream: 0}.Rand()
	for _, sz := range [][3]int{{100, 200, 100}, {301, 301, 290}, {5, 3, 2}} {
		m, n, k := sz[0], sz[1], sz[2]
		a, b := normals(r, m*k), normals(r, n*k)
		c := make([]float64, m*n)
		for _, lower := range []bool{false, true} {
			if lower && m != n {
				continue
			}
			for _, pure := range []bool{false, true} {
				f := func() {
					(&ABt{C: c, A: a, B: b, M: m, N: n, K: k, Ldc: n, Lda: k, Ldb: k, Lower: lower}).Mul()
				}
				f()
				runtime.GC()
				var al float64
				if pure {
					withPureGo(func() { al = testing.AllocsPerRun(10, f) })
				} else {
					al = testing.AllocsPerRun(10, f)
				}
				if al != 0 {
					t.Errorf("%v lower=%v pure=%v: %v allocations per call", sz, lower, pure, al)
				}
			}
		}
	}
}

// benchShapes are the products of a GF-SVGD iteration: (M, N, K, lower).
var benchShapes = []struct {
	m, n, k int
	lower   bool
}{
	{1000, 1000, 100, false},
	{100, 200, 100, false},
	{1000, 200, 1000, false},
	{1000, 2000, 1000, false},
	{1000, 1000, 100, true},  // X·Xᵀ, n = 1000, d = 100
	{1000, 1000, 1000, true}, // X·Xᵀ, n = 1000, d = 1000
}

// BenchmarkABt compares this package's product (the dispatched path and the
// pure-Go path) with gonum's Dgemm on the shapes of a GF-SVGD iteration,
// reporting GFLOP/s (2·M·N·K flops, half of it for a lower triangle). Run it
// with -test.cpu 1, then 2, in two processes for one and two workers (a
// -cpu 1,2 list runs b.Loop benchmarks at its last value: BENCHMARKS.md).
func BenchmarkABt(b *testing.B) {
	r := rng.Key{Seed: 3, Stream: 0}.Rand()
	for _, sh := range benchShapes {
		m, n, k := sh.m, sh.n, sh.k
		a := normals(r, m*k)
		bb := normals(r, n*k)
		if sh.lower {
			bb = a
		}
		c := make([]float64, m*n)
		flops := 2 * float64(m) * float64(n) * float64(k)
		name := fmt.Sprintf("m=%d/n=%d/k=%d", m, n, k)
		if sh.lower {
			flops /= 2
			name += "/lower"
		}
		p := &ABt{C: c, A: a, B: bb, M: m, N: n, K: k, Ldc: n, Lda: k, Ldb: k, Lower: sh.lower}
		b.Run("dstein/"+name, func(b *testing.B) {
			for b.Loop() {
				p.Mul()
			}
			reportGFLOPs(b, flops)
		})
		b.Run("purego/"+name, func(b *testing.B) {
			withPureGo(func() {
				for b.Loop() {
					p.Mul()
				}
			})
			reportGFLOPs(b, flops)
		})
		b.Run("gonum/"+name, func(b *testing.B) {
			for b.Loop() {
				gonum.Implementation{}.Dgemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, k, bb, k, 0, c, n)
			}
			// Dgemm computes the whole square even for a lower triangle:
			// compare the times per product.
			reportGFLOPs(b, 2*float64(m)*float64(n)*float64(k))
		})
	}
}

// reportGFLOPs reports the rate of flops per iteration, in GFLOP/s.
func reportGFLOPs(b *testing.B, flops float64) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkFMAPeak measures one core's double-precision FMA throughput with
// twelve independent vector accumulators (AVX2; scalar math.FMA where there
// is no assembly), and avx512 the same with 512-bit vectors: the peaks
// against which the kernels' GFLOP/s are judged.
func BenchmarkFMAPeak(b *testing.B) {
	const steps = 1 << 16
	b.Run("avx2", func(b *testing.B) {
		if !fmaPeakOK {
			b.Skip("no AVX2/FMA")
		}
		for b.Loop() {
			fmaPeak(steps)
		}
		reportGFLOPs(b, fmaPeakFlops*steps)
	})
	b.Run("avx512", func(b *testing.B) {
		if !fmaPeak512OK {
			b.Skip("no AVX-512F")
		}
		for b.Loop() {
			fmaPeak512(steps)
		}
		reportGFLOPs(b, 2*fmaPeakFlops*steps)
	})
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

// TestBKxNRefusals: a K×N B with Lower or with a PackedB (packed for the
// n×k layout) is a programming mistake, refused on every path.
func TestBKxNRefusals(t *testing.T) {
	b := make([]float64, 12)
	for _, path := range []string{"pure Go", "assembly"} {
		run := func(p ABt) (panicked bool) {
			defer func() { panicked = recover() != nil }()
			if path == "pure Go" {
				withPureGo(p.Mul)
			} else {
				withAsmAlways(p.Mul)
			}
			return false
		}
		c := make([]float64, 16)
		if !run(ABt{C: c, A: b, B: b, M: 4, N: 4, K: 3, Ldc: 4, Lda: 3, Ldb: 4, BKxN: true, Lower: true}) {
			t.Errorf("%s: BKxN with Lower ran", path)
		}
		pb := PackB(b, 4, 3, 3)
		if !run(ABt{C: c, A: b, B: b, M: 4, N: 4, K: 3, Ldc: 4, Lda: 3, Ldb: 4, BKxN: true, Packed: pb}) {
			t.Errorf("%s: BKxN with Packed ran", path)
		}
	}
}
