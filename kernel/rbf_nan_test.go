package kernel

import (
	"math"
	"testing"
)

// A point with a NaN or infinite coordinate, and a subnormal fixed
// bandwidth (−‖x_i − x_j‖²/h is NaN for identical points), give kernel
// entries of 0, not NaN, as the kernel always did: the exponentials are
// taken in bulk, and an argument that is NaN or below −746 is sent as −Inf.
func TestRBFNaNArgumentsGiveZero(t *testing.T) {
	x := []float64{0, 1, 2, math.NaN(), 0, 1, math.Inf(1), 3, 1, 1, 2, 2, 0, 1, 2, 5, 1, 0, 0, 0}
	r := NewRBF(10, 2)
	r.Compute(x, Bandwidth{Rule: RuleFixed, H: 1})
	for i := range 10 {
		for j := range 10 {
			if v := r.K[i*10+j]; math.IsNaN(v) {
				t.Fatalf("K[%d][%d] is NaN", i, j)
			}
		}
	}
	if r.K[1*10+0] != 0 || r.K[3*10+1] != 0 {
		t.Fatalf("entries with a NaN or infinite point: %v, %v; want 0", r.K[1*10+0], r.K[3*10+1])
	}
	r.Compute(x, Bandwidth{Rule: RuleFixed, H: 5e-320})
	if v := r.K[6*10+0]; v != 0 { // points 0 and 6 are both (0, 1)
		t.Fatalf("identical points under a subnormal bandwidth: K = %v; want 0 (0·(−Inf) is NaN)", v)
	}
}
