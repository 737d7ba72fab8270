package diag

import (
	"math"
	"math/rand/v2"
)

// ar1 returns m stationary AR(1) chains of n draws,
// x_t = φ x_{t−1} + √(1−φ²) ε_t with x_0 and ε_t standard normal, so that
// every draw is N(0, 1) and the ESS of the mean of S draws is
// S(1−φ)/(1+φ) for long chains.
func ar1(r *rand.Rand, m, n int, phi float64) [][]float64 {
	chains := make([][]float64, m)
	s := math.Sqrt(1 - phi*phi)
	for c := range chains {
		x := make([]float64, n)
		x[0] = r.NormFloat64()
		for i := 1; i < n; i++ {
			x[i] = phi*x[i-1] + s*r.NormFloat64()
		}
		chains[c] = x
	}
	return chains
}
