package gfsvgd_test

import (
	"context"
	"fmt"

	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gfsvgd"
	"github.com/dstein/dstein/transform"
)

// Sample the paper's one-dimensional categorical example with the paper's
// preset and ρ = p0, then read the frequencies of Γ(x).
func Example() {
	m, _ := categorical.New([]categorical.Variable{{
		States: []float64{-1, -0.5, 0, 0.5, 1},
		Probs:  []float64{0.1, 0.2, 0.3, 0.1, 0.3},
	}})
	t, _ := transform.ForModel(nil, m)
	// The paper's settings: learning rate 0.05, h = med²/(2 log(n+1)),
	// ρ = p0, particles started from N(−2, 1).
	set := gfsvgd.Settings{Surrogate: "base", LearningRate: 0.05, Bandwidth: kernel.Bandwidth{Rule: kernel.RuleMedianPaper}}
	p := sampler.NewProblem(m, t, 200, sampler.Init{Mean: -2}, rng.NewKey(1))
	s, _ := gfsvgd.New(p, set)
	out := sampler.Run(context.Background(), s, sampler.RunOptions{Iters: 300})
	freq := sampler.Marginals(m, &sampler.Samples{N: 200, D: 1, Z: s.Current()})[0]
	fmt.Println(out.Status)
	for k, p := range freq {
		fmt.Printf("P(z = %4v) ≈ %.2f\n", m.States(0)[k], p)
	}
	// Output:
	// completed
	// P(z =   -1) ≈ 0.10
	// P(z = -0.5) ≈ 0.18
	// P(z =    0) ≈ 0.30
	// P(z =  0.5) ≈ 0.11
	// P(z =    1) ≈ 0.30
}
