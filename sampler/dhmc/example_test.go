package dhmc_test

import (
	"context"
	"fmt"

	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/dhmc"
	"github.com/dstein/dstein/transform"
)

// Sample the paper's one-dimensional categorical example (probabilities
// 0.1, 0.2, 0.3, 0.1, 0.3) with 1000 independent chains started from
// N(−2, 1), and read the frequencies of the chains' final states; with 1000
// chains their standard errors are about 0.015.
func Example() {
	m, _ := categorical.New([]categorical.Variable{{
		States: []float64{-1, -0.5, 0, 0.5, 1},
		Probs:  []float64{0.1, 0.2, 0.3, 0.1, 0.3},
	}})
	t, _ := transform.ForModel(nil, m)
	p := sampler.NewProblem(m, t, 1000, sampler.Init{Mean: -2}, rng.NewKey(1))
	s, _ := dhmc.New(p, dhmc.Settings{})
	out := sampler.Run(context.Background(), s, sampler.RunOptions{Iters: 100})
	freq := sampler.Marginals(m, &sampler.Samples{N: 1000, D: 1, Z: s.Current()})[0]
	fmt.Println(out.Status)
	for k, p := range freq {
		fmt.Printf("P(z = %4v) ≈ %.2f\n", m.States(0)[k], p)
	}
	fmt.Printf("reflections: %.0f%%\n", 100*s.ReflectionRate())
	// Output:
	// completed
	// P(z =   -1) ≈ 0.12
	// P(z = -0.5) ≈ 0.20
	// P(z =    0) ≈ 0.32
	// P(z =  0.5) ≈ 0.09
	// P(z =    1) ≈ 0.28
	// reflections: 37%
}
