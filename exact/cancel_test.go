package exact

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
)

// scanPlan is the min-fill order as planElimination computed it before it
// kept the variables in a heap: a scan of every variable at each step for
// the smallest fill-in, then table size, the lower index winning ties. It
// is the reference that the heap must reproduce exactly.
func scanPlan(card []int, factors []Factor) vePlan {
	n := len(card)
	adj := make([]map[int]struct{}, n)
	for i := range adj {
		adj[i] = map[int]struct{}{}
	}
	for _, f := range factors {
		for a, u := range f.Scope {
			for _, w := range f.Scope[a+1:] {
				if w != u {
					adj[u][w] = struct{}{}
					adj[w][u] = struct{}{}
				}
			}
		}
	}
	fill := make([]int, n)
	size := make([]float64, n)
	neighbours := func(v int) []int {
		var nb []int
		for u := range adj[v] {
			nb = append(nb, u)
		}
		slices.Sort(nb)
		return nb
	}
	score := func(v int) {
		ns := neighbours(v)
		sz := float64(card[v])
		f := 0
		for a, u := range ns {
			sz *= float64(card[u])
			for _, w := range ns[a+1:] {
				if _, ok := adj[u][w]; !ok {
					f++
				}
			}
		}
		fill[v], size[v] = f, sz
	}
	for v := range n {
		score(v)
	}
	var p vePlan
	done := make([]bool, n)
	for range n {
		x := -1
		for v := range n {
			if done[v] {
				continue
			}
			if x < 0 || fill[v] < fill[x] || fill[v] == fill[x] && size[v] < size[x] {
				x = v
			}
		}
		sep := neighbours(x)
		p.order = append(p.order, x)
		p.seps = append(p.seps, sep)
		p.width = max(p.width, 1+len(sep))
		p.maxEntries = max(p.maxEntries, size[x])
		p.totalEntries += size[x]
		done[x] = true
		for a, u := range sep {
			delete(adj[u], x)
			for _, w := range sep[a+1:] {
				adj[u][w] = struct{}{}
				adj[w][u] = struct{}{}
			}
		}
		adj[x] = nil
		for v := range n {
			if !done[v] {
				score(v) // everything, to be sure of the reference
			}
		}
	}
	return p
}

// The heap picks exactly the variables that the scan picked, in the same
// order with the same cliques, so that orders, widths, tables and every
// result of variable elimination stay what they were: random factor graphs
// (many ties of fill-in and size, the index deciding), grids with random
// cardinalities, a complete graph and chains.
func TestMinFillHeapMatchesScan(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	type graph struct {
		name    string
		card    []int
		factors []Factor
	}
	var gs []graph
	for k := range 200 {
		n := 1 + r.IntN(40)
		card, fs := randomFactorGraph(n, 1, r)
		gs = append(gs, graph{fmt.Sprintf("random %d (%d variables)", k, n), card, fs})
	}
	for _, sh := range [][2]int{{5, 5}, {6, 9}, {10, 10}, {3, 17}} {
		n := sh[0] * sh[1]
		card := make([]int, n)
		for i := range card {
			card[i] = 2 + r.IntN(2)
		}
		var fs []Factor
		for _, e := range ising.GridEdges(sh[0], sh[1], false, 0) {
			fs = append(fs, Factor{Scope: []int{e.I, e.J}, LogTable: make([]float64, card[e.I]*card[e.J])})
		}
		gs = append(gs, graph{fmt.Sprintf("%d×%d grid", sh[0], sh[1]), card, fs})
	}
	gs = append(gs, graph{"complete graph of 9", []int{2, 2, 2, 2, 2, 2, 2, 2, 2}, completeGraph(0, 9, 2)})
	for _, n := range []int{1, 2, 3, 50} {
		card, fs := chainFactors(n)
		gs = append(gs, graph{fmt.Sprintf("chain of %d", n), card, fs})
	}
	for _, g := range gs {
		got, err := planElimination(context.Background(), g.card, g.factors)
		if err != nil {
			t.Fatal(err)
		}
		want := scanPlan(g.card, g.factors)
		if !slices.Equal(got.order, want.order) || got.width != want.width || got.maxEntries != want.maxEntries || got.totalEntries != want.totalEntries {
			t.Fatalf("%s: heap order %v (width %d, %g and %g entries), scan order %v (width %d, %g and %g entries)", g.name,
				got.order, got.width, got.maxEntries, got.totalEntries, want.order, want.width, want.maxEntries, want.totalEntries)
		}
		for k := range got.seps {
			if !slices.Equal(got.seps[k], want.seps[k]) {
				t.Fatalf("%s: step %d eliminates %d with neighbours %v, the scan's %v", g.name, k, got.order[k], got.seps[k], want.seps[k])
			}
		}
	}
}

