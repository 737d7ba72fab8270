package optim_test

import (
	"fmt"

	"github.com/dstein/dstein/optim"
)

// Adam ascends f(x) = −(x₀ − 3)² − 10 (x₁ + 1)² from the origin along its
// gradient, with the default betas and ε. The first step is lr in every
// coordinate, whatever the size of the gradient.
func ExampleAdam() {
	x := []float64{0, 0}
	g := make([]float64, 2)
	a := optim.NewAdam[float64](len(x), 0, 0, 0)
	for t := 1; t <= 500; t++ {
		g[0], g[1] = -2*(x[0]-3), -20*(x[1]+1)
		c1, c2 := a.Corrections(t)
		moved := a.Update(x, g, 0, len(x), 0.05, c1, c2)
		if t == 1 || t == 500 {
			fmt.Printf("step %d: x = (%.4f, %.4f), Σ|step| = %.4f\n", t, x[0], x[1], moved)
		}
	}
	// Output:
	// step 1: x = (0.0500, -0.0500), Σ|step| = 0.1000
	// step 500: x = (3.0000, -1.0000), Σ|step| = 0.0000
}
