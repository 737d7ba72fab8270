package vec

import (
	"math"
	"math/bits"
)

// AddMul4 sets u[i] = (((u[i] + t[0]·w0[i]) + t[1]·w1[i]) + t[2]·w2[i]) +
// t[3]·w3[i] for every i < len(u), each product and sum rounded on its own.
// w0…w3 must be at least as long as u and must not overlap it.
func AddMul4(u []float64, t *[4]float64, w0, w1, w2, w3 []float64) {
	n := len(u)
	w0, w1, w2, w3 = w0[:n], w1[:n], w2[:n], w3[:n]
	i := 0
	if useAsm && n >= 4 {
		i = n &^ 3
		addMul4AVX2(&u[0], t, &w0[0], &w1[0], &w2[0], &w3[0], i/4)
	}
	t0, t1, t2, t3 := t[0], t[1], t[2], t[3]
	for ; i < n; i++ {
		x := u[i] + float64(t0*w0[i])
		x += float64(t1 * w1[i])
		x += float64(t2 * w2[i])
		u[i] = x + float64(t3*w3[i])
	}
}

// AddMul sets u[i] = u[i] + t·w[i] for every i < len(u). w must be at least
// as long as u and must not overlap it.
func AddMul(u []float64, t float64, w []float64) {
	n := len(u)
	w = w[:n]
	i := 0
	if useAsm && n >= 4 {
		i = n &^ 3
		addMulAVX2(&u[0], t, &w[0], i/4)
	}
	for ; i < n; i++ {
		u[i] += float64(t * w[i])
	}
}

// Wide reports whether CountAtLeastBytes runs its AVX-512 loop: callers with a
// faster Go form of their own for narrow counts keep it elsewhere.
func Wide() bool { return useWide }

// CountAtLeastBytes sets dst[i] to the number of j < k with m[i]&mask ≥
// thr[j·stride+i], for every i < len(dst): a count of thresholds, each
// row of them (stride apart) a threshold per element. m must be at least
// as long as dst, thr must hold (k−1)·stride + len(dst) elements, k must
// be below 256, and every value compared must be below 2⁶³.
func CountAtLeastBytes(dst []uint8, m []uint64, mask uint64, thr []uint64, stride, k int) {
	n := len(dst)
	if n == 0 || k <= 0 {
		clear(dst)
		return
	}
	m = m[:n]
	_ = thr[(k-1)*stride+n-1]
	i := 0
	if useWide && n >= 8 {
		i = n &^ 7
		countAtLeastAVX512(&dst[0], &m[0], mask, &thr[0], stride, k, i/8)
	}
	for ; i < n; i++ {
		x, c := m[i]&mask, 0
		for j := range k {
			c += int(^uint64(int64(x)-int64(thr[j*stride+i])) >> 63)
		}
		dst[i] = uint8(c)
	}
}

// SpinThreshold returns ⌊p·2⁶⁴⌋ for p = 1/(1+e), saturating at 2⁶⁴−1: a
// ±1 variable whose conditional log-odds are 2l becomes +1 when a uniform
// 64-bit integer falls below the threshold of e = exp(−2l). (A NaN e gives
// Go's uint64 of NaN: 2⁶³ on amd64.)
func SpinThreshold(e float64) uint64 {
	p := 1 / (1 + e)
	if p >= 1 {
		return math.MaxUint64
	}
	return uint64(p * (1 << 64))
}

// Spins sets s[i] to +1 where w[i] < SpinThreshold(e[i]) and to −1
// elsewhere, for every i < len(s), eight at a time where the CPU has
// AVX-512 (the same thresholds: the same division, product and
// truncation). e and w must be at least as long as s.
func Spins(s, e []float64, w []uint64) {
	n := len(s)
	e, w = e[:n], w[:n]
	i := 0
	if useWide && n >= 8 {
		i = n &^ 7
		spinsAVX512(&s[0], &e[0], &w[0], i/8)
	}
	for ; i < n; i++ {
		_, borrow := bits.Sub64(w[i], SpinThreshold(e[i]), 0) // 1 where w < threshold
		s[i] = float64(2*int(borrow) - 1)
	}
}
