package exact_test

import (
	"fmt"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model/ising"
)

// Exact means of a two-spin Ising model with a positive coupling and a
// field on the first spin.
func ExampleEnumerate() {
	m, _ := ising.New(2, []ising.Edge{{I: 0, J: 1, Coupling: 0.5}}, []float64{0.3, 0})
	res, _ := exact.Enumerate(m, 0)
	fmt.Printf("log Z = %.4f, E[z] = %.4f\n", res.LogZ, res.Means)
	// Output:
	// log Z = 1.5507, E[z] = [0.2913 0.1346]
}
