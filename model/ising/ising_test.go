package ising

import (
	"math"
	"strings"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/modeltest"
)

// dense computes log p* from a dense coupling matrix, independently of the
// model's edge list and adjacency.
func dense(n int, edges []Edge, fields []float64) func(z []int) float64 {
	J := make([][]float64, n)
	for i := range J {
		J[i] = make([]float64, n)
	}
	for _, e := range edges {
		J[e.I][e.J] += e.Coupling
		J[e.J][e.I] += e.Coupling
	}
	return func(z []int) float64 {
		var s float64
		for i := range n {
			si := 2*float64(z[i]) - 1
			for j := i + 1; j < n; j++ {
				s += J[i][j] * si * (2*float64(z[j]) - 1)
			}
			if fields != nil {
				s += fields[i] * si
			}
		}
		return s
	}
}

func TestConformanceGridAndGraphs(t *testing.T) {
	fields := []float64{0.1, -0.2, 0.3, 0, 0.05, -0.1, 0.2, 0.15, -0.3}
	g, err := Grid(3, 3, false, 0.4, fields)
	if err != nil {
		t.Fatal(err)
	}
	modeltest.Check(t, g, modeltest.Options{Reference: dense(9, g.Edges(), fields)})

	p, err := Grid(3, 3, true, -0.3, nil)
	if err != nil {
		t.Fatal(err)
	}
	modeltest.Check(t, p, modeltest.Options{Reference: dense(9, p.Edges(), nil)})

	c, err := Complete(5, 0.2, []float64{1, 0, -1, 0.5, 0})
	if err != nil {
		t.Fatal(err)
	}
	modeltest.Check(t, c, modeltest.Options{Reference: dense(5, c.Edges(), []float64{1, 0, -1, 0.5, 0})})

	edges := []Edge{{0, 1, 0.5}, {1, 2, -0.3}}
	e, err := New(3, edges, []float64{0.1, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	modeltest.Check(t, e, modeltest.Options{Reference: dense(3, edges, []float64{0.1, 0, 0})})
}

func TestGridEdgeCounts(t *testing.T) {
	cases := []struct {
		rows, cols int
		periodic   bool
		edges      int
		total      float64 // sum of couplings with J = 1
	}{
		{4, 4, false, 24, 24},
		{10, 10, false, 180, 180},
		{3, 3, true, 18, 18},
		{10, 10, true, 200, 200},
		{2, 3, true, 9, 12}, // vertical wrap merges with the inner bond: 3 edges of 2J
		{1, 5, true, 5, 5},  // a ring
		{1, 1, true, 0, 0},
	}
	for _, c := range cases {
		es := GridEdges(c.rows, c.cols, c.periodic, 1)
		var tot float64
		for _, e := range es {
			tot += e.Coupling
		}
		if len(es) != c.edges || tot != c.total {
			t.Errorf("%d×%d periodic=%v: %d edges with total coupling %v; want %d and %v", c.rows, c.cols, c.periodic, len(es), tot, c.edges, c.total)
		}
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	cases := map[string]struct {
		n      int
		edges  []Edge
		fields []float64
		want   string
	}{
		"empty":     {0, nil, nil, "no spins"},
		"range":     {3, []Edge{{0, 3, 1}}, nil, "outside [0, 3)"},
		"self":      {3, []Edge{{1, 1, 1}}, nil, "to itself"},
		"duplicate": {3, []Edge{{0, 1, 1}, {1, 0, 2}}, nil, "both join spins 0 and 1"},
		"fields":    {3, nil, []float64{1, 2}, "3 spins but 2 fields"},
		"nan":       {2, []Edge{{0, 1, math.NaN()}}, nil, "coupling NaN"},
		"inf field": {2, nil, []float64{0, math.Inf(-1)}, "field of spin 1 is -Inf"},
	}
	for name, c := range cases {
		_, err := New(c.n, c.edges, c.fields)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want one containing %q", name, err, c.want)
		}
	}
	if _, err := Grid(0, 3, false, 1, nil); err == nil {
		t.Error("Grid(0, 3) succeeded")
	}
}

func TestStatesAreSpins(t *testing.T) {
	m, _ := Grid(2, 2, false, 1, nil)
	if got := m.States(0); len(got) != 2 || got[0] != -1 || got[1] != 1 {
		t.Fatalf("states %v; want [-1 1]", got)
	}
	if model.Spin(0) != -1 || model.Spin(1) != 1 {
		t.Fatal("Spin mapping")
	}
}

func TestNewGridChecksEdges(t *testing.T) {
	if _, err := NewGrid(2, 3, false, []Edge{{0, 4, 1}}, nil); err == nil || !strings.Contains(err.Error(), "does not join neighbours") {
		t.Errorf("a diagonal edge was accepted: %v", err)
	}
	if _, err := NewGrid(2, 3, false, []Edge{{0, 2, 1}}, nil); err == nil {
		t.Error("a wrap-around edge on an open grid was accepted")
	}
	m, err := NewGrid(2, 3, true, []Edge{{0, 2, 0.7}, {0, 1, -0.2}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, c, p, ok := m.GridShape(); r != 2 || c != 3 || !p || !ok {
		t.Errorf("GridShape = %d, %d, %v, %v", r, c, p, ok)
	}
	if _, _, _, ok := (&Ising{}).GridShape(); ok {
		t.Error("a model without a grid reports one")
	}
}

// A coupling so large that log p* could overflow is refused at
// construction, not left to fail inside a sampler.
func TestHugeParametersRefused(t *testing.T) {
	if _, err := New(2, []Edge{{0, 1, 1e308}}, []float64{1e308, 0}); err == nil || !strings.Contains(err.Error(), "rescale") {
		t.Errorf("coupling 1e308: %v", err)
	}
	if _, err := New(2, []Edge{{0, 1, 1e50}}, nil); err != nil {
		t.Errorf("coupling 1e50 refused: %v", err)
	}
}
