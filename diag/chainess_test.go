package diag

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The transform's autocovariances agree with direct sums.
func TestChainESSMatchesDirectSums(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{2, 3, 17, 100, 1000} {
		for _, rho := range []float64{0, 0.5, 0.95} {
			x := ar1Chain(r, n, rho)
			got, want := ChainESS(x), chainESSDirect(x)
			if math.Abs(got-want) > 1e-9*want {
				t.Errorf("n = %d, ρ = %g: ChainESS %g, direct sums %g", n, rho, got, want)
			}
		}
	}
}

// On an AR(1) chain of coefficient φ the ESS is N(1 − φ)/(1 + φ) in the
// limit. The estimator's relative standard deviation at N = 200,000 is
// below 2% for φ ≤ 0.9 (its sum runs over about 1/(1 − φ) lags, each
// ρ̂_k of standard error ≈ √((1 + φ²)/((1 − φ²)N))); the tolerance is 6%.
// The truncation at the first negative ρ̂_k drops a tail of weight
// ≈ φ^K, under 1% here.
func TestChainESSOnAR1(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 200000
	for _, phi := range []float64{0, 0.5, 0.9} {
		x := ar1Chain(r, n, phi)
		got, want := ChainESS(x), n*(1-phi)/(1+phi)
		if math.Abs(got/want-1) > 0.06 {
			t.Errorf("φ = %g: ESS %.0f, want %.0f within 6%%", phi, got, want)
		}
	}
}

// A constant chain counts as 1 (tfp's NaN, as DISCS counts it), an empty
// one as 0; a chain that alternates has ρ_1 = −1 at once and ESS N.
func TestChainESSEdges(t *testing.T) {
	if got := ChainESS([]float64{3, 3, 3, 3}); got != 1 {
		t.Errorf("constant chain: %g, want 1", got)
	}
	if got := ChainESS(nil); got != 0 {
		t.Errorf("empty chain: %g, want 0", got)
	}
	alt := make([]float64, 10)
	for i := range alt {
		alt[i] = float64(i % 2)
	}
	if got := ChainESS(alt); math.Abs(got-10) > 1e-9 {
		t.Errorf("alternating chain: %g, want 10", got)
	}
}

func ar1Chain(r *rand.Rand, n int, phi float64) []float64 {
	x := make([]float64, n)
	v := r.NormFloat64() / math.Sqrt(1-phi*phi)
	for i := range x {
		x[i] = v
		v = phi*v + r.NormFloat64()
	}
	return x
}
