package numeric

import "math"

// LogSumExp returns log Σ exp(x_i). It returns −Inf for an empty slice or
// when every element is −Inf, and +Inf when any element is +Inf.
func LogSumExp(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		if v > m {
			m = v
		}
	}
	if math.IsInf(m, 0) {
		return m
	}
	var s float64
	for _, v := range x {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

// Log2Cosh returns log(2 cosh(a)) without overflow.
func Log2Cosh(a float64) float64 {
	a = math.Abs(a)
	return a + math.Log1p(math.Exp(-2*a))
}

// LogSigmoid returns log(1/(1+exp(−a))) without overflow or underflow to −Inf
// for finite a.
func LogSigmoid(a float64) float64 {
	if a >= 0 {
		return -math.Log1p(math.Exp(-a))
	}
	return a - math.Log1p(math.Exp(a))
}

// Sigmoid returns 1/(1+exp(−a)).
func Sigmoid(a float64) float64 {
	if a >= 0 {
		return 1 / (1 + math.Exp(-a))
	}
	e := math.Exp(a)
	return e / (1 + e)
}

// Log1mExp returns log(1 − exp(a)) for a ≤ 0, accurately for a near 0 and for
// a very negative. It returns −Inf at a = 0.
func Log1mExp(a float64) float64 {
	if a > -math.Ln2 {
		return math.Log(-math.Expm1(a))
	}
	return math.Log1p(-math.Exp(a))
}

// LogDiffExp returns log(exp(a) − exp(b)) for a ≥ b. It returns −Inf when
// a = b (including both −Inf).
func LogDiffExp(a, b float64) float64 {
	if math.IsInf(b, -1) {
		return a
	}
	if b >= a {
		return math.Inf(-1)
	}
	return a + Log1mExp(b-a)
}

// NormalizeLogWeights turns log-weights into weights that sum to one, in
// place, and returns the effective sample size 1/Σw². Entries equal to +Inf
// share all the mass equally; if every entry is −Inf the weights are uniform.
// NaN entries are a programming error and cause a panic.
func NormalizeLogWeights(w []float64) (ess float64) {
	n := len(w)
	if n == 0 {
		return 0
	}
	m := math.Inf(-1)
	nInf := 0
	for _, v := range w {
		if math.IsNaN(v) {
			panic("numeric: NaN log-weight")
		}
		if math.IsInf(v, 1) {
			nInf++
		}
		if v > m {
			m = v
		}
	}
	switch {
	case nInf > 0:
		u := 1 / float64(nInf)
		for i, v := range w {
			if math.IsInf(v, 1) {
				w[i] = u
			} else {
				w[i] = 0
			}
		}
	case math.IsInf(m, -1):
		u := 1 / float64(n)
		for i := range w {
			w[i] = u
		}
	default:
		var s float64
		for i, v := range w {
			e := math.Exp(v - m)
			w[i] = e
			s += e
		}
		inv := 1 / s
		for i := range w {
			w[i] *= inv
		}
	}
	var s2 float64
	for _, v := range w {
		s2 += v * v
	}
	return 1 / s2
}
