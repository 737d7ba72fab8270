package sw_test

import (
	"context"
	"fmt"

	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/sw"
	"github.com/dstein/dstein/transform"
)

// Run 1000 Swendsen–Wang chains on a strongly coupled 4×4 Ising grid whose
// two modes single-site Gibbs rarely crosses, and report the fraction of
// chains in the + mode (exact P(M > 0) = 0.813; the standard error over
// 1000 chains is 0.012) and the size of the clusters.
func Example() {
	fields := make([]float64, 16)
	for i := range fields {
		fields[i] = 0.05
	}
	m, _ := ising.Grid(4, 4, false, 0.8, fields)
	t, _ := transform.ForModel(nil, m)
	p := sampler.NewProblem(m, t, 1000, sampler.Init{}, rng.NewKey(1))
	s, _ := sw.New(p, sw.Settings{})
	sampler.Run(context.Background(), s, sampler.RunOptions{Iters: 100})
	plus := 0
	for c := range 1000 {
		mag := 0
		for _, v := range s.Current()[c*16 : (c+1)*16] {
			mag += 2*v - 1
		}
		if mag > 0 {
			plus++
		}
	}
	largest, _ := s.Stats().Value("largest_cluster_fraction")
	fmt.Printf("P(M > 0) ≈ %.2f; the largest cluster holds %.0f%% of the sites\n", float64(plus)/1000, 100*largest)
	// Output: P(M > 0) ≈ 0.81; the largest cluster holds 94% of the sites
}
