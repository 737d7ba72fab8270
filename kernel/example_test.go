package kernel_test

import (
	"fmt"

	"github.com/dstein/dstein/kernel"
)

// The RBF kernel of three points on a line with the paper's bandwidth rule.
func ExampleRBF() {
	x := []float64{0, 1, 3}
	r := kernel.NewRBF(3, 1)
	h := r.Compute(x, kernel.Bandwidth{Rule: kernel.RuleMedianPaper})
	fmt.Printf("h = %.4f\n", h)
	fmt.Printf("k(0,1) = %.4f, k(0,3) = %.4f\n", r.K[1], r.K[2])
	// Output:
	// h = 1.4427
	// k(0,1) = 0.5000, k(0,3) = 0.0020
}
