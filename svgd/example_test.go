package svgd_test

import (
	"fmt"

	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/svgd"
)

// The direction of three particles on a line towards a standard normal
// (scores s = −x), with equal log ratios and the default bandwidth rule
// h = med²/log(n+1): the squared distances are 1, 4 and 9, so h = 4/log 4.
func ExampleDirection() {
	x := []float64{0, 1, 3}
	s := []float64{0, -1, -3}
	w := make([]float64, 3)
	ess := svgd.Weights(w, []float64{0, 0, 0}, svgd.SelfNormalized, 1, nil)
	dir := svgd.New[float64](3, 1, svgd.RBF)
	dst := make([]float64, 3)
	h := dir.Compute(dst, x, s, w, kernel.Bandwidth{})
	fmt.Printf("ESS = %.1f, h = %.4f\n", ess, h)
	for i, v := range dst {
		fmt.Printf("Δx[%d] = %+.4f\n", i, v)
	}
	// Output:
	// ESS = 3.0, h = 2.8854
	// Δx[0] = -0.4739
	// Δx[1] = -0.5355
	// Δx[2] = -0.9372
}
