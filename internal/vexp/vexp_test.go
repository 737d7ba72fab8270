package vexp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The range of arguments the vector kernel evaluates (vexp_amd64.s holds
// these bounds): inside it math.Exp takes none of its special branches.
const (
	lo = -708.0
	hi = 709.0
)

// inputs returns arguments that cover the kernel's range densely, its edges,
// math.Exp's special branches (overflow, subnormal results, underflow to 0,
// NaN, infinities, signed zeros) and values that round to a multiple of
// ln 2 / 2 (where the reduction's rounding to the nearest integer ties).
func inputs(r *rand.Rand) []float64 {
	xs := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-300, -1e-300, 5e-324,
		lo, hi, math.Nextafter(lo, -1000), math.Nextafter(hi, 1000),
		-708.39, -708.4, -709, -744.44, -745.13, -746, -1000, 709.78, 709.79, 710, 1e308,
		math.Inf(1), math.Inf(-1), math.NaN(), math.Ln2 / 2, -math.Ln2 / 2, 3 * math.Ln2 / 2}
	for range 100000 {
		xs = append(xs, (r.Float64()*2-1)*750)
	}
	for range 50000 {
		xs = append(xs, r.NormFloat64()) // the kernel's typical arguments
	}
	for range 20000 {
		xs = append(xs, math.Float64frombits(r.Uint64())) // any bits
	}
	for k := -1100; k <= 1100; k++ {
		v := (float64(k) + 0.5) * math.Ln2
		xs = append(xs, v, math.Nextafter(v, 0), math.Nextafter(v, 2*v))
	}
	return xs
}

// path is one of Exp's kernels: AVX-512 (wide), AVX2 (asm) or math.Exp.
type path struct {
	name      string
	asm, wide bool
}

// paths returns the kernels this machine and build can run, the scalar
// loop last.
func paths() []path {
	var ps []path
	if useWide {
		ps = append(ps, path{"AVX-512", true, true})
	}
	if useAsm {
		ps = append(ps, path{"AVX2", true, false})
	}
	return append(ps, path{"math.Exp", false, false})
}

// with runs f on path p.
func (p path) with(f func()) {
	asm, wide := useAsm, useWide
	useAsm, useWide = p.asm, p.wide
	defer func() { useAsm, useWide = asm, wide }()
	f()
}

func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// TestExpMatchesMathExp checks every element's bits against math.Exp's, on
// the vector path (where the CPU has one) and on the scalar path, at every
// length and alignment of the tail.
func TestExpMatchesMathExp(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := inputs(r)
	r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
	for _, p := range paths() {
		p.with(func() { expMatches(t, p.name, xs) })
	}
	t.Logf("paths: %v; %d arguments", paths(), len(xs))
}

// expMatches is TestExpMatchesMathExp on the current path.
func expMatches(t *testing.T, asm string, xs []float64) {
	t.Helper()
	dst := make([]float64, len(xs))
	Exp(dst, xs)
	bad := 0
	for i, x := range xs {
		if want := math.Exp(x); !sameBits(dst[i], want) {
			if bad < 10 {
				t.Errorf("%s: Exp(%v) = %v (%#x), math.Exp gives %v (%#x)", asm, x, dst[i], math.Float64bits(dst[i]), want, math.Float64bits(want))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d elements differ from math.Exp", asm, bad, len(xs))
	}
	// Every length and start, so that groups and tails fall everywhere;
	// the element after the end must stay untouched.
	for start := range 9 {
		for n := range 40 {
			src := xs[start : start+n]
			out := make([]float64, n+1)
			out[n] = 42
			Exp(out, src)
			for i, x := range src {
				if !sameBits(out[i], math.Exp(x)) {
					t.Fatalf("%s, start %d, length %d: element %d differs", asm, start, n, i)
				}
			}
			if out[n] != 42 {
				t.Fatalf("%s, length %d: wrote past the end", asm, n)
			}
		}
	}
}

// TestExpInPlace checks that dst and x may be the same slice, with special
// values in the middle of groups.
func TestExpInPlace(t *testing.T) {
	x := []float64{1, 2, math.NaN(), 3, -800, 4, 5, 6, 7, 800, -1, -2, math.Inf(-1)}
	want := make([]float64, len(x))
	for i, v := range x {
		want[i] = math.Exp(v)
	}
	Exp(x, x)
	for i := range x {
		if !sameBits(x[i], want[i]) {
			t.Fatalf("element %d: %v, want %v", i, x[i], want[i])
		}
	}
}

// TestExpShortDst checks that a dst shorter than x panics instead of
// writing out of bounds.
func TestExpShortDst(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic with len(dst) < len(x)")
		}
	}()
	Exp(make([]float64, 3), make([]float64, 8))
}

func benchArgs(n int) []float64 {
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, n)
	for i := range x {
		x[i] = -r.ExpFloat64() * 3 // kernel exponentials: exp(−d²/h)
	}
	return x
}

