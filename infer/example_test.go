package infer_test

import (
	"context"
	"fmt"

	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/rng"
)

// Run dstein's default preset on a 3×3 Ising grid with a field on one
// corner, and compare two of its estimated means with the sign of the
// field.
func ExampleRun() {
	m, _ := ising.Grid(3, 3, false, 0.2, []float64{1, 0, 0, 0, 0, 0, 0, 0, 0})
	p, _ := infer.Preset("default")
	// SpecFor runs the default as its chains: 200 draws from 4 chains.
	out, _ := infer.Run(context.Background(), m, infer.SpecFor("default", p, 200, rng.NewKey(1)))
	fmt.Println(infer.Describe(out.Pipeline))
	fmt.Printf("status %s, %d samples; E[z0] > 0.5: %v, E[z8] near 0: %v\n", out.Status, out.Samples.N, out.Means[0] > 0.5, out.Means[8] > -0.2 && out.Means[8] < 0.2)
	// Output:
	// pt (6400 rounds of K sweeps and a swap phase)
	// status completed, 200 samples; E[z0] > 0.5: true, E[z8] near 0: true
}
