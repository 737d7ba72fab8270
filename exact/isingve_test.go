package exact

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/potts"
)

// An Ising model given by its bonds, too large to enumerate and not a grid
// the transfers take, is solved by variable elimination: its marginals,
// means and log Z are those of the same distribution as a Potts model of
// two states (J·z_i·z_j = 2J·δ(z_i, z_j) − J and h·z = 2h·δ(z, +1) − h, so
// log Z differs by Σ J + Σ h), solved by the Potts route.
func TestIsingByBondsByElimination(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	n := 40
	var edges []ising.Edge
	var pedges []potts.Edge
	bond := func(i, j int) {
		c := 1.5 * (2*r.Float64() - 1)
		edges = append(edges, ising.Edge{I: i, J: j, Coupling: c})
		pedges = append(pedges, potts.Edge{I: i, J: j, Coupling: 2 * c})
	}
	for i := range n {
		bond(i, (i+1)%n) // a ring
	}
	for i := 0; i+7 < n; i += 5 {
		bond(i, i+7) // and chords: cycles, width > 2
	}
	h := make([]float64, n)
	ph := make([]float64, 2*n)
	shift := 0.0
	for i := range h {
		h[i] = 2*r.Float64() - 1
		ph[2*i+1] = 2 * h[i]
		shift += h[i]
	}
	for _, e := range edges {
		shift += e.Coupling
	}
	m, err := ising.New(n, edges, h)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := potts.New(n, 2, pedges, ph)
	if err != nil {
		t.Fatal(err)
	}
	truth, err := For(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := truth.(*VE); !ok {
		t.Fatalf("For chose %T; want variable elimination", truth)
	}
	ref, err := For(pm)
	if err != nil {
		t.Fatal(err)
	}
	got, want := truth.Result(), ref.Result()
	if d := math.Abs(got.LogZ - (want.LogZ - shift)); d > 1e-9*math.Abs(got.LogZ) {
		t.Errorf("log Z %v; want %v (the Potts model's less %v)", got.LogZ, want.LogZ-shift, shift)
	}
	for i := range n {
		for s := range 2 {
			if d := math.Abs(got.Marginals[i][s] - want.Marginals[i][s]); d > 1e-12 {
				t.Fatalf("P(z%d = %d) = %v; want %v", i, s, got.Marginals[i][s], want.Marginals[i][s])
			}
		}
		if mean := want.Marginals[i][1] - want.Marginals[i][0]; math.Abs(got.Means[i]-mean) > 1e-12 {
			t.Fatalf("E[z%d] = %v; want %v (spins ±1)", i, got.Means[i], mean)
		}
	}
	if mem := Memory(m) - memlimit.Base; mem <= truth.(*VE).Memory() || mem > 64<<20 {
		t.Errorf("Memory %.4g beyond Base; want more than variable elimination's %.4g, below 64 MiB", mem, truth.(*VE).Memory())
	}
	// The width limit reaches this route (dstein exact --max-width): the
	// ring with chords needs a table over more than 2 variables.
	if _, err := ForContextWidth(context.Background(), m, 2); err == nil {
		t.Error("a width limit of 2: an answer; want a refusal")
	}
	if w := truth.(*VE).Width(); w <= 2 {
		t.Errorf("width %d; the ring with chords needs more than 2", w)
	}
	// A small model keeps enumeration (the same answers as before).
	small, _ := ising.New(6, edges[:5], h[:6])
	if tr, _ := For(small); tr == nil {
		t.Error("a 6-spin model: no exact answer")
	} else if _, ok := tr.(*Enumerated); !ok {
		t.Errorf("a 6-spin model: For chose %T; want enumeration", tr)
	}
	// A whole grid too wide is refused before the elimination is planned.
	wide, err := ising.Grid(30, 40, false, 0.3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ForContext(context.Background(), wide); err == nil || !strings.Contains(err.Error(), "treewidth 30 or more") || !strings.Contains(err.Error(), "no exact method") {
		t.Errorf("a 30×40 grid: %v", err)
	}
	if got := Memory(wide); got != memlimit.Base {
		t.Errorf("Memory of a refused grid = %v; want memlimit.Base", got)
	}
}

// A graph far too wide for elimination is refused at the first steps of
// the plan (a complete graph of 240 spins took 4 s to plan in full before
// its refusal), and a grid given only some of its bonds is planned, not
// refused by the whole grid's treewidth.
func TestIsingByBondsRefusalsAndPartialGrids(t *testing.T) {
	wide, err := ising.Complete(240, 0.01, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := planEliminationWithin(context.Background(), []int{2, 2, 2}, []Factor{{Scope: []int{0, 1, 2}, LogTable: make([]float64, 8)}}, 2)
	if !errors.Is(err, errTooWide) || len(p.order) != 1 {
		t.Errorf("a clique of 3 under a limit of 2: %v after %d steps; want errTooWide at the first", err, len(p.order))
	}
	if _, err := For(wide); err == nil || !strings.Contains(err.Error(), "the greedy min-fill elimination order reaches a factor over") {
		t.Errorf("a complete graph of 240 spins: %v", err)
	}
	// Refused after its factors are built: Memory counts those alone.
	if got := Memory(wide) - memlimit.Base; got > 8<<20 {
		t.Errorf("Memory of a complete graph of 240 spins = Base + %.4g; want its factors only (refused)", got)
	}
	// A 30×30 grid with its horizontal bonds only: 30 chains.
	var rows []ising.Edge
	for _, e := range ising.GridEdges(30, 30, false, 0.4) {
		if e.J == e.I+1 {
			rows = append(rows, e)
		}
	}
	chains, err := ising.NewGrid(30, 30, false, rows, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := For(chains)
	if err != nil {
		t.Fatalf("a 30×30 grid of horizontal bonds only: %v", err)
	}
	if ve, ok := tr.(*VE); !ok || ve.Width() != 2 {
		t.Errorf("a 30×30 grid of horizontal bonds only: %T; want variable elimination of width 2", tr)
	}
}
