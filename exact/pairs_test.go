package exact

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/model/ising"
)

// Every route sums the same probabilities as enumeration in another order
// (and the RBM route through E[z_i z_j]); on these models they agree to
// ~1e-14, so 1e-9 catches any wrong factor or misplaced entry.
const pairsTol = 1e-9

// comparePairs checks every marginal, every pair entry and every moment.
func comparePairs(t *testing.T, name string, got, want *Pairs, tol float64) {
	t.Helper()
	if got.Dim() != want.Dim() {
		t.Fatalf("%s: dimension %d, want %d", name, got.Dim(), want.Dim())
	}
	bad := 0
	report := func(format string, args ...any) {
		if bad++; bad <= 10 {
			t.Errorf(name+": "+format, args...)
		}
	}
	d := want.Dim()
	for i := range d {
		for s, q := range want.Marginals()[i] {
			if g := got.Marginals()[i][s]; !(math.Abs(g-q) <= tol) {
				report("P(z_%d = %d) = %.15g, want %.15g", i, s, g, q)
			}
		}
		for j := i + 1; j < d; j++ {
			gt, wt := got.Joint(i, j), want.Joint(i, j)
			for e := range wt {
				if !(math.Abs(gt[e]-wt[e]) <= tol) {
					report("P(z_%d, z_%d) entry %d = %.15g, want %.15g", i, j, e, gt[e], wt[e])
				}
			}
			if g, w := got.Moment(i, j), want.Moment(i, j); !(math.Abs(g-w) <= tol*(1+math.Abs(w))) {
				report("E[v_%d v_%d] = %.15g, want %.15g", i, j, g, w)
			}
		}
	}
}

// brutePairs builds pair tables from the probability of every joint state
// (odometer order), as bruteForce returns them.
func brutePairs(card []int, values [][]float64, joint []float64) *Pairs {
	p := newPairs(card, values, "brute")
	for i, k := range card {
		p.marg[i] = make([]float64, k)
	}
	z := make([]int, len(card))
	for _, w := range joint {
		p.addState(z, w)
		odometer(z, card)
	}
	return p
}

