package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAddMulMatchesGo checks both loops' bits against their Go forms at
// every length from 0 to 40 (groups and tails), with values of every
// magnitude, and that nothing past len(u) is written.
func TestAddMulMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	val := func() float64 {
		switch r.IntN(4) {
		case 0:
			return r.NormFloat64()
		case 1:
			return r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
		case 2:
			return math.Float64frombits(r.Uint64()&^(0x7ff<<52) | uint64(r.IntN(2046)+1)<<52) // any finite normal
		}
		return float64(r.IntN(7) - 3)
	}
	fill := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = val()
		}
		return x
	}
	saved := useAsm
	defer func() { useAsm = saved }()
	for rep := range 200 {
		for n := range 41 {
			u0 := fill(n + 1)
			w := [4][]float64{fill(n), fill(n), fill(n), fill(n)}
			tt := [4]float64{val(), val(), val(), val()}
			var got [2][]float64
			var got1 [2][]float64
			for p, asm := range []bool{true, false} {
				useAsm = asm && saved
				u := append([]float64(nil), u0...)
				AddMul4(u[:n], &tt, w[0], w[1], w[2], w[3])
				got[p] = u
				v := append([]float64(nil), u0...)
				AddMul(v[:n], tt[0], w[0])
				got1[p] = v
			}
			for i := range n {
				// Each product rounded on its own (no build may fuse them).
				x := u0[i] + float64(tt[0]*w[0][i])
				x += float64(tt[1] * w[1][i])
				x += float64(tt[2] * w[2][i])
				want := x + float64(tt[3]*w[3][i])
				want1 := u0[i] + float64(tt[0]*w[0][i])
				for p := range 2 {
					if math.Float64bits(got[p][i]) != math.Float64bits(want) && !(math.IsNaN(got[p][i]) && math.IsNaN(want)) {
						t.Fatalf("rep %d, n %d, path %d: AddMul4 element %d is %v, want %v", rep, n, p, i, got[p][i], want)
					}
					if math.Float64bits(got1[p][i]) != math.Float64bits(want1) && !(math.IsNaN(got1[p][i]) && math.IsNaN(want1)) {
						t.Fatalf("rep %d, n %d, path %d: AddMul element %d is %v, want %v", rep, n, p, i, got1[p][i], want1)
					}
				}
			}
			for p := range 2 {
				if got[p][n] != u0[n] || got1[p][n] != u0[n] {
					t.Fatalf("n %d: wrote past the end", n)
				}
			}
		}
	}
}

// BenchmarkAddMul4 times the RBM gradient's shape: d = 100, M = 25 hidden
// units in groups of four.
func BenchmarkAddMul4(b *testing.B) {
	const d, m = 100, 24
	r := rand.New(rand.NewPCG(3, 4))
	w := make([]float64, m*d)
	for i := range w {
		w[i] = r.NormFloat64()
	}
	u := make([]float64, d)
	var tt [4]float64
	for _, asm := range []bool{true, false} {
		name := "go"
		if asm {
			name = "avx2"
		}
		b.Run(name, func(b *testing.B) {
			saved := useAsm
			useAsm = asm && saved
			defer func() { useAsm = saved }()
			for b.Loop() {
				for k := 0; k < m; k += 4 {
					AddMul4(u, &tt, w[k*d:], w[(k+1)*d:], w[(k+2)*d:], w[(k+3)*d:])
				}
			}
		})
	}
}

