package metrics_test

import (
	"fmt"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/metrics"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// Score 200 exact samples of a 3×3 Ising grid: the MSE of their means
// against the exact means, and their MMD² against a large exact reference
// sample (both small, as they should be for exact draws).
func Example() {
	m, _ := ising.Grid(3, 3, false, 0.3, []float64{0.4, 0, 0, 0, 0, 0, 0, 0, 0})
	ex, _ := exact.For(m)
	ref := sampler.NewSamples(5000, 9)
	ex.Sample(ref.Z, rng.NewKey(1).For(rng.Sample).Rand())
	s := sampler.NewSamples(200, 9)
	ex.Sample(s.Z, rng.NewKey(2).For(rng.Sample).Rand())
	means := sampler.Means(m, sampler.Marginals(m, s))
	fmt.Printf("MSE of the means %.4f\n", metrics.MSE(means, ex.Result().Means))
	fmt.Printf("MMD² %.4f\n", metrics.NewReference(ref).MMD2(s))
	// Output:
	// MSE of the means 0.0025
	// MMD² 0.0011
}