// chainFactors returns a chain of n binary variables with pairwise factors
// (ferromagnetic, 0.5 nats) and a unary factor on the first.
func chainFactors(n int) ([]int, []Factor) {
	card := make([]int, n)
	for i := range card {
		card[i] = 2
	}
	fs := []Factor{{Scope: []int{0}, LogTable: []float64{0.2, -0.2}}}
	for i := 0; i+1 < n; i++ {
		fs = append(fs, Factor{Scope: []int{i, i + 1}, LogTable: []float64{0.5, -0.5, -0.5, 0.5}})
	}
	return card, fs
}

// chainGraph is chainFactors as a factor graph, the model `dstein exact`
// reads from a UAI file.
func chainGraph(t testing.TB, n int) *factorgraph.Graph {
	t.Helper()
	card, fs := chainFactors(n)
	gf := make([]factorgraph.Factor, len(fs))
	for k, f := range fs {
		gf[k] = factorgraph.Factor{Scope: f.Scope, LogTable: f.LogTable}
	}
	g, err := factorgraph.New(card, gf)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// cancelAfter runs f with a context canceled after delay and returns f's
// error and how long after the cancellation f returned (negative: before
// it); it fails the test when f has not returned 10 s after the
// cancellation (a generous bound: busy machines).
func cancelAfter(t *testing.T, delay time.Duration, f func(ctx context.Context) error) (error, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	canceledAt := time.Now().Add(delay)
	timer := time.AfterFunc(delay, func() {
		canceledAt = time.Now()
		cancel()
	})
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(delay + 10*time.Second):
		t.Fatalf("still running 10 s after the cancellation")
	}
	end := time.Now()
	if !timer.Stop() {
		<-ctx.Done()
	}
	return err, end.Sub(canceledAt)
}

// `dstein exact` on a chain of 300,000 variables stops soon after Ctrl-C:
// variable elimination (the min-fill order, then both passes) canceled
// 100 ms in must return context.Canceled (not a result: the whole takes
// about 1.5 s on the project's machine, mostly the order) within 10 s. The
// latency is logged.
func TestVEChainCanceled(t *testing.T) {
	g := chainGraph(t, 300_000)
	err, latency := cancelAfter(t, 100*time.Millisecond, func(ctx context.Context) error {
		_, err := ForFactorGraphContext(ctx, g, 0, memlimit.Budget{})
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("variable elimination on a chain of 300,000 variables returned %v %v after the cancellation; want context.Canceled", err, latency)
	}
	t.Logf("variable elimination stopped %v after the cancellation", latency)
}

// Each route of ForContext that can run long stops when canceled: the
// RBM's hidden enumeration (2^22 configurations of 200 visible units), the
// enumeration of 2^22 joint states and the transfers on a 12×12 torus,
// each canceled 50 ms in, return context.Canceled within 10 s, and so do
// pair marginals by clamped variable elimination (VEPairs, through
// PairsFor) on a chain, and the pairs and the mode mass of a 10×10 torus.
func TestForContextCanceled(t *testing.T) {
	r, err := rbm.Random(200, 22, 0.05, 0.5, 3)
	if err != nil {
		t.Fatal(err)
	}
	vars := make([]categorical.Variable, 22)
	for i := range vars {
		vars[i] = categorical.Variable{States: []float64{0, 1}, Probs: []float64{0.3, 0.7}}
	}
	prod, err := categorical.New(vars)
	if err != nil {
		t.Fatal(err)
	}
	chain := chainGraph(t, 2000)
	torus12, err := ising.Grid(12, 12, true, 0.4, nil)
	if err != nil {
		t.Fatal(err)
	}
	torus10, err := ising.Grid(10, 10, true, 0.4, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"RBM hidden enumeration", func(ctx context.Context) error { _, err := ForContext(ctx, r); return err }},
		{"enumeration of 2^22 states", func(ctx context.Context) error { _, err := ForContext(ctx, prod); return err }},
		{"pair marginals of a chain of 2000", func(ctx context.Context) error { _, err := PairsFor(ctx, chain, memlimit.Budget{}); return err }},
		{"transfers on a 12×12 torus", func(ctx context.Context) error { _, err := ForContext(ctx, torus12); return err }},
		{"pair marginals of a 10×10 torus", func(ctx context.Context) error { _, err := PairsFor(ctx, torus10, memlimit.Budget{}); return err }},
		{"mode mass of a 10×10 torus", func(ctx context.Context) error { _, err := ModeMass(ctx, torus10, memlimit.Budget{}); return err }},
	} {
		err, latency := cancelAfter(t, 50*time.Millisecond, c.run)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s returned %v %v after the cancellation; want context.Canceled", c.name, err, latency)
			continue
		}
		t.Logf("%s stopped %v after the cancellation", c.name, latency)
	}
}