// The pair tables are consistent: each sums over one variable to the other's
// marginal, and Prob, Moment and Covariance read them correctly.
func TestPairsAccessors(t *testing.T) {
	m, err := ising.Grid(2, 3, false, 0.4, []float64{0.3, -0.2, 0, 0.1, 0, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	p, err := EnumeratePairs(context.Background(), m, 0)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := Enumerate(m, 0)
	d := m.Dim()
	for i := range d {
		if math.Abs(p.Moment(i, i)-1) > 1e-12 {
			t.Errorf("E[z_%d²] = %v, want 1", i, p.Moment(i, i))
		}
		for j := range d {
			if i == j {
				continue
			}
			for s := range 2 {
				var row float64
				for u := range 2 {
					row += p.Prob(i, s, j, u)
					if p.Prob(i, s, j, u) != p.Prob(j, u, i, s) {
						t.Errorf("Prob(%d,%d,%d,%d) is not symmetric", i, s, j, u)
					}
				}
				if math.Abs(row-res.Marginals[i][s]) > 1e-12 {
					t.Errorf("Σ_u P(z_%d = %d, z_%d = u) = %v, marginal %v", i, s, j, row, res.Marginals[i][s])
				}
			}
			want := p.Prob(i, 1, j, 1) + p.Prob(i, 0, j, 0) - p.Prob(i, 1, j, 0) - p.Prob(i, 0, j, 1)
			if math.Abs(p.Moment(i, j)-want) > 1e-12 {
				t.Errorf("E[z_%d z_%d] = %v, from the table %v", i, j, p.Moment(i, j), want)
			}
			if c := p.Covariance(i, j); math.Abs(c-(want-res.Means[i]*res.Means[j])) > 1e-12 {
				t.Errorf("Cov(z_%d, z_%d) = %v", i, j, c)
			}
		}
	}
	// Edge moments against the independent helper of the grid tests.
	for k, e := range enumeratePairs(m, res.LogZ) {
		if ed := m.Edges()[k]; math.Abs(p.Moment(ed.I, ed.J)-e) > 1e-12 {
			t.Errorf("E[z_%d z_%d] = %v, direct sum %v", ed.I, ed.J, p.Moment(ed.I, ed.J), e)
		}
	}
	if p.Prob(2, 1, 2, 1) != p.Marginals()[2][1] || p.Prob(2, 0, 2, 1) != 0 {
		t.Error("Prob(i, s, i, t) is not δ_st·P(z_i = s)")
	}
}

func TestGridPairsMatchesEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, sh := range [][2]int{{1, 1}, {1, 6}, {6, 1}, {2, 5}, {5, 2}, {3, 3}, {4, 4}, {4, 5}, {3, 6}} {
		for _, scale := range []float64{0.3, 1.5} {
			m := randomIsingGrid(t, sh[0], sh[1], scale, r)
			if sh[0]*sh[1] > 16 && scale != 0.3 {
				continue // enumeration of 2^18 and more states takes a while
			}
			name := fmt.Sprintf("%d×%d scale %g", sh[0], sh[1], scale)
			want, err := EnumeratePairs(context.Background(), m, 0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := PairsFor(context.Background(), m, memlimit.Budget{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Route() != "ising-grid" {
				t.Errorf("%s: route %q, want ising-grid", name, got.Route())
			}
			comparePairs(t, name, got, want, pairsTol)
			// The same model through variable elimination.
			card, fs, vals := isingFactorList(m)
			ve, err := VEPairs(context.Background(), card, fs, vals, 0, memlimit.Budget{})
			if err != nil {
				t.Fatal(err)
			}
			comparePairs(t, name+" (VE)", ve, want, pairsTol)
		}
	}
}

// Random factor graphs with zeros (about one table entry in seven), one to
// six variables of one to four states, against brute force.
func TestVEPairsRandomFactorGraphs(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	checked := 0
	for trial := range 150 {
		n := 2 + r.IntN(5)
		card, factors := randomFactorGraph(n, 1.5, r)
		logZ, _, _, joint := bruteForce(card, factors, nil)
		if math.IsInf(logZ, -1) {
			continue
		}
		checked++
		name := fmt.Sprintf("trial %d (card %v)", trial, card)
		got, err := VEPairs(context.Background(), card, factors, nil, 0, memlimit.Budget{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		comparePairs(t, name, got, brutePairs(card, nil, joint), pairsTol)
	}
	if checked < 100 {
		t.Errorf("only %d models had Z > 0", checked)
	}
}

// A factor graph with structural zeros through PairsFor: the VE route, and
// pairs with an impossible state are exact zeros.
func TestPairsForFactorGraphWithZeros(t *testing.T) {
	inf := math.Inf(-1)
	g, err := factorgraph.New([]int{3, 2, 4, 2}, []factorgraph.Factor{
		{Scope: []int{1, 0}, LogTable: []float64{0, inf, 0.5, 0.3, inf, -1}},
		{Scope: []int{0}, LogTable: []float64{0.2, 0.7, inf}},
		{Scope: []int{0, 2}, LogTable: []float64{0, 1, inf, 2, -1, 0, 0.5, inf, 1, 1, 1, 1}},
		{Scope: []int{2, 3}, LogTable: []float64{0.4, 0, inf, 1, 0, 0, -2, 0.3}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := PairsFor(context.Background(), g, memlimit.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Route() != "variable-elimination" {
		t.Errorf("route %q, want variable-elimination", got.Route())
	}
	want, err := EnumeratePairs(context.Background(), g, 0)
	if err != nil {
		t.Fatal(err)
	}
	comparePairs(t, "factor graph", got, want, pairsTol)
	for j := 1; j < 4; j++ {
		for u := range got.Card(j) {
			if v := got.Prob(0, 2, j, u); v != 0 {
				t.Errorf("P(z_0 = 2, z_%d = %d) = %v, want exactly 0", j, u, v)
			}
		}
	}
}

// A non-grid Ising model goes through variable elimination, a periodic
// grid through the transfers on a torus.
func TestPairsForIsingNotGrid(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	fields := make([]float64, 9)
	for i := range fields {
		fields[i] = r.Float64() - 0.5
	}
	per, err := ising.Grid(3, 3, true, 0.4, fields)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := ising.New(7, []ising.Edge{{I: 0, J: 1, Coupling: 0.5}, {I: 1, J: 2, Coupling: -0.7}, {I: 2, J: 3, Coupling: 0.9}, {I: 3, J: 4, Coupling: 0.2}, {I: 4, J: 5, Coupling: 1.1}, {I: 5, J: 6, Coupling: -0.3}, {I: 6, J: 0, Coupling: 0.6}, {I: 1, J: 4, Coupling: 0.8}}, fields[:7])
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]*ising.Ising{"periodic 3×3": per, "ring with chord": ring} {
		got, err := PairsFor(context.Background(), m, memlimit.Budget{})
		if err != nil {
			t.Fatal(err)
		}
		route := "variable-elimination"
		if name == "periodic 3×3" {
			route = "ising-torus"
		}
		if got.Route() != route {
			t.Errorf("%s: route %q, want %q", name, got.Route(), route)
		}
		want, _ := EnumeratePairs(context.Background(), m, 0)
		comparePairs(t, name, got, want, pairsTol)
	}
}

func TestRBMPairsMatchesEnumeration(t *testing.T) {
	for _, c := range []struct {
		d, m int
		w    float64
	}{{8, 3, 0.5}, {8, 3, 2}, {10, 9, 0.4}, {6, 0, 1}, {12, 1, 1}} {
		r := mustRandomRBM(t, c.d, c.m, c.w, 0.5, uint64(100*c.d+c.m))
		name := fmt.Sprintf("RBM %d×%d w %g", c.d, c.m, c.w)
		got, err := RBMPairs(context.Background(), r, memlimit.Budget{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := EnumeratePairs(context.Background(), r, 0)
		if err != nil {
			t.Fatal(err)
		}
		comparePairs(t, name, got, want, pairsTol)
	}
	r := mustRandomRBM(t, 8, 3, 1, 0.5, 7)
	p, err := PairsFor(context.Background(), r, memlimit.Budget{})
	if err != nil || p.Route() != "rbm-hidden" {
		t.Errorf("PairsFor on an 8×3 RBM: route %v, error %v; want rbm-hidden", p, err)
	}
}

func TestProductPairs(t *testing.T) {
	c, err := categorical.New([]categorical.Variable{
		{States: []float64{-1, 0, 2}, Probs: []float64{0.2, 0.5, 0.3}},
		{States: []float64{1, 3}, Probs: []float64{0.9, 0.1}},
		{States: []float64{0, 1, 2, 5}, Probs: []float64{0.1, 0, 0.6, 0.3}},
		{States: []float64{7}, Probs: []float64{1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := PairsFor(context.Background(), c, memlimit.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Route() != "product" {
		t.Errorf("route %q, want product", got.Route())
	}
	want, err := EnumeratePairs(context.Background(), c, 0)
	if err != nil {
		t.Fatal(err)
	}
	comparePairs(t, "categorical product", got, want, pairsTol)
	// E[v_0 v_2] = E[v_0]·E[v_2] = 0.2·(0.1·0 + 0.6·2 + 0.3·5) − … by hand.
	e0 := -0.2 + 0.6
	e2 := 1.2 + 1.5
	if math.Abs(got.Moment(0, 2)-e0*e2) > 1e-12 {
		t.Errorf("E[v_0 v_2] = %v, want %v", got.Moment(0, 2), e0*e2)
	}
}

func TestPairsForRefusals(t *testing.T) {
	ctx := context.Background()
	// A complete graph of 40 spins: elimination width 40, 2^40 states.
	m, err := ising.Complete(40, 0.1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PairsFor(ctx, m, memlimit.Budget{}); err == nil || !strings.Contains(err.Error(), "i.i.d. sample") {
		t.Errorf("complete graph of 40 spins: error %v, want one that points to an exact sample", err)
	}
	// An RBM with too many hidden units for pairs, too many visible ones to
	// enumerate.
	big := mustRandomRBM(t, 40, 26, 0.1, 0.1, 3)
	if _, err := PairsFor(ctx, big, memlimit.Budget{}); err == nil || !strings.Contains(err.Error(), "hidden") {
		t.Errorf("RBM 40×26: error %v", err)
	}
	// A tiny budget refuses with *memlimit.Exceeded on every route.
	grid, _ := ising.Grid(10, 10, false, 0.3, nil)
	per, _ := ising.Grid(4, 4, true, 0.3, nil)
	for name, mm := range map[string]model.Model{"grid": grid, "periodic": per, "rbm": mustRandomRBM(t, 20, 4, 0.3, 0.3, 1)} {
		var ex *memlimit.Exceeded
		if _, err := PairsFor(ctx, mm, memlimit.Budget{Limit: 1 << 20}); !errors.As(err, &ex) {
			t.Errorf("%s with a 1 MiB budget: error %v, want *memlimit.Exceeded", name, err)
		}
		if PairsMemory(mm) < memlimit.Base {
			t.Errorf("%s: PairsMemory %v", name, PairsMemory(mm))
		}
	}
	// A canceled context stops every route.
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	small, _ := ising.New(3, []ising.Edge{{I: 0, J: 1, Coupling: 1}}, nil)
	for name, mm := range map[string]model.Model{"grid": grid, "periodic": per, "rbm": mustRandomRBM(t, 20, 4, 0.3, 0.3, 1), "enumeration": plainModel{small}} {
		if _, err := PairsFor(canceled, mm, memlimit.Budget{}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: error %v", name, err)
		}
	}
}

// plainModel hides the type of a model, so that PairsFor enumerates it.
type plainModel struct{ model.Model }

func TestPairsForEnumerates(t *testing.T) {
	m, _ := ising.Grid(2, 3, false, 0.5, []float64{0.1, 0.2, 0.3, -0.4, 0, 0})
	got, err := PairsFor(context.Background(), plainModel{m}, memlimit.Budget{})
	if err != nil || got.Route() != "enumeration" {
		t.Fatalf("route %v, error %v", got, err)
	}
	want, _ := GridPairs(context.Background(), m, memlimit.Budget{})
	comparePairs(t, "wrapped 2×3 grid", got, want, pairsTol)
}

// Empirical pair marginals of exact draws lie within 5 binomial standard
// errors of the exact ones, and sum to one per pair.
func TestEmpiricalPairs(t *testing.T) {
	g, err := ising.Grid(3, 3, false, 0.4, []float64{0.3, -0.2, 0.1, 0, 0.5, -0.4, 0.2, 0.1, -0.3})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := EnumeratePairs(context.Background(), g, 0)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := For(g)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	z := make([]int, n*9)
	tr.Sample(z, rand.New(rand.NewPCG(1, 2)))
	emp := EmpiricalPairs(g, z, n)
	if !strings.HasPrefix(emp.Route(), "reference sample of 20000") {
		t.Errorf("route %q", emp.Route())
	}
	for i := range 9 {
		for j := i + 1; j < 9; j++ {
			var tot float64
			for s := range 2 {
				for u := range 2 {
					want, got := ex.Prob(i, s, j, u), emp.Prob(i, s, j, u)
					tot += got
					if se := math.Sqrt(want * (1 - want) / n); math.Abs(got-want) > 5*se {
						t.Errorf("P(z%d=%d, z%d=%d) = %.4f, exact %.4f (SE %.4f)", i, s, j, u, got, want, se)
					}
				}
			}
			if math.Abs(tot-1) > 1e-9 {
				t.Errorf("pair (%d, %d) sums to %v", i, j, tot)
			}
		}
	}
}
