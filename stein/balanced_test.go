package stein_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/stein"
)

// balancedModels adds to testModels a factor graph with a zero entry
// between two variables (a state impossible only jointly: DKSD's score
// needs p > 0 on the cycles' states, the Barker rates do not).
func balancedModels(t *testing.T) map[string]model.Model {
	t.Helper()
	ms := testModels(t)
	g, err := factorgraph.New([]int{3, 2, 2}, []factorgraph.Factor{
		{Scope: []int{0, 1}, LogTable: []float64{0.3, -0.5, 1.2, math.Inf(-1), -0.7, 0.4}},
		{Scope: []int{1, 2}, LogTable: []float64{0.1, 0.9, -0.3, 0.5}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ms["joint zero"] = g
	return ms
}

// The Stein identity by enumeration: Σ_z p(z) κ(z, z') = 0 for every
// possible z' (so the statistic's null mean is 0 exactly), at ℓ = d and
// ℓ = 0.7.
func TestBalancedSteinIdentity(t *testing.T) {
	for name, m := range balancedModels(t) {
		states, p := all(m)
		d := m.Dim()
		var keep []int
		var pk []float64
		for i, pi := range p {
			if pi > 0 {
				keep = append(keep, states[i*d:(i+1)*d]...)
				pk = append(pk, pi)
			}
		}
		n := len(pk)
		pts, err := stein.PrepareBalanced(m, keep, n)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, ell := range []float64{float64(d), 0.7} {
			k, err := stein.NewBalancedKernel(d, ell)
			if err != nil {
				t.Fatal(err)
			}
			for y := range n {
				var e, scale float64
				for z := range n {
					v := k.Eval(pts, z, pts, y)
					e += pk[z] * v
					scale += pk[z] * math.Abs(v)
				}
				if math.Abs(e) > 1e-12*max(1, scale) {
					t.Fatalf("%s, ℓ = %g: E_p κ(·, z'_%d) = %g (scale %g)", name, ell, y, e, scale)
				}
			}
		}
	}
}

// bruteBalanced computes A_z A_z' k(z, z') from its definition: every
// pair of moves along the cycles (model.Support's possible states),
// Barker rates from LogProb, and the kernel from the Hamming distance.
func bruteBalanced(m model.Model, a, b []int, ell float64) float64 {
	c := stein.NewCycle(m)
	kern := func(x, y []int) float64 {
		h := 0
		for l := range x {
			if x[l] != y[l] {
				h++
			}
		}
		return math.Exp(-float64(h) / ell)
	}
	type move struct {
		y []int
		r float64
	}
	moves := func(z []int) []move {
		var out []move
		lz := m.LogProb(z)
		for l := range z {
			nx, pv := c.Next[l][z[l]], c.Prev[l][z[l]]
			targets := []int{nx, pv}
			if nx < 0 {
				targets = nil // no move
			} else if pv == nx {
				targets = targets[:1] // two possible states: one neighbour
			}
			for _, s := range targets {
				y := append([]int(nil), z...)
				y[l] = s
				ly := m.LogProb(y)
				out = append(out, move{y, math.Exp(ly) / (math.Exp(lz) + math.Exp(ly))})
			}
		}
		return out
	}
	var v float64
	for _, u := range moves(a) {
		for _, w := range moves(b) {
			v += u.r * w.r * (kern(u.y, w.y) - kern(u.y, b) - kern(a, w.y) + kern(a, b))
		}
	}
	return v
}

// Eval against the definition, on random pairs of possible states, both
// orders (κ is symmetric).
func TestBalancedKernelMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 9))
	for name, m := range balancedModels(t) {
		states, p := all(m)
		d := m.Dim()
		var z []int
		for len(z) < 40*d {
			i := r.IntN(len(p))
			if p[i] > 0 {
				z = append(z, states[i*d:(i+1)*d]...)
			}
		}
		n := len(z) / d
		pts, err := stein.PrepareBalanced(m, z, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, ell := range []float64{float64(d), 1.3} {
			k, _ := stein.NewBalancedKernel(d, ell)
			for i := range n {
				j := r.IntN(n)
				want := bruteBalanced(m, z[i*d:(i+1)*d], z[j*d:(j+1)*d], ell)
				got := k.Eval(pts, i, pts, j)
				if math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
					t.Fatalf("%s, ℓ = %g: κ(%v, %v) = %v; want %v", name, ell, z[i*d:(i+1)*d], z[j*d:(j+1)*d], got, want)
				}
				if back := k.Eval(pts, j, pts, i); math.Abs(back-got) > 1e-12*max(1, math.Abs(got)) {
					t.Fatalf("%s: not symmetric: %v and %v", name, got, back)
				}
			}
		}
	}
}
