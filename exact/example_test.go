package exact_test

import (
	"context"
	"fmt"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/memlimit"
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

// Exact spin correlations of a 3×3 Ising grid: PairsFor takes the clamped
// transfer of the grid.
func ExamplePairsFor() {
	m, _ := ising.Grid(3, 3, false, 0.4, nil)
	p, _ := exact.PairsFor(context.Background(), m, memlimit.Budget{})
	fmt.Printf("%s: E[z_0 z_1] = %.4f, E[z_0 z_8] = %.4f\n", p.Route(), p.Moment(0, 1), p.Moment(0, 8))
	// Output:
	// ising-grid: E[z_0 z_1] = 0.4395, E[z_0 z_8] = 0.1272
}

// The mass of the positive-magnetisation mode of a 4×4 grid with a small
// positive field on one spin.
func ExampleModeMass() {
	fields := make([]float64, 16)
	fields[5] = 0.2
	m, _ := ising.Grid(4, 4, false, 0.5, fields)
	p, _ := exact.ModeMass(context.Background(), m, memlimit.Budget{})
	fmt.Printf("P(M > 0) + ½P(M = 0) = %.4f\n", p)
	// Output:
	// P(M > 0) + ½P(M = 0) = 0.5747
}
