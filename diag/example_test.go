package diag_test

import (
	"fmt"
	"math"

	"github.com/dstein/dstein/diag"
	"github.com/dstein/dstein/rng"
)

// Summarize four AR(1) chains (φ = 0.9, true ESS of the mean 4000·0.1/1.9
// ≈ 211), then the same chains with the last one moved up by 3 (R̂ flags
// it), then a quantity that never changes and one whose chains are each
// stuck at their own value.
func ExampleSummarize() {
	r := rng.NewKey(1).For(rng.Test).Rand()
	chains := make([][]float64, 4)
	for c := range chains {
		x := make([]float64, 1000)
		x[0] = r.NormFloat64()
		for i := 1; i < len(x); i++ {
			x[i] = 0.9*x[i-1] + math.Sqrt(1-0.81)*r.NormFloat64()
		}
		chains[c] = x
	}
	show := func(name string, chains [][]float64) {
		s, err := diag.Summarize(chains)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-8s R̂ %.2f  bulk-ESS %4.0f  tail-ESS %4.0f  ESS(mean) %4.0f  mean %5.2f ± %.2f\n",
			name, s.Rhat, s.BulkESS, s.TailESS, s.ESSMean, s.Mean, s.MCSE)
	}
	show("mixing", chains)
	for i := range chains[3] {
		chains[3][i] += 3
	}
	show("shifted", chains)
	show("constant", [][]float64{{1, 1, 1, 1}, {1, 1, 1, 1}})
	show("stuck", [][]float64{{0, 0, 0, 0}, {1, 1, 1, 1}})
	show("short", [][]float64{{0, 1, 2}, {1, 2, 3}})
	// Output:
	// mixing   R̂ 1.02  bulk-ESS  215  tail-ESS  425  ESS(mean)  214  mean  0.12 ± 0.07
	// shifted  R̂ 1.47  bulk-ESS    8  tail-ESS   38  ESS(mean)    7  mean  0.87 ± 0.62
	// constant R̂ 1.00  bulk-ESS    8  tail-ESS    8  ESS(mean)    8  mean  1.00 ± 0.00
	// stuck    R̂ +Inf  bulk-ESS    3  tail-ESS    3  ESS(mean)    3  mean  0.50 ± 0.33
	// diag: chains too short: 3 draws per chain, need at least 4
}