// BenchmarkExp compares Exp with a loop of math.Exp over 1000 arguments.
func BenchmarkExp(b *testing.B) {
	x := benchArgs(1000)
	dst := make([]float64, len(x))
	b.Run("vexp", func(b *testing.B) {
		b.SetBytes(int64(8 * len(x)))
		for b.Loop() {
			Exp(dst, x)
		}
	})
	b.Run("math.Exp", func(b *testing.B) {
		b.SetBytes(int64(8 * len(x)))
		for b.Loop() {
			for i, v := range x {
				dst[i] = math.Exp(v)
			}
		}
	})
}

// TestTanhMatchesMathTanh checks Tanh's bits against math.Tanh's on both
// paths, across the branches of math.Tanh (|x| below 0.625, the exponential
// range, above 44.01) and special values.
func TestTanhMatchesMathTanh(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	xs := []float64{0, math.Copysign(0, -1), 0.625, -0.625, math.Nextafter(0.625, 0), tanhBig, -tanhBig,
		math.Nextafter(tanhBig, 100), 44, 45, 1e300, -1e300, math.Inf(1), math.Inf(-1), math.NaN(), 5e-324}
	for range 100000 {
		xs = append(xs, r.NormFloat64()*3, (r.Float64()*2-1)*50, math.Float64frombits(r.Uint64()))
	}
	for _, p := range paths() {
		asm := p.name
		dst := make([]float64, len(xs)+1)
		dst[len(xs)] = 42
		p.with(func() { Tanh(dst, xs) })
		for i, x := range xs {
			if want := math.Tanh(x); !sameBits(dst[i], want) {
				t.Fatalf("%s: Tanh(%v) = %v, math.Tanh gives %v", asm, x, dst[i], want)
			}
		}
		if dst[len(xs)] != 42 {
			t.Fatal("wrote past the end")
		}
	}
}

// BenchmarkTanh compares Tanh with a loop of math.Tanh over 25 arguments
// (an RBM's hidden units) and 1000.
func BenchmarkTanh(b *testing.B) {
	for _, n := range []int{25, 1000} {
		r := rand.New(rand.NewPCG(7, 8))
		x := make([]float64, n)
		for i := range x {
			x[i] = r.NormFloat64() * 3
		}
		dst := make([]float64, n)
		b.Run(fmt.Sprintf("vexp/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				Tanh(dst, x)
			}
		})
		b.Run(fmt.Sprintf("math.Tanh/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				for i, v := range x {
					dst[i] = math.Tanh(v)
				}
			}
		})
	}
}

// Log gives math.Log's bits on random arguments of every magnitude,
// subnormals, arguments at and around sqrt(2)/2·2^k (where math's kernel
// halves its mantissa), exact powers of two, 1 and its neighbours, and in
// groups holding special values (0, −0, negatives, +Inf, NaN), at every
// length around the groups of eight.
func TestLogMatchesMathLog(t *testing.T) {
	if !useLog {
		t.Log("no AVX-512: Log is math.Log itself on this machine")
	}
	r := rand.New(rand.NewPCG(11, 12))
	var xs []float64
	for range 20000 {
		xs = append(xs, math.Exp(r.Float64()*1400-700), r.Float64()*4)
	}
	for range 2000 {
		xs = append(xs, math.Float64frombits(r.Uint64N(1<<52)+1)) // subnormal
	}
	for k := -1074; k <= 1023; k++ {
		p := math.Ldexp(1, k)
		h := math.Ldexp(7.07106781186547524401e-01, k)
		xs = append(xs, p, math.Nextafter(p, 0), math.Nextafter(p, 2*p+1), h, math.Nextafter(h, 0), math.Nextafter(h, 1))
	}
	xs = append(xs, 1, math.Nextafter(1, 0), math.Nextafter(1, 2), math.MaxFloat64, math.SmallestNonzeroFloat64)
	specials := []float64{0, math.Copysign(0, -1), -1, -math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN()}
	for i, v := range specials {
		xs[100+37*i] = v
	}
	saved := useLog
	defer func() { useLog = saved }()
	for _, vec := range []bool{true, false} {
		useLog = vec && saved
		for _, n := range []int{len(xs), 0, 1, 7, 8, 9, 15, 16, 17} {
			got := make([]float64, n)
			Log(got, xs[:n])
			for i, v := range xs[:n] {
				want := math.Log(v)
				if math.Float64bits(got[i]) != math.Float64bits(want) && !(math.IsNaN(got[i]) && math.IsNaN(want)) {
					t.Fatalf("kernel %v, n %d: Log(%v) = %v (%#x), math.Log %v (%#x)", useLog, n, v, got[i], math.Float64bits(got[i]), want, math.Float64bits(want))
				}
			}
		}
	}
}

func BenchmarkLog(b *testing.B) {
	x := make([]float64, 1000)
	for i := range x {
		x[i] = 1 + float64(i)/100
	}
	dst := make([]float64, len(x))
	b.Run("vexp", func(b *testing.B) {
		for b.Loop() {
			Log(dst, x)
		}
	})
	b.Run("math", func(b *testing.B) {
		for b.Loop() {
			for i, v := range x {
				dst[i] = math.Log(v)
			}
		}
	})
}
