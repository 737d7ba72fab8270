package metrics_test

import (
	"context"
	"fmt"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/memlimit"
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

// Scores of 200 exact draws of a 3×3 Ising grid beyond the means: the error
// of the spin correlations, the TV distance of the energy histogram, the
// mass of the positive-magnetisation mode, and the share of MMD² (exact,
// against the enumerated distribution) that the marginals explain.
func Example_beyondTheMeans() {
	ctx := context.Background()
	m, _ := ising.Grid(3, 3, false, 0.3, []float64{0.4, 0, 0, 0, 0, 0, 0, 0, 0})
	ex, _ := exact.For(m)
	s := sampler.NewSamples(200, 9)
	ex.Sample(s.Z, rng.NewKey(2).For(rng.Sample).Rand())

	pairs, _ := exact.PairsFor(ctx, m, memlimit.Budget{})
	fmt.Printf("pair RMSE %.4f\n", metrics.PairRMSE(s, pairs))
	bins, _ := metrics.ExactEnergyBins(ctx, m, 0, 0)
	fmt.Printf("energy TV %.4f over %d bins\n", bins.TV(s), bins.Bins())
	mode, _ := metrics.ExactModeMass(ctx, m, memlimit.Budget{})
	est, _ := metrics.SampleModeMass(m, s)
	fmt.Printf("mode mass %.4f, sample %.4f\n", mode.P, est)
	total, orders, _ := metrics.ExactMMD2(ctx, m, s, 0)
	first := metrics.FirstOrderMMD2(sampler.Marginals(m, s), ex.Result().Marginals)
	fmt.Printf("MMD² %.5f, first order %.5f (= %.5f)\n", total, first, orders[1])
	// Output:
	// pair RMSE 0.0707
	// energy TV 0.0688 over 12 bins
	// mode mass 0.5730, sample 0.5450
	// MMD² 0.00115, first order 0.00075 (= 0.00075)
}
