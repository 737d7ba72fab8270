package ising_test

import (
	"math"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model/ising"
)

// Two spins: p(z1,z2) ∝ exp(J z1 z2 + h1 z1 + h2 z2). Closed form of E[z1].
func TestTwoSpinMeansClosedForm(t *testing.T) {
	J, h1, h2 := 0.7, 0.3, -0.5
	m, err := ising.New(2, []ising.Edge{{I: 0, J: 1, Coupling: J}}, []float64{h1, h2})
	if err != nil {
		t.Fatal(err)
	}
	res, err := exact.Enumerate(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := func(a, b float64) float64 { return math.Exp(J*a*b + h1*a + h2*b) }
	Z := w(1, 1) + w(1, -1) + w(-1, 1) + w(-1, -1)
	e1 := (w(1, 1) + w(1, -1) - w(-1, 1) - w(-1, -1)) / Z
	e2 := (w(1, 1) - w(1, -1) + w(-1, 1) - w(-1, -1)) / Z
	if math.Abs(res.Means[0]-e1) > 1e-12 || math.Abs(res.Means[1]-e2) > 1e-12 || math.Abs(res.LogZ-math.Log(Z)) > 1e-12 {
		t.Errorf("means %v log Z %v; want [%v %v] and %v", res.Means, res.LogZ, e1, e2, math.Log(Z))
	}
}
