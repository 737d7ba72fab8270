package iid_test

import (
	"context"
	"fmt"

	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/iid"
	"github.com/dstein/dstein/transform"
)

// Draw 5 exact samples of a 2×2 Ising grid in the method's one step.
func Example() {
	m, _ := ising.Grid(2, 2, false, 1, nil)
	t, _ := transform.ForModel(nil, m)
	s, _ := iid.New(sampler.NewProblem(m, t, 5, sampler.Init{}, rng.NewKey(3)), iid.Settings{})
	s.Step(context.Background())
	for j := range 5 {
		fmt.Println(s.Current()[j*4 : (j+1)*4])
	}
	// Output:
	// [1 1 1 1]
	// [0 0 0 0]
	// [0 0 0 0]
	// [0 0 0 0]
	// [0 0 0 0]
}
