package transform

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Base is a one-dimensional base density p0 with what the transform needs
// of it. Implementations must be safe for concurrent use.
type Base interface {
	// LogProb returns log p0(x).
	LogProb(x float64) float64
	// Score returns d/dx log p0(x).
	Score(x float64) float64
	// Quantile returns the x with P(X ≤ x) = p, accurately for tiny p.
	Quantile(p float64) float64
	// UpperQuantile returns the x with P(X > x) = q, accurately for tiny q.
	UpperQuantile(q float64) float64
}

// Normal is the standard normal base N(0, 1), the paper's choice.
type Normal struct{}

var _ Base = Normal{}

const logSqrt2Pi = 0.91893853320467274178032973640561763986139747363778

// LogProb returns −x²/2 − log √(2π).
func (Normal) LogProb(x float64) float64 { return -0.5*x*x - logSqrt2Pi }

// Score returns −x.
func (Normal) Score(x float64) float64 { return -x }

// Quantile returns Φ⁻¹(p), accurate to about 1 ulp down to p = 1e-300.
func (Normal) Quantile(p float64) float64 { return distuv.UnitNormal.Quantile(p) }

// UpperQuantile returns −Φ⁻¹(q), using the symmetry of N(0, 1).
func (Normal) UpperQuantile(q float64) float64 { return -distuv.UnitNormal.Quantile(q) }

// CDF returns Φ(x), computed from the lower tail for accuracy on both sides
// in the callers that need it.
func (Normal) CDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
