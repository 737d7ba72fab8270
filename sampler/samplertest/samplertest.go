// Package samplertest holds the small models on which the Markov chain
// samplers are checked against exact enumeration.
package samplertest

import (
	"math"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
)

// SmallModels returns a 3×3 Ising grid with fields, an RBM with 8 visible
// and 3 hidden units, a product of categorical variables with 5 and 3
// states (one of probability zero), and a factor graph with 2, 3 and 4
// states and a zero entry: every kind of variable and of zero the samplers
// must handle, small enough to enumerate.
func SmallModels(t testing.TB) map[string]model.Model {
	t.Helper()
	ism, err := ising.Grid(3, 3, false, 0.4, []float64{0.3, -0.2, 0.1, 0, 0.5, -0.4, 0.2, 0.1, -0.3})
	if err != nil {
		t.Fatal(err)
	}
	r, err := rbm.Random(8, 3, 0.7, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := categorical.New([]categorical.Variable{
		{States: []float64{-1, -0.5, 0, 0.5, 1}, Probs: []float64{0.1, 0.2, 0.3, 0.1, 0.3}},
		{States: []float64{0, 1, 2}, Probs: []float64{0.5, 0, 0.5}},
	})
	if err != nil {
		t.Fatal(err)
	}
	fg, err := factorgraph.New([]int{3, 2, 4}, []factorgraph.Factor{
		{Scope: []int{0, 1}, LogTable: []float64{0.3, -0.5, 1.2, 0, -0.7, 0.4}},
		{Scope: []int{1, 2}, LogTable: []float64{0.1, 0.9, -0.3, 0.5, -1, 0.2, 0.6, math.Inf(-1)}},
		{Scope: []int{2}, LogTable: []float64{0.5, -0.5, 0, 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]model.Model{"ising": ism, "rbm": r, "categorical": cat, "factorgraph": fg}
}
