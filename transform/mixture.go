package transform

import (
	"fmt"
	"math"

	"github.com/dstein/dstein/internal/numeric"
)

// Mixture is the base p0(x) = Σ_k w_k N(x; μ_k, σ_k²), for the paper's
// study of the choice of transform. Its quantiles are found by bisection on
// the CDF (or on the upper tail for upper quantiles), to within a few ulps.
type Mixture struct {
	logw  []float64
	mu    []float64
	sigma []float64
}

var _ Base = (*Mixture)(nil)

// NewMixture returns the mixture with weights w (normalised here), means mu
// and standard deviations sigma (all of one length).
func NewMixture(w, mu, sigma []float64) (*Mixture, error) {
	if len(w) == 0 || len(w) != len(mu) || len(w) != len(sigma) {
		return nil, fmt.Errorf("mixture: %d weights, %d means and %d spreads; want the same positive number", len(w), len(mu), len(sigma))
	}
	var tot float64
	for k := range w {
		if !(w[k] >= 0) || math.IsInf(w[k], 0) || math.IsNaN(mu[k]) || math.IsInf(mu[k], 0) || !(sigma[k] > 0) || math.IsInf(sigma[k], 0) {
			return nil, fmt.Errorf("mixture component %d: weight %v, mean %v, spread %v; want finite, weight ≥ 0 and spread > 0", k, w[k], mu[k], sigma[k])
		}
		tot += w[k]
	}
	if !(tot > 0) {
		return nil, fmt.Errorf("mixture weights sum to %v", tot)
	}
	m := &Mixture{mu: append([]float64(nil), mu...), sigma: append([]float64(nil), sigma...)}
	for _, v := range w {
		m.logw = append(m.logw, math.Log(v/tot))
	}
	return m, nil
}

func (m *Mixture) comp(x float64, k int) float64 {
	z := (x - m.mu[k]) / m.sigma[k]
	return m.logw[k] - 0.5*z*z - logSqrt2Pi - math.Log(m.sigma[k])
}

// LogProb returns log p0(x).
func (m *Mixture) LogProb(x float64) float64 {
	var buf [16]float64
	terms := buf[:0]
	for k := range m.mu {
		terms = append(terms, m.comp(x, k))
	}
	return numeric.LogSumExp(terms)
}

// Score returns d/dx log p0(x) = Σ_k r_k(x)·(μ_k − x)/σ_k², r_k the
// posterior responsibilities.
func (m *Mixture) Score(x float64) float64 {
	lp := m.LogProb(x)
	var s float64
	for k := range m.mu {
		s += math.Exp(m.comp(x, k)-lp) * (m.mu[k] - x) / (m.sigma[k] * m.sigma[k])
	}
	return s
}

// cdf returns P(X ≤ x) and P(X > x), each summed from its own tail.
func (m *Mixture) cdf(x float64) (lower, upper float64) {
	for k := range m.mu {
		w := math.Exp(m.logw[k])
		z := (x - m.mu[k]) / m.sigma[k]
		lower += w * 0.5 * math.Erfc(-z/math.Sqrt2)
		upper += w * 0.5 * math.Erfc(z/math.Sqrt2)
	}
	return lower, upper
}

// CDF returns P(X ≤ x).
func (m *Mixture) CDF(x float64) float64 { l, _ := m.cdf(x); return l }

func (m *Mixture) bracket() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for k := range m.mu {
		lo = math.Min(lo, m.mu[k]-40*m.sigma[k])
		hi = math.Max(hi, m.mu[k]+40*m.sigma[k])
	}
	return lo, hi
}

// solve bisects for the x where f(x) = target, f increasing.
func solve(f func(float64) float64, target, lo, hi float64) float64 {
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid == lo || mid == hi {
			break
		}
		if f(mid) < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + (hi-lo)/2
}

// Quantile returns the x with P(X ≤ x) = p.
func (m *Mixture) Quantile(p float64) float64 {
	lo, hi := m.bracket()
	return solve(m.CDF, p, lo, hi)
}

// UpperQuantile returns the x with P(X > x) = q.
func (m *Mixture) UpperQuantile(q float64) float64 {
	lo, hi := m.bracket()
	return solve(func(x float64) float64 { _, u := m.cdf(x); return -u }, -q, lo, hi)
}
