package gwg_test

import (
	"context"
	"fmt"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gwg"
	"github.com/dstein/dstein/transform"
)

// Run 2000 chains on a small RBM and compare the mean of the first visible
// unit with the exact answer (standard error about 0.02).
func Example() {
	m, _ := rbm.Random(8, 3, 0.7, 1, 5)
	t, _ := transform.ForModel(nil, m)
	p := sampler.NewProblem(m, t, 2000, sampler.Init{}, rng.NewKey(1))
	s, _ := gwg.New(p, gwg.Settings{})
	sampler.Run(context.Background(), s, sampler.RunOptions{Iters: 100})
	marg := sampler.Marginals(m, &sampler.Samples{N: 2000, D: m.Dim(), Z: s.Current()})
	ex, _ := exact.Enumerate(m, 0)
	acc, _ := s.Stats().Value("acceptance_rate")
	fmt.Printf("E[z0]: gwg %.2f, exact %.2f; accepted %.0f%%\n", sampler.Means(m, marg)[0], ex.Means[0], 100*acc)
	// Output: E[z0]: gwg -0.26, exact -0.26; accepted 83%
}
