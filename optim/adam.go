package optim

import (
	"fmt"
	"math"
)

// Float is the element type of the optimised values.
type Float interface{ ~float32 | ~float64 }

// Adam is Adam's state for a vector of values, ascending along the given
// directions (Kingma and Ba 2015, with bias correction). The moments are
// kept in T; each update is computed in float64, so the float64 and float32
// versions follow the same formula.
type Adam[T Float] struct {
	// Beta1 and Beta2 are the moment decay rates, Eps the denominator
	// offset.
	Beta1, Beta2, Eps float64
	// M and V are the first and second moments.
	M, V []T
}

// Defaults of Adam.
const (
	DefaultBeta1   = 0.9
	DefaultBeta2   = 0.999
	DefaultEpsilon = 1e-8
)

// NewAdam returns Adam's state for size values (betas and ε 0 mean the
// defaults).
func NewAdam[T Float](size int, beta1, beta2, eps float64) *Adam[T] {
	if beta1 == 0 {
		beta1 = DefaultBeta1
	}
	if beta2 == 0 {
		beta2 = DefaultBeta2
	}
	if eps == 0 {
		eps = DefaultEpsilon
	}
	return &Adam[T]{Beta1: beta1, Beta2: beta2, Eps: eps, M: make([]T, size), V: make([]T, size)}
}

// Validate reports betas outside [0, 1) or a negative or non-finite ε.
func Validate(beta1, beta2, eps float64) error {
	bad := func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }
	switch {
	case bad(beta1) || beta1 < 0 || beta1 >= 1 || bad(beta2) || beta2 < 0 || beta2 >= 1:
		return fmt.Errorf("Adam betas are %v and %v; want each in [0, 1)", beta1, beta2)
	case bad(eps) || eps < 0:
		return fmt.Errorf("Adam epsilon is %v; want a finite number > 0", eps)
	}
	return nil
}

// Corrections returns the bias corrections 1 − β₁ᵗ and 1 − β₂ᵗ of step t
// (1-based).
func (a *Adam[T]) Corrections(t int) (c1, c2 float64) {
	return 1 - math.Pow(a.Beta1, float64(t)), 1 - math.Pow(a.Beta2, float64(t))
}

// Update moves x[k] for k in [lo, hi) along g[k]: the moments M[k], V[k]
// decay and take in g[k], and x[k] += lr·(M[k]/c1)/(√(V[k]/c2) + ε) with the
// corrections of Corrections. It returns Σ|step| over the range. x and g are
// indexed like M and V.
func (a *Adam[T]) Update(x, g []T, lo, hi int, lr, c1, c2 float64) float64 {
	b1, b2, eps := a.Beta1, a.Beta2, a.Eps
	m, v := a.M[lo:hi], a.V[lo:hi]
	x, g = x[lo:hi], g[lo:hi]
	x, g = x[:len(m)], g[:len(m)]
	var tot float64
	for k := range m {
		gk := float64(g[k])
		mk := b1*float64(m[k]) + (1-b1)*gk
		vk := b2*float64(v[k]) + (1-b2)*gk*gk
		m[k], v[k] = T(mk), T(vk)
		step := lr * (float64(m[k]) / c1) / (math.Sqrt(float64(v[k])/c2) + eps)
		x[k] = T(float64(x[k]) + step)
		tot += math.Abs(step)
	}
	return tot
}

// Reset forgets the first moment of the values in [lo, hi) (a move that
// was undone points the wrong way).
func (a *Adam[T]) Reset(lo, hi int) { clear(a.M[lo:hi]) }
