package diag

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/dstein/dstein/rng"
)

// replicate runs f R times and returns the mean and the standard error of
// the mean of each of its values.
func replicate(R int, f func() []float64) (mean, se []float64) {
	var sum, sum2 []float64
	for range R {
		v := f()
		if sum == nil {
			sum, sum2 = make([]float64, len(v)), make([]float64, len(v))
		}
		for i, x := range v {
			sum[i] += x
			sum2[i] += x * x
		}
	}
	for i := range sum {
		m := sum[i] / float64(R)
		sd := math.Sqrt(max(sum2[i]/float64(R)-m*m, 0) * float64(R) / float64(R-1))
		mean, se = append(mean, m), append(se, sd/math.Sqrt(float64(R)))
	}
	return mean, se
}

// checkRatios fails when a mean ratio misses 1 by more than tol, and also
// when 4 standard errors exceed tol: the test then could not tell a right
// estimator from a wrong one, and needs more replicates.
func checkRatios(t *testing.T, name string, names []string, mean, se []float64, tol float64) {
	t.Helper()
	for i, k := range names {
		t.Logf("%s %s: mean ratio %.4f ± %.4f (SE)", name, k, mean[i], se[i])
		if 4*se[i] > tol {
			t.Errorf("%s %s: 4 SE = %.3f exceeds the tolerance %.3f", name, k, 4*se[i], tol)
		}
		if math.Abs(mean[i]-1) > tol {
			t.Errorf("%s %s: mean ratio to the truth %.4f ± %.4f (SE), tolerance %.3f", name, k, mean[i], se[i], tol)
		}
	}
}

// For AR(1) chains, x_t = φ x_{t−1} + √(1−φ²) ε_t, the ESS of the mean of
// S draws is S(1−φ)/(1+φ) (larger than S for φ < 0). ESSMean and BulkESS
// (rank normalisation of Gaussian draws is close to a linear map) must
// both find it. Each φ is simulated 20 times with 4 chains of 4000 draws;
// the relative SD of one estimate is about 0.03 (φ = 0), 0.045 (0.5), 0.04
// (−0.3) and 0.09 (0.9), so the SE of the mean of 20 is at most 0.011
// (0.021 for φ = 0.9) and the tolerances, 5% (10% for φ = 0.9), are at
// least 4 SE, which checkRatios verifies on the spot. The estimator's own
// bias at this length (about −1.5% at φ = 0, from the truncation of
// Geyer's sequence) lies inside them.
func TestAR1ESS(t *testing.T) {
	r := rng.NewKey(31).For(rng.Test).Rand()
	var w Workspace
	for _, c := range []struct{ phi, tol float64 }{{0, 0.05}, {0.5, 0.05}, {0.9, 0.10}, {-0.3, 0.05}} {
		const m, n = 4, 4000
		truth := m * n * (1 - c.phi) / (1 + c.phi)
		mean, se := replicate(20, func() []float64 {
			s, err := w.Summarize(ar1(r, m, n, c.phi))
			if err != nil {
				t.Fatal(err)
			}
			return []float64{s.ESSMean / truth, s.BulkESS / truth}
		})
		checkRatios(t, "AR(1) φ = "+strconv.FormatFloat(c.phi, 'g', -1, 64), []string{"ESSMean", "BulkESS"}, mean, se, c.tol)
	}
}

// iid draws, normal and Bernoulli(0.3) (ties: two values), 4 chains of
// 1000. R̂ − 1 of iid split chains (k = 8 halves of n = 500) is about
// (χ²₇/7 − 1)/(2n), SD √(2/7)/(2n) ≈ 0.00053: every replicate's R̂ must
// lie within 1 ± 6 SD (0.0032; the max of the two R̂ leans up by about
// half an SD). Every ESS ≈ S: the relative SD of one estimate is about
// 0.045 (0.06 for a few seeds' worth of variation), so with 40 replicates
// the SE of the mean is about 0.007–0.01 and the tolerance 5% is at least
// 4 SE (checked). TailESS is the smaller of two estimates, each with a
// relative SD σ ≈ 0.06, so it sits below S by about σ/√π ≈ 0.035 besides
// (0.95 observed); its tolerance is that bias plus 4 SE, 8%. For the
// Bernoulli draws the 95% indicator is constant and TailESS is the ESS of
// one indicator, so no such bias.
func TestIIDRhatESS(t *testing.T) {
	r := rng.NewKey(32).For(rng.Test).Rand()
	var w Workspace
	const m, n = 4, 1000
	const S = m * n
	rhatTol := 6 * math.Sqrt(2.0/7) / (2 * 500)
	for _, c := range []struct {
		name string
		draw func(*rand.Rand) float64
	}{
		{"normal", (*rand.Rand).NormFloat64},
		{"Bernoulli(0.3)", func(r *rand.Rand) float64 {
			if r.Float64() < 0.3 {
				return 1
			}
			return 0
		}},
	} {
		mean, se := replicate(40, func() []float64 {
			chains := make([][]float64, m)
			for j := range chains {
				chains[j] = make([]float64, n)
				for i := range chains[j] {
					chains[j][i] = c.draw(r)
				}
			}
			s, err := w.Summarize(chains)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(s.Rhat-1) > rhatTol {
				t.Errorf("%s: R̂ = %v, want 1 ± %.4f", c.name, s.Rhat, rhatTol)
			}
			return []float64{s.ESSMean / S, s.BulkESS / S, s.TailESS / S}
		})
		checkRatios(t, c.name, []string{"ESSMean", "BulkESS"}, mean[:2], se[:2], 0.05)
		checkRatios(t, c.name, []string{"TailESS"}, mean[2:], se[2:], 0.08)
	}
}

// Over many AR(1) runs (φ = 0.5, 4 chains of 500, ESS ≈ 667), the
// interval mean ± 1.645·MCSE must cover the true mean 0 in 90% of them,
// and SD ± 1.645·MCSESD the true SD 1 (the chains have unit stationary
// variance). With 1000 runs the binomial SE of a coverage is
// √(0.9·0.1/1000) ≈ 0.0095; the tolerance is 4 SE = 0.038. The delta
// method's interval for SD is symmetric where SD's sampling distribution
// is slightly skewed; at 2000 draws that is far below the tolerance.
func TestMCSECoverage(t *testing.T) {
	r := rng.NewKey(33).For(rng.Test).Rand()
	var w Workspace
	const runs = 1000
	var mean, sd int
	for range runs {
		s, err := w.Summarize(ar1(r, 4, 500, 0.5))
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(s.Mean) <= 1.645*s.MCSE {
			mean++
		}
		if math.Abs(s.SD-1) <= 1.645*s.MCSESD {
			sd++
		}
	}
	se := math.Sqrt(0.9 * 0.1 / runs)
	for _, c := range []struct {
		what    string
		covered int
	}{{"the mean", mean}, {"SD", sd}} {
		cov := float64(c.covered) / runs
		t.Logf("coverage of %s %.3f", c.what, cov)
		if math.Abs(cov-0.9) > 4*se {
			t.Errorf("coverage of %s %.3f, want 0.900 ± %.3f", c.what, cov, 4*se)
		}
	}
}