// SampleContext draws exactly what Sample draws (the same numbers from the
// same generator) for every kind of truth; with a canceled context it
// returns context.Canceled before it has filled a long buffer, every row
// either drawn whole or untouched.
func TestSampleContext(t *testing.T) {
	grid, err := ising.Grid(4, 5, false, 0.3, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := rbm.Random(12, 6, 0.5, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	small, err := ising.New(6, []ising.Edge{{I: 0, J: 5, Coupling: 0.4}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	torus, err := ising.Grid(4, 5, true, 0.3, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		m    model.Model
	}{{"Ising grid", grid}, {"Ising torus", torus}, {"RBM", r}, {"enumeration", small}, {"variable elimination", chainGraph(t, 30)}} {
		truth, err := For(c.m)
		if err != nil {
			t.Fatal(err)
		}
		d := c.m.Dim()
		const n = 50_000
		want := make([]int, n*d)
		truth.Sample(want, rand.New(rand.NewPCG(1, 2)))
		got := make([]int, n*d)
		if err := truth.SampleContext(context.Background(), got, rand.New(rand.NewPCG(1, 2))); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s (%T): SampleContext returned %v and other draws than Sample", c.name, truth, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		for k := range got {
			got[k] = -1
		}
		if err := truth.SampleContext(ctx, got, rand.New(rand.NewPCG(1, 2))); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: SampleContext with a canceled context returned %v", c.name, err)
		}
		drawn := 0
		for row := range n {
			z := got[row*d : (row+1)*d]
			switch {
			case !slices.Contains(z, -1):
				drawn++
			case slices.ContainsFunc(z, func(s int) bool { return s != -1 }):
				t.Fatalf("%s: row %d half drawn: %v", c.name, row, z)
			}
		}
		if drawn == n {
			t.Errorf("%s: SampleContext with a canceled context drew all %d rows", c.name, n)
		}
		t.Logf("%s: %d of %d rows drawn before the canceled context was seen", c.name, drawn, n)
	}
}

// BenchmarkVEChain300k times variable elimination on the chain of
// TestVEChainCanceled: with the min-fill order in a heap it is about
// 1.5 s, where scanning every variable at each step made the order alone
// O(n²), minutes at this size.
func BenchmarkVEChain300k(b *testing.B) {
	g := chainGraph(b, 300_000)
	for b.Loop() {
		ve, err := ForFactorGraphContext(context.Background(), g, 0, memlimit.Budget{})
		if err != nil {
			b.Fatal(err)
		}
		if math.IsNaN(ve.Result().LogZ) {
			b.Fatal("NaN")
		}
	}
}
