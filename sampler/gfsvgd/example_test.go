package gfsvgd_test

import (
	"context"
	"fmt"

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
	set, _ := gfsvgd.Preset("paper")
	s, _ := gfsvgd.New(m, t, transform.BaseSurrogate{T: t}, 200, set, rng.New(1, rng.StreamInit))
	out := sampler.Run(context.Background(), s, sampler.RunOptions{Iters: 300})
	res, _ := s.Result()
	freq := sampler.Marginals(m, res.Samples)[0]
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
