package vexp

import "math"

// Exp sets dst[i] = math.Exp(x[i]) for every i < len(x), with the same bits.
// dst must be at least as long as x; dst and x may be the same slice.
func Exp(dst, x []float64) {
	n := len(x)
	dst = dst[:n]
	i := 0
	for i < n {
		var lanes int
		switch {
		case useWide && n-i >= 8:
			lanes = 8
			i += expAVX512(&dst[i], &x[i], (n-i)/8)
		case useAsm && n-i >= 4:
			lanes = 4
			i += expAVX2(&dst[i], &x[i], (n-i)/4)
		default:
			for ; i < n; i++ {
				dst[i] = math.Exp(x[i])
			}
			return
		}
		if i+lanes <= n {
			// The kernel stopped before the end of its groups: this group
			// has an argument outside [−708, 709], for math.Exp's special
			// branches.
			for j := i; j < i+lanes; j++ {
				dst[j] = math.Exp(x[j])
			}
			i += lanes
		}
	}
}

// Log sets dst[i] = math.Log(x[i]) for every i < len(x), with the same
// bits: eight at a time where the CPU has AVX-512 (math.Log's amd64
// operations in lanes), math.Log itself elsewhere and for arguments that
// are not positive and finite. dst must be at least as long as x; dst and
// x may be the same slice.
func Log(dst, x []float64) {
	n := len(x)
	dst = dst[:n]
	i := 0
	for useLog && n-i >= 8 {
		i += logAVX512(&dst[i], &x[i], (n-i)/8)
		if i+8 <= n {
			// The kernel stopped before this group: an argument in it
			// takes one of math.Log's special cases.
			for j := i; j < i+8; j++ {
				dst[j] = math.Log(x[j])
			}
			i += 8
		}
	}
	for ; i < n; i++ {
		dst[i] = math.Log(x[i])
	}
}

// Tanh sets dst[i] = math.Tanh(x[i]) for every i < len(x), with the same
// bits. dst must be at least as long as x and must not overlap it.
//
// math.Tanh takes 1 − 2/(e^{2|x|} + 1), signed, for 0.625 ≤ |x| ≤ 44.01;
// Tanh takes those exponentials together with Exp and leaves every other
// argument (small, large, NaN) to math.Tanh.
func Tanh(dst, x []float64) {
	n := len(x)
	dst = dst[:n]
	for i, v := range x {
		dst[i] = 2 * math.Abs(v)
	}
	Exp(dst, dst)
	for i, v := range x {
		z := math.Abs(v)
		if !(z >= 0.625 && z <= tanhBig) {
			dst[i] = math.Tanh(v)
			continue
		}
		t := 1 - 2/(dst[i]+1)
		if v < 0 {
			t = -t
		}
		dst[i] = t
	}
}

// tanhBig is half of math.Tanh's MAXLOG, log(2^127): above it math.Tanh
// returns ±1 without an exponential.
const tanhBig = 0.5 * 8.8029691931113054295988e+01
