package transform_test

import (
	"fmt"

	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/transform"
)

// Cut N(0, 1) into three bins of equal probability, map points to states
// with Γ, and draw a point inside the bin of a given state.
func ExampleTransform() {
	t, _ := transform.New(nil, []int{3})
	fmt.Printf("cuts %.4f\n", t.Cuts(0))
	fmt.Println("Γ(-1) =", t.State(0, -1), " Γ(0) =", t.State(0, 0), " Γ(2) =", t.State(0, 2))
	x := t.SampleGiven(nil, []int{2}, rng.Key{Seed: 1, Stream: 0}.Rand())
	fmt.Println("x given state 2 lies in its bin:", t.State(0, x[0]) == 2)
	// Output:
	// cuts [-0.4307 0.4307]
	// Γ(-1) = 0  Γ(0) = 1  Γ(2) = 2
	// x given state 2 lies in its bin: true
}
