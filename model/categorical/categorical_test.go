package categorical

import (
	"math"
	"strings"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model/modeltest"
)

var paper = Variable{States: []float64{-1, -0.5, 0, 0.5, 1}, Probs: []float64{0.1, 0.2, 0.3, 0.1, 0.3}}

func TestConformance(t *testing.T) {
	vars := []Variable{
		paper,
		{States: []float64{0, 1, 2}, Probs: []float64{0.5, 0, 0.5}}, // a zero-probability state
		{States: []float64{7}, Probs: []float64{1}},                 // a single state
	}
	m, err := New(vars)
	if err != nil {
		t.Fatal(err)
	}
	modeltest.Check(t, m, modeltest.Options{Reference: func(z []int) float64 {
		var s float64
		for i, zi := range z {
			s += math.Log(vars[i].Probs[zi])
		}
		return s
	}})
}

func TestExactMarginalsAreTheProbabilities(t *testing.T) {
	m, err := New([]Variable{paper, {States: []float64{-1, 1}, Probs: []float64{0.25, 0.75}}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := exact.Enumerate(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.LogZ) > 1e-12 {
		t.Errorf("log Z = %v; the categorical model is normalised", res.LogZ)
	}
	for s, p := range paper.Probs {
		if math.Abs(res.Marginals[0][s]-p) > 1e-12 {
			t.Errorf("P(z0 = %v) = %v; want %v", paper.States[s], res.Marginals[0][s], p)
		}
	}
	if math.Abs(res.Means[0]-0.15) > 1e-12 || math.Abs(res.Means[1]-0.5) > 1e-12 {
		t.Errorf("means %v; want [0.15 0.5]", res.Means)
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	cases := map[string]struct {
		vars []Variable
		want string
	}{
		"empty":        {nil, "no variables"},
		"no states":    {[]Variable{{}}, "no states"},
		"length":       {[]Variable{{States: []float64{0, 1}, Probs: []float64{1}}}, "2 states but 1 probabilities"},
		"negative":     {[]Variable{{States: []float64{0, 1}, Probs: []float64{1.5, -0.5}}}, "want a finite number ≥ 0"},
		"sum":          {[]Variable{{States: []float64{0, 1}, Probs: []float64{0.5, 0.4}}}, "sum to 0.9"},
		"nan prob":     {[]Variable{{States: []float64{0, 1}, Probs: []float64{math.NaN(), 1}}}, "NaN"},
		"inf state":    {[]Variable{{States: []float64{0, math.Inf(1)}, Probs: []float64{0.5, 0.5}}}, "+Inf"},
		"repeat state": {[]Variable{{States: []float64{1, 1}, Probs: []float64{0.5, 0.5}}}, "listed twice"},
	}
	for name, c := range cases {
		_, err := New(c.vars)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want one containing %q", name, err, c.want)
		}
	}
}

func TestRandomSimplex(t *testing.T) {
	c, err := RandomSimplex(40, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Dim() {
		var tot float64
		for _, p := range c.Probs(i) {
			if !(p > 0) {
				t.Fatalf("variable %d: probability %v", i, p)
			}
			tot += p
		}
		if math.Abs(tot-1) > 1e-12 {
			t.Fatalf("variable %d: probabilities sum to %v", i, tot)
		}
	}
	for _, dk := range [][2]int{{0, 3}, {3, 1}} {
		if _, err := RandomSimplex(dk[0], dk[1], 1); err == nil {
			t.Errorf("d = %d, k = %d accepted", dk[0], dk[1])
		}
	}
}
