package bnn

import (
	"fmt"
	"math"
)

// Mode selects how sign is computed and differentiated in a pass.
type Mode int

const (
	// STE: sign forward, straight-through gradient 1{|x| ≤ 1} backward.
	STE Mode = iota
	// SignSwish: sign forward, the SignSwish derivative (BNN+) backward.
	SignSwish
	// Relaxed: σ(x) = 2/(1+e^(−x)) − 1 forward and its exact derivative.
	Relaxed
)

// String returns "ste", "signswish" or "relaxed".
func (m Mode) String() string {
	switch m {
	case STE:
		return "ste"
	case SignSwish:
		return "signswish"
	case Relaxed:
		return "relaxed"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// DefaultSwishBeta is the slope β of the SignSwish derivative (BNN+ starts
// from β = 5 for weights and activations; here it stays fixed).
const DefaultSwishBeta = 5

// sign returns +1 for x ≥ 0 and −1 otherwise.
func sign(x float32) float32 {
	if x >= 0 {
		return 1
	}
	return -1
}

// sigma is the paper's relaxation σ(x) = 2/(1+e^(−x)) − 1 = tanh(x/2).
func sigma(x float32) float32 {
	return float32(math.Tanh(float64(x) / 2))
}

// binarize writes the forward values of sign (or its relaxation σ(x/τ)
// with temperature tau) of x into y under mode m.
func binarize(m Mode, tau float32, x, y []float32) {
	if m == Relaxed {
		inv := 1 / tau
		for i, v := range x {
			y[i] = sigma(v * inv)
		}
		return
	}
	for i, v := range x {
		y[i] = sign(v)
	}
}

// binarizeGrad multiplies dy by the derivative (or surrogate derivative) of
// sign at x under mode m, writing into dx. y holds the forward values; beta
// is the SignSwish slope and tau the relaxation's temperature.
func binarizeGrad(m Mode, beta, tau float32, x, y, dy, dx []float32) {
	switch m {
	case Relaxed:
		c := 1 / (2 * tau)
		for i, v := range y {
			dx[i] = dy[i] * (1 - v*v) * c
		}
	case SignSwish:
		b := float64(beta)
		for i, v := range x {
			bx := b * float64(v)
			if math.Abs(bx) > 40 {
				dx[i] = 0
				continue
			}
			d := b * (2 - bx*math.Tanh(bx/2)) / (1 + math.Cosh(bx))
			dx[i] = dy[i] * float32(d)
		}
	default:
		for i, v := range x {
			if v >= -1 && v <= 1 {
				dx[i] = dy[i]
			} else {
				dx[i] = 0
			}
		}
	}
}
