// Package balance holds the locally balanced functions of Zanella (2020)
// that the gradient-guided samplers (DLMC, the path auxiliary sampler,
// multi-flip Gibbs-with-Gradients) apply to an estimated probability
// ratio t = p*(z')/p*(z) to weigh a move to z'. Both functions satisfy
// g(t) = t·g(1/t), which makes a proposal that weighs moves by g balanced
// with respect to the target as the moves become local.
//
// The type is shared so that the methods' --balance flag has one type (the
// command line requires a flag name that several methods use to mean the
// same and parse alike).
package balance

import (
	"fmt"
	"math"
)

// Func is a locally balanced function g.
type Func int

const (
	// Sqrt is g(t) = √t, DISCS's SQRT (its default).
	Sqrt Func = iota
	// Ratio is g(t) = t/(1+t), DISCS's RATIO (Barker's function).
	Ratio
)

// String returns "sqrt" or "ratio".
func (b Func) String() string {
	if b == Ratio {
		return "ratio"
	}
	return "sqrt"
}

// MarshalText implements encoding.TextMarshaler.
func (b Func) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText parses "sqrt" or "ratio".
func (b *Func) UnmarshalText(t []byte) error {
	switch string(t) {
	case "sqrt":
		*b = Sqrt
	case "ratio":
		*b = Ratio
	default:
		return fmt.Errorf("unknown balancing function %q: want sqrt (g(t) = √t) or ratio (g(t) = t/(1+t))", t)
	}
	return nil
}

// LogWeight returns log g(e^δ), the log-weight of a move whose log-ratio is
// estimated as δ (−Inf for δ = −Inf).
func (b Func) LogWeight(delta float64) float64 {
	if b == Ratio {
		return LogSigmoid(delta)
	}
	return delta / 2
}

// LogSigmoid returns log σ(x) = −log(1 + e^−x) without overflow.
func LogSigmoid(x float64) float64 {
	if x >= 0 {
		return -math.Log1p(math.Exp(-x))
	}
	return x - math.Log1p(math.Exp(x))
}
