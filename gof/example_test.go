package gof_test

import (
	"context"
	"fmt"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/gof"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// Test exact samples of a 4×4 Ising grid against the grid itself and
// against a grid with stronger coupling, with DKSD.
func ExampleDKSD() {
	truthModel, _ := ising.Grid(4, 4, false, 0.2, nil)
	other, _ := ising.Grid(4, 4, false, 0.6, nil)
	ex, _ := exact.For(truthModel)
	s := sampler.NewSamples(300, 16)
	ex.Sample(s.Z, rng.NewKey(1).For(rng.Sample).Rand())
	for _, m := range []*ising.Ising{truthModel, other} {
		res, _ := gof.DKSD(context.Background(), m, s, gof.Options{B: 500, Key: rng.NewKey(2)})
		fmt.Printf("reject: %v\n", res.Reject)
	}
	// Output:
	// reject: false
	// reject: true
}