// CountAtLeastBytes's AVX-512 loop gives the Go loop's counts, and both the
// plain count, on thresholds equal to the masked value, one above and one
// below it, 0, 2⁵³ and random ones, for every length around the groups of
// eight and one to five rows.
func TestCountAtLeastBytesMatchesGo(t *testing.T) {
	if !useWide {
		t.Log("no AVX-512: only the Go loop is tested on this machine")
	}
	saved := useWide
	defer func() { useWide = saved }()
	r := rand.New(rand.NewPCG(7, 8))
	const mask = 1<<53 - 1
	for n := range 41 {
		for k := 1; k <= 5; k++ {
			stride := n + r.IntN(3)
			m := make([]uint64, n)
			thr := make([]uint64, (k-1)*stride+n)
			for i := range m {
				m[i] = r.Uint64()
			}
			for j := range k {
				for i := range n {
					x := m[i] & mask
					thr[j*stride+i] = []uint64{x, x + 1, max(x, 1) - 1, 0, 1 << 53, r.Uint64N(1 << 53)}[r.IntN(6)]
				}
			}
			want := make([]int, n)
			for i := range want {
				for j := range k {
					if m[i]&mask >= thr[j*stride+i] {
						want[i]++
					}
				}
			}
			for _, wide := range []bool{false, true} {
				useWide = wide && saved
				got := make([]uint8, n+1)
				for i := range got {
					got[i] = 0xff
				}
				CountAtLeastBytes(got[:n], m, mask, thr, stride, k)
				if got[n] != 0xff {
					t.Fatalf("n %d, k %d, AVX-512 %v: a byte past dst written", n, k, useWide)
				}
				for i := range got[:n] {
					if int(got[i]) != want[i] {
						t.Fatalf("n %d, k %d, AVX-512 %v, element %d: %d, want %d", n, k, useWide, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestSpinsMatchThreshold checks Spins, at every length from 0 to 40
// (groups of eight and tails), against SpinThreshold element by element
// with the vector loop and without: exponentials of every size, 0 (p = 1:
// the saturated threshold), +Inf (p = 0), NaN, values whose p lies next
// to 1 and 1/2, and words just below, at and just above each threshold;
// nothing past len(s) is written.
func TestSpinsMatchThreshold(t *testing.T) {
	if !useWide {
		t.Log("no AVX-512: only the Go loop is tested on this machine")
	}
	saved := useWide
	defer func() { useWide = saved }()
	if SpinThreshold(math.NaN()) != uint64(math.NaN()) || SpinThreshold(0) != math.MaxUint64 || SpinThreshold(math.Inf(1)) != 0 {
		t.Fatalf("SpinThreshold of NaN, 0, +Inf: %#x %#x %#x", SpinThreshold(math.NaN()), SpinThreshold(0), SpinThreshold(math.Inf(1)))
	}
	r := rand.New(rand.NewPCG(9, 10))
	special := []float64{0, math.Inf(1), math.NaN(), 1, 0x1p-53, 0x1p-60, 1e-300, 5e-324, 1e300, math.Nextafter(1, 2), math.Nextafter(1, 0)}
	for n := range 41 {
		for trial := range 200 {
			e := make([]float64, n)
			w := make([]uint64, n)
			for i := range e {
				switch r.IntN(3) {
				case 0:
					e[i] = special[r.IntN(len(special))]
				default:
					e[i] = math.Exp(20 * r.NormFloat64())
				}
				th := SpinThreshold(e[i])
				switch r.IntN(4) {
				case 0:
					w[i] = th - 1
				case 1:
					w[i] = th
				case 2:
					w[i] = th + 1
				default:
					w[i] = r.Uint64()
				}
			}
			for _, wide := range []bool{false, saved} {
				useWide = wide
				s := make([]float64, n+1)
				s[n] = 7
				Spins(s[:n], e, w)
				for i := range n {
					want := -1.0
					if w[i] < SpinThreshold(e[i]) {
						want = 1
					}
					if s[i] != want {
						t.Fatalf("n %d, trial %d, vector %v: s[%d] = %v for e = %v, w = %#x (threshold %#x); want %v", n, trial, wide, i, s[i], e[i], w[i], SpinThreshold(e[i]), want)
					}
				}
				if s[n] != 7 {
					t.Fatalf("n %d: wrote past len(s)", n)
				}
			}
		}
	}
}

// BenchmarkSpins times one block of the RBM's units (64, parallel
// tempering's block kernel) with the AVX-512 loop and with the Go loop.
func BenchmarkSpins(b *testing.B) {
	const n = 64
	r := rand.New(rand.NewPCG(5, 6))
	e, w, s := make([]float64, n), make([]uint64, n), make([]float64, n)
	for i := range e {
		e[i] = math.Exp(2 * r.NormFloat64())
		w[i] = r.Uint64()
	}
	for _, wide := range []bool{true, false} {
		name := "go"
		if wide {
			name = "avx512"
		}
		b.Run(name, func(b *testing.B) {
			saved := useWide
			useWide = wide && saved
			defer func() { useWide = saved }()
			for b.Loop() {
				Spins(s, e, w)
			}
		})
	}
}
