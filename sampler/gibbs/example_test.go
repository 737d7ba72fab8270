package gibbs_test

import (
	"context"
	"fmt"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/transform"
)

// Run 4000 Gibbs chains on a 3×3 Ising grid for 50 sweeps and compare the
// mean spin of a corner with the exact answer (the standard error of the
// estimate is about 0.014).
func Example() {
	m, _ := ising.Grid(3, 3, false, 0.3, []float64{0.5, 0, 0, 0, 0, 0, 0, 0, 0})
	t, _ := transform.ForModel(nil, m)
	p := sampler.NewProblem(m, t, 4000, sampler.Init{}, rng.NewKey(1))
	s, _ := gibbs.New(p, gibbs.Settings{})
	sampler.Run(context.Background(), s, sampler.RunOptions{Iters: 50})
	marg := sampler.Marginals(m, &sampler.Samples{N: 4000, D: m.Dim(), Z: s.Current()})
	ex, _ := exact.Enumerate(m, 0)
	fmt.Printf("E[z0]: Gibbs %.2f, exact %.2f\n", sampler.Means(m, marg)[0], ex.Means[0])
	// Output: E[z0]: Gibbs 0.46, exact 0.46
}
