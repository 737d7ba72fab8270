package metrics

import (
	"math"
	"testing"

	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

func randomSamples(n, d, k int, seed uint64) *sampler.Samples {
	r := rng.Key{Seed: seed, Stream: 0}.Rand()
	s := sampler.NewSamples(n, d)
	for i := range s.Z {
		s.Z[i] = r.IntN(k)
	}
	return s
}

// bruteMMD2 computes the V-statistic from its definition with math.Exp.
func bruteMMD2(q, ref *sampler.Samples, unbiased bool) float64 {
	d := float64(q.D)
	k := func(a []int, b []int) float64 {
		h := 0
		for i := range a {
			if a[i] != b[i] {
				h++
			}
		}
		return math.Exp(-float64(h) / d)
	}
	mean := func(a, b *sampler.Samples, skipDiag bool) float64 {
		var s float64
		c := 0
		for i := range a.N {
			for j := range b.N {
				if skipDiag && i == j {
					continue
				}
				s += k(a.Row(i), b.Row(j))
				c++
			}
		}
		return s / float64(c)
	}
	return mean(q, q, unbiased) - 2*mean(q, ref, false) + mean(ref, ref, unbiased)
}

func TestMMDMatchesBruteForce(t *testing.T) {
	for _, c := range []struct{ d, k int }{{5, 2}, {70, 2}, {130, 2}, {9, 4}} {
		q := randomSamples(23, c.d, c.k, 1)
		ref := randomSamples(31, c.d, c.k, 2)
		r := NewReference(ref)
		if got, want := r.MMD2(q), bruteMMD2(q, ref, false); math.Abs(got-want) > 1e-12 {
			t.Errorf("d=%d K=%d: MMD² = %v; brute force %v", c.d, c.k, got, want)
		}
		if got, want := r.MMD2Unbiased(q), bruteMMD2(q, ref, true); math.Abs(got-want) > 1e-12 {
			t.Errorf("d=%d K=%d: unbiased MMD² = %v; brute force %v", c.d, c.k, got, want)
		}
	}
}

// The V-statistic of a sample against itself is 0, and it grows as the
// sample moves away from the reference.
func TestMMDSanity(t *testing.T) {
	ref := randomSamples(200, 40, 2, 3)
	r := NewReference(ref)
	if v := r.MMD2(ref); v > 1e-12 {
		t.Errorf("MMD² of the reference against itself is %v", v)
	}
	biased := randomSamples(200, 40, 2, 4)
	for i := range biased.Z {
		if i%3 == 0 {
			biased.Z[i] = 1
		}
	}
	fair := randomSamples(200, 40, 2, 5)
	if r.MMD2(biased) <= r.MMD2(fair) {
		t.Errorf("a biased sample (%v) is not further than a fair one (%v)", r.MMD2(biased), r.MMD2(fair))
	}
}

func TestMSE(t *testing.T) {
	if got := MSE([]float64{1, 2, 3}, []float64{1, 0, 0}); math.Abs(got-13.0/3) > 1e-15 {
		t.Errorf("MSE = %v", got)
	}
}

func BenchmarkMMD2(b *testing.B) {
	ref := randomSamples(20000, 100, 2, 1)
	r := NewReference(ref)
	q := randomSamples(500, 100, 2, 2)
	for b.Loop() {
		r.MMD2(q)
	}
}
