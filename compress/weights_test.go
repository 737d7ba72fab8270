package compress

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The projection lands on the simplex and satisfies the optimality
// conditions of min ‖x − v‖² there: x = max(0, v − θ) for one θ.
func TestProjectSimplex(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		n := 1 + r.IntN(12)
		v := make([]float64, n)
		for i := range v {
			v[i] = 4 * (r.Float64() - 0.5)
		}
		x := append([]float64(nil), v...)
		projectSimplex(x)
		var sum float64
		theta := math.NaN()
		for i, xi := range x {
			if xi < 0 {
				t.Fatalf("trial %d: negative entry %v", trial, xi)
			}
			sum += xi
			if xi > 0 {
				if th := v[i] - xi; math.IsNaN(theta) {
					theta = th
				} else if math.Abs(th-theta) > 1e-12 {
					t.Fatalf("trial %d: positive entries shifted by %v and %v", trial, theta, th)
				}
			}
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Fatalf("trial %d: entries sum to %v", trial, sum)
		}
		for i, xi := range x {
			if xi == 0 && v[i] > theta+1e-12 {
				t.Fatalf("trial %d: entry %d is 0 but v − θ = %v > 0", trial, i, v[i]-theta)
			}
		}
	}
}
