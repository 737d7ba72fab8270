package exact

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/potts"
)

// pottsFields draws n·q fields uniform in [−a, a].
func pottsFields(seed uint64, n, q int, a float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 5))
	h := make([]float64, n*q)
	for k := range h {
		h[k] = a * (2*r.Float64() - 1)
	}
	return h
}

// For answers a Potts model by variable elimination on its factor graph:
// log Z, the marginals and means agree with enumeration to veTol, and so do
// the pair marginals of the clamped passes (to pairsTol).
func TestPottsVEMatchesEnumeration(t *testing.T) {
	torus, err := potts.Grid(3, 3, true, 3, 0.8, nil)
	if err != nil {
		t.Fatal(err)
	}
	open, err := potts.Grid(3, 4, false, 3, -0.6, pottsFields(1, 12, 3, 0.7))
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := potts.New(7, 4, []potts.Edge{{I: 0, J: 1, Coupling: 1.2}, {I: 1, J: 2, Coupling: -0.7}, {I: 2, J: 0, Coupling: 0.4}, {I: 3, J: 4, Coupling: 2}, {I: 4, J: 5, Coupling: -1.5}, {I: 5, J: 6, Coupling: 0.3}, {I: 2, J: 6, Coupling: 0.9}}, pottsFields(2, 7, 4, 1))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		m    *potts.Potts
	}{{"3×3 torus, q=3", torus}, {"3×4 open grid with fields, q=3", open}, {"edge list with fields, q=4", mixed}} {
		truth, err := For(c.m)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, ok := truth.(*VE); !ok {
			t.Fatalf("%s: For answered by %T; want variable elimination", c.name, truth)
		}
		want, err := Enumerate(c.m, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkVE(t, c.name, truth.Result(), want.LogZ, want.Marginals, want.Means, veTol)

		g, err := c.m.FactorGraph()
		if err != nil {
			t.Fatal(err)
		}
		got, err := FactorGraphPairs(ctx, g, memlimit.Budget{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		wantPairs, err := EnumeratePairs(ctx, c.m, 0)
		if err != nil {
			t.Fatal(err)
		}
		comparePairs(t, c.name, got, wantPairs, pairsTol)
		if m := Memory(c.m); !(m > memlimit.Base) {
			t.Errorf("%s: Memory = %v", c.name, m)
		}
	}
}

// Tori of 5×5 and 6×6 sites with 3 states take variable elimination a
// fraction of a second (min-fill widths about 10 and 12). Without fields
// every marginal is 1/3 by the symmetry of the states, and with q = 2 the
// Potts model is the Ising model with couplings J/2 up to the constant
// J/2 per edge, whose torus transfer gives log Z independently.
func TestPottsToriAnswer(t *testing.T) {
	for _, side := range []int{5, 6} {
		m, err := potts.Grid(side, side, true, 3, 0.9, nil)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		truth, err := For(m)
		if err != nil {
			t.Fatalf("%d×%d torus: %v", side, side, err)
		}
		ve := truth.(*VE)
		t.Logf("%d×%d torus, q = 3: width %d, %v", side, side, ve.Width(), time.Since(start))
		for i, p := range truth.Result().Marginals {
			for s, x := range p {
				if math.Abs(x-1.0/3) > 1e-12 {
					t.Errorf("%d×%d torus: P(z_%d = %d) = %v; want 1/3", side, side, i, s, x)
				}
			}
		}

		const j = 0.7
		p2, err := potts.Grid(side, side, true, 2, j, nil)
		if err != nil {
			t.Fatal(err)
		}
		is, err := ising.Grid(side, side, true, j/2, nil)
		if err != nil {
			t.Fatal(err)
		}
		pt, err := For(p2)
		if err != nil {
			t.Fatal(err)
		}
		it, err := For(is)
		if err != nil {
			t.Fatal(err)
		}
		want := it.Result().LogZ + float64(len(p2.Edges()))*j/2
		if got := pt.Result().LogZ; math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Errorf("%d×%d torus, q = 2: log Z = %.15g; the Ising torus gives %.15g", side, side, got, want)
		}
	}
}

// A Potts model whose factor tables alone are over MaxTotalEntries is
// refused before they are built, one too wide for variable elimination
// when it is planned, and For's refusal names Potts models.
func TestPottsRefusals(t *testing.T) {
	m, err := potts.Grid(100, 100, true, 100, 0.5, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := For(m); err == nil || !strings.Contains(err.Error(), "pairwise factor tables would have") {
		t.Errorf("a 100×100 torus of 100 states: %v", err)
	}
	if got := Memory(m); got != memlimit.Base {
		t.Errorf("Memory of a refused model = %v; want memlimit.Base", got)
	}
	// Whole grids too wide for variable elimination are refused by their
	// treewidth before the elimination is planned (which takes minutes on
	// a 100×100 torus); one with an edge missing is planned.
	for _, c := range []struct {
		rows, cols, q int
		periodic      bool
		want          string
	}{
		{100, 100, 3, true, "treewidth 100 or more, so variable elimination needs a factor over at least 101 variables"},
		{40, 26, 2, false, "treewidth 26 or more"},
		{6, 20, 20, false, "at least 20^7 = 1.28e+09 entries"},
		{5, 5, 300, true, "at least 300^6"},
	} {
		g, err := potts.Grid(c.rows, c.cols, c.periodic, c.q, 0.5, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := For(g); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%d×%d grid of %d states: %v; want an error containing %q", c.rows, c.cols, c.q, err, c.want)
		}
		if got := Memory(g); got != memlimit.Base {
			t.Errorf("%d×%d grid of %d states: Memory of a refused model = %v; want memlimit.Base", c.rows, c.cols, c.q, got)
		}
	}
	partial, err := potts.NewGrid(12, 12, false, 2, potts.GridEdges(12, 12, false, 0.5)[1:], nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := For(partial); err != nil {
		t.Errorf("a 12×12 grid less one edge: %v", err)
	}
	var edges []potts.Edge
	for i := range 30 {
		for j := i + 1; j < 30; j++ {
			edges = append(edges, potts.Edge{I: i, J: j, Coupling: 0.01})
		}
	}
	wide, err := potts.New(30, 2, edges, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := For(wide); err == nil || !strings.Contains(err.Error(), "exceeds the limit") {
		t.Errorf("a complete graph of 30 variables: %v", err)
	}
}

// PairsFor takes a Potts model to variable elimination on its factor
// graph: on a 3-state 2×3 torus with fields its pair marginals equal
// enumeration's, and on a 6×6 open grid (3^36 states, beyond enumeration)
// it answers by that route within its memory estimate.
func TestPottsPairsFor(t *testing.T) {
	ctx := context.Background()
	small, err := potts.Grid(2, 3, true, 3, 0.7, pottsFields(3, 6, 3, 0.5))
	if err != nil {
		t.Fatal(err)
	}
	got, err := PairsFor(ctx, small, memlimit.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := EnumeratePairs(ctx, small, DefaultMaxStates)
	if err != nil {
		t.Fatal(err)
	}
	for i := range small.Dim() {
		for j := i + 1; j < small.Dim(); j++ {
			for s := range 3 {
				for u := range 3 {
					if a, b := got.Prob(i, s, j, u), want.Prob(i, s, j, u); math.Abs(a-b) > 1e-10 {
						t.Errorf("P(z%d = %d, z%d = %d) = %v; enumeration %v", i, s, j, u, a, b)
					}
				}
			}
		}
	}
	big, err := potts.Grid(6, 6, false, 3, 1.0, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := PairsFor(ctx, big, memlimit.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	// No field: every pair of states has the same marginal by symmetry,
	// P(z_i = z_j) ≥ 1/3 for the ferromagnet, each equal state 1/3 of it.
	if a, b := p.Prob(0, 0, 35, 0), p.Prob(0, 1, 35, 1); math.Abs(a-b) > 1e-10 || a < 1.0/9 {
		t.Errorf("corner pair: P(0,0) = %v, P(1,1) = %v; want equal and ≥ 1/9", a, b)
	}
	if PairsMemory(big) <= 0 {
		t.Error("no memory estimate")
	}
}

// Memory of a factor graph or a Potts model is variable elimination's own
// estimate from its planned order (what NewVE checks against the budget),
// plus the factors handed over: not the bound of MaxTotalEntries (2 GiB),
// which refused `sample --method exact` on a 5-variable network under a
// 500 MB limit.
func TestMemoryFromElimination(t *testing.T) {
	pg, err := potts.Grid(5, 5, true, 3, 0.7, nil)
	if err != nil {
		t.Fatal(err)
	}
	pgraph, err := pg.FactorGraph()
	if err != nil {
		t.Fatal(err)
	}
	chain := chainGraph(t, 3000)
	for _, c := range []struct {
		name    string
		m       model.Model
		g       *factorgraph.Graph
		factors int
	}{
		{"a chain of 3000 binary variables", chain, chain, len(chain.Factors())},
		{"a 5×5 Potts torus of 3 states", pg, pgraph, len(pgraph.Factors())},
	} {
		ve, err := ForFactorGraph(c.g, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := Memory(c.m) - memlimit.Base
		lo := ve.Memory() + factorBytes*float64(c.factors)
		t.Logf("%s: Memory %.3g bytes beyond Base; variable elimination's %.3g", c.name, got, ve.Memory())
		if got < lo || got > lo+2*(c.g.Shape().Bytes()+c.g.Shape().BuildBytes()) || got > 64<<20 {
			t.Errorf("%s: Memory %.4g beyond Base; want variable elimination's %.4g plus the factors (%.4g) and at most twice the graph, below 64 MiB", c.name, got, ve.Memory(), lo)
		}
	}
}
