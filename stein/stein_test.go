package stein_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/stein"
)

func testModels(t *testing.T) map[string]model.Model {
	t.Helper()
	g, err := ising.Grid(2, 3, false, 0.4, []float64{0.1, -0.2, 0.3, 0, 0.05, -0.1})
	if err != nil {
		t.Fatal(err)
	}
	r, err := rbm.Random(5, 3, 0.8, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	c, err := categorical.New([]categorical.Variable{
		{States: []float64{0, 1, 2, 3}, Probs: []float64{0.13, 0.41, 0.29, 0.17}},
		{States: []float64{-1, 1}, Probs: []float64{0.37, 0.63}},
		{States: []float64{0, 1, 2}, Probs: []float64{0.52, 0.07, 0.41}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// A state of probability zero (model.Support skips it in the cycle) and
	// a variable with one state (no move).
	zeros, err := categorical.New([]categorical.Variable{
		{States: []float64{0, 1, 2}, Probs: []float64{0.5, 0, 0.5}},
		{States: []float64{7}, Probs: []float64{1}},
		{States: []float64{0, 1, 2, 3}, Probs: []float64{0.1, 0.2, 0.3, 0.4}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]model.Model{"ising": g, "rbm": r, "categorical": c, "zeros": zeros}
}

// all returns every joint state of m (row-major) and its probability.
func all(m model.Model) ([]int, []float64) {
	d := m.Dim()
	z := make([]int, d)
	var states []int
	var lp []float64
	for {
		states = append(states, z...)
		lp = append(lp, m.LogProb(z))
		l := 0
		for ; l < d; l++ {
			z[l]++
			if z[l] < len(m.States(l)) {
				break
			}
			z[l] = 0
		}
		if l == d {
			break
		}
	}
	mx := math.Inf(-1)
	for _, v := range lp {
		mx = max(mx, v)
	}
	var tot float64
	p := make([]float64, len(lp))
	for i, v := range lp {
		p[i] = math.Exp(v - mx)
		tot += p[i]
	}
	for i := range p {
		p[i] /= tot
	}
	return states, p
}

// The Stein identity E_{z∼p} κ(z, y) = 0 holds for every y, by
// enumeration, at several bandwidths: the sum is exact up to rounding
// (1e-12 against terms of order 1).
func TestSteinIdentity(t *testing.T) {
	for name, m := range testModels(t) {
		states, p := all(m)
		n := len(p)
		pts, err := stein.Prepare(m, states, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, ell := range []float64{0.5, 1, 2.5, float64(m.Dim())} {
			k, err := stein.NewKernel(m.Dim(), ell)
			if err != nil {
				t.Fatal(err)
			}
			worst, scale := 0.0, 0.0
			for y := range n {
				var e float64
				for z := range n {
					v := k.Eval(pts, z, pts, y)
					e += p[z] * v
					scale = max(scale, math.Abs(v))
				}
				worst = max(worst, math.Abs(e))
			}
			if worst > 1e-12*max(1, scale) {
				t.Errorf("%s, ℓ = %v: max_y |E_p κ(·, y)| = %.3g (kernel values up to %.3g)", name, ell, worst, scale)
			}
			if scale == 0 {
				t.Errorf("%s, ℓ = %v: the kernel is identically zero", name, ell)
			}
		}
	}
}

// bruteKappa evaluates κ(a, b) from its definition, with explicit kernel
// evaluations at the moved states and scores from LogProb.
func bruteKappa(m model.Model, a, b []int, ell float64) float64 {
	c := stein.NewCycle(m)
	k := func(x, y []int) float64 {
		h := 0
		for l := range x {
			if x[l] != y[l] {
				h++
			}
		}
		return math.Exp(-float64(h) / ell)
	}
	score := func(z []int, l int) float64 {
		if c.Next[l][z[l]] < 0 {
			return 0
		}
		zz := append([]int(nil), z...)
		zz[l] = c.Next[l][z[l]]
		return 1 - math.Exp(m.LogProb(zz)-m.LogProb(z))
	}
	back := func(z []int, l int) []int {
		zz := append([]int(nil), z...)
		if p := c.Prev[l][z[l]]; p >= 0 {
			zz[l] = p
		}
		return zz
	}
	kab := k(a, b)
	var v float64
	for l := range a {
		sa, sb := score(a, l), score(b, l)
		dA := kab - k(back(a, l), b)
		dB := kab - k(a, back(b, l))
		dAB := kab - k(back(a, l), b) - k(a, back(b, l)) + k(back(a, l), back(b, l))
		v += sa*sb*kab - sa*dB - sb*dA + dAB
	}
	return v
}

// The O(d) evaluation equals the definition on random pairs, and is
// symmetric up to rounding (the two sides' sums run in different orders).
func TestKernelMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for name, m := range testModels(t) {
		d := m.Dim()
		const n = 30
		z := make([]int, n*d)
		for i := range z {
			z[i] = r.IntN(len(m.States(i % d)))
			if name == "zeros" && i%d == 0 {
				z[i] = 2 * r.IntN(2) // possible states only
			}
		}
		pts, err := stein.Prepare(m, z, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, ell := range []float64{1, 3.7, float64(d)} {
			k, _ := stein.NewKernel(d, ell)
			for i := range n {
				for j := range n {
					got := k.Eval(pts, i, pts, j)
					want := bruteKappa(m, z[i*d:(i+1)*d], z[j*d:(j+1)*d], ell)
					if math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
						t.Fatalf("%s, ℓ = %v, pair (%d, %d): %v, definition %v", name, ell, i, j, got, want)
					}
					if back := k.Eval(pts, j, pts, i); math.Abs(back-got) > 1e-12*max(1, math.Abs(got)) {
						t.Fatalf("%s: κ(%d, %d) = %v but κ(%d, %d) = %v", name, i, j, got, j, i, back)
					}
				}
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	for _, ell := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := stein.NewKernel(4, ell); err == nil || !strings.Contains(err.Error(), "bandwidth") {
			t.Errorf("ℓ = %v: error %v", ell, err)
		}
	}
	m := testModels(t)["ising"]
	if _, err := stein.Prepare(m, make([]int, 5), 1); err == nil {
		t.Error("5 indices for one state of 6 variables: no error")
	}
}

func BenchmarkEval(b *testing.B) {
	g, err := ising.Grid(10, 10, false, 0.3, nil)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	const n = 64
	z := make([]int, n*100)
	for i := range z {
		z[i] = r.IntN(2)
	}
	pts, err := stein.Prepare(g, z, n)
	if err != nil {
		b.Fatal(err)
	}
	k, _ := stein.NewKernel(100, 1)
	b.ReportAllocs()
	var sink float64
	for i := 0; b.Loop(); i++ {
		sink += k.Eval(pts, i%n, pts, (i*7)%n)
	}
	_ = sink
}
