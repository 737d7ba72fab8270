package potts

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/modeltest"
)

// direct computes log p* from its definition with a dense coupling matrix,
// independently of the model's edge list, adjacency and field layout:
// Σ_{i<j} J_ij·[z_i = z_j] + Σ_i h_i(z_i).
func direct(n, q int, edges []Edge, fields []float64) func(z []int) float64 {
	J := make([][]float64, n)
	for i := range J {
		J[i] = make([]float64, n)
	}
	for _, e := range edges {
		J[e.I][e.J] += e.Coupling
		J[e.J][e.I] += e.Coupling
	}
	return func(z []int) float64 {
		var lp float64
		for i := range n {
			for j := i + 1; j < n; j++ {
				if z[i] == z[j] {
					lp += J[i][j]
				}
			}
			if fields != nil {
				lp += fields[i*q+z[i]]
			}
		}
		return lp
	}
}

// randomFields draws n·q fields uniform in [−a, a].
func randomFields(seed uint64, n, q int, a float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 3))
	h := make([]float64, n*q)
	for k := range h {
		h[k] = a * (2*r.Float64() - 1)
	}
	return h
}

func TestConformance(t *testing.T) {
	cases := []struct {
		name string
		m    func() (*Potts, error)
	}{
		{"open 2×3 grid, q=3, fields", func() (*Potts, error) { return Grid(2, 3, false, 3, 0.7, randomFields(1, 6, 3, 0.5)) }},
		{"3×3 torus, q=3", func() (*Potts, error) { return Grid(3, 3, true, 3, 0.4, nil) }},
		{"2×2 torus (merged bonds), q=3, fields", func() (*Potts, error) { return Grid(2, 2, true, 3, -0.6, randomFields(2, 4, 3, 1)) }},
		{"1×4 ring, q=4, antiferromagnetic", func() (*Potts, error) { return Grid(1, 4, true, 4, -1.1, randomFields(3, 4, 4, 0.3)) }},
		{"edge list, q=4, mixed couplings", func() (*Potts, error) {
			edges := []Edge{{0, 1, 0.8}, {2, 1, -0.5}, {2, 3, 1.3}, {0, 3, -0.2}, {4, 0, 0.35}}
			return New(5, 4, edges, randomFields(4, 5, 4, 0.8))
		}},
		{"edge list on a grid, per-edge couplings", func() (*Potts, error) {
			return NewGrid(2, 3, true, 3, []Edge{{0, 2, 0.7}, {0, 1, -0.2}, {1, 4, 0.9}, {3, 5, -1.4}}, randomFields(5, 6, 3, 0.4))
		}},
		{"no edges, q=5", func() (*Potts, error) { return New(3, 5, nil, randomFields(6, 3, 5, 1)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := c.m()
			if err != nil {
				t.Fatal(err)
			}
			var fields []float64
			if slices.ContainsFunc(m.Fields(), func(h float64) bool { return h != 0 }) {
				fields = m.Fields()
			}
			modeltest.Check(t, m, modeltest.Options{Reference: direct(m.Dim(), m.Q(), m.Edges(), fields)})
		})
	}
}

// log p* equals the hand-written formula itself, not only up to a
// constant, at random states of a model with fields and mixed couplings.
func TestLogProbIsTheFormula(t *testing.T) {
	edges := []Edge{{0, 1, 0.8}, {1, 2, -0.5}, {2, 3, 1.3}, {0, 3, -0.2}, {1, 3, 0.25}}
	h := randomFields(7, 4, 3, 1)
	m, err := New(4, 3, edges, h)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(8, 8))
	z := make([]int, 4)
	for range 200 {
		for i := range z {
			z[i] = r.IntN(3)
		}
		want := 0.0
		for _, e := range edges {
			if z[e.I] == z[e.J] {
				want += e.Coupling
			}
		}
		for i, s := range z {
			want += h[3*i+s]
		}
		if got := m.LogProb(z); math.Abs(got-want) > 1e-12 {
			t.Fatalf("LogProb(%v) = %v; the formula gives %v", z, got, want)
		}
	}
	// The all-equal state of a ferromagnet collects every coupling.
	g, _ := Grid(3, 4, true, 3, 0.5, nil)
	if got := g.LogProb(make([]int, 12)); got != 0.5*24 {
		t.Errorf("all-equal 3×4 torus: %v; want %v", got, 0.5*24)
	}
}

// With q = 2 the Potts model is the Ising model with couplings J/2 and
// fields (h(1) − h(0))/2, up to a constant.
func TestTwoStatesAreIsing(t *testing.T) {
	edges := []Edge{{0, 1, 0.8}, {1, 2, -0.5}, {2, 3, 1.3}, {0, 3, -0.2}}
	h := randomFields(9, 4, 2, 1)
	p, err := New(4, 2, edges, h)
	if err != nil {
		t.Fatal(err)
	}
	ie := make([]ising.Edge, len(edges))
	for k, e := range edges {
		ie[k] = ising.Edge{I: e.I, J: e.J, Coupling: e.Coupling / 2}
	}
	ih := make([]float64, 4)
	for i := range ih {
		ih[i] = (h[2*i+1] - h[2*i]) / 2
	}
	im, err := ising.New(4, ie, ih)
	if err != nil {
		t.Fatal(err)
	}
	z0 := make([]int, 4)
	c := p.LogProb(z0) - im.LogProb(z0)
	modeltest.ForEachState(p, func(z []int) {
		if d := p.LogProb(z) - im.LogProb(z) - c; math.Abs(d) > 1e-12 {
			t.Errorf("at %v Potts and Ising differ by %v beyond the constant", z, d)
		}
	})
}

// GridEdges (ising.GridEdges converted) has the number of edges a grid
// has: per line of k sites k − 1 bonds when open; when periodic k for
// k > 2, one merged bond of coupling 2J for k = 2, none for k = 1.
func TestGridEdgesCount(t *testing.T) {
	line := func(k int, periodic bool) (bonds int, merged bool) {
		switch {
		case !periodic || k == 1:
			return k - 1, false
		case k == 2:
			return 1, true
		}
		return k, false
	}
	for rows := 1; rows <= 5; rows++ {
		for cols := 1; cols <= 5; cols++ {
			for _, periodic := range []bool{false, true} {
				across, mergedAcross := line(cols, periodic)
				down, mergedDown := line(rows, periodic)
				got := GridEdges(rows, cols, periodic, 0.3)
				if want := rows*across + cols*down; len(got) != want {
					t.Errorf("%d×%d periodic=%v: %d edges; want %d", rows, cols, periodic, len(got), want)
				}
				for _, e := range got {
					horizontal := e.I/cols == e.J/cols // same row
					want := 0.3
					if horizontal && mergedAcross || !horizontal && mergedDown {
						want = 0.6
					}
					if e.I >= e.J || e.Coupling != want {
						t.Errorf("%d×%d periodic=%v: edge %+v; want I < J and coupling %v", rows, cols, periodic, e, want)
					}
				}
			}
		}
	}
	if GridEdges(0, 3, false, 1) != nil {
		t.Error("GridEdges of an empty grid is not nil")
	}
}

func TestNewGridChecksEdges(t *testing.T) {
	if _, err := NewGrid(2, 3, false, 3, []Edge{{0, 4, 1}}, nil); err == nil || !strings.Contains(err.Error(), "does not join neighbours") {
		t.Errorf("a diagonal edge was accepted: %v", err)
	}
	if _, err := NewGrid(2, 3, false, 3, []Edge{{0, 2, 1}}, nil); err == nil {
		t.Error("a wrap-around edge on an open grid was accepted")
	}
	if _, err := NewGrid(3, 3, true, 3, []Edge{{0, 6, 1}, {2, 0, 1}, {0, 1, 1}, {0, 3, 1}}, nil); err != nil {
		t.Errorf("wrap-around edges of a torus were refused: %v", err)
	}
	m, err := NewGrid(2, 3, true, 3, []Edge{{0, 2, 0.7}, {0, 1, -0.2}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, c, p, ok := m.GridShape(); r != 2 || c != 3 || !p || !ok {
		t.Errorf("GridShape = %d, %d, %v, %v", r, c, p, ok)
	}
	if _, _, _, ok := (&Potts{}).GridShape(); ok {
		t.Error("a model without a grid reports one")
	}
	e, _ := New(3, 3, nil, nil)
	if _, _, _, ok := e.GridShape(); ok {
		t.Error("a model built by New reports a grid")
	}
}

func TestAccessors(t *testing.T) {
	h := randomFields(10, 6, 3, 1)
	m, err := Grid(2, 3, false, 3, 0.5, h)
	if err != nil {
		t.Fatal(err)
	}
	if m.Q() != 3 || m.Dim() != 6 {
		t.Errorf("Q %d, Dim %d", m.Q(), m.Dim())
	}
	if st := m.States(4); !slices.Equal(st, []float64{0, 1, 2}) || &st[0] != &m.States(0)[0] {
		t.Errorf("States(4) = %v, not the shared {0, 1, 2}", st)
	}
	if !slices.Equal(m.Fields(), h) {
		t.Error("Fields differ from the input")
	}
	h[0] = 99
	if m.Fields()[0] == 99 {
		t.Error("the model shares the caller's fields")
	}
	nb, cp := m.Neighbors(1)
	if !slices.Equal(nb, []int{0, 2, 4}) || !slices.Equal(cp, []float64{0.5, 0.5, 0.5}) {
		t.Errorf("Neighbors(1) = %v, %v", nb, cp)
	}
	z, _ := New(2, 4, nil, nil)
	if len(z.Fields()) != 8 || slices.ContainsFunc(z.Fields(), func(h float64) bool { return h != 0 }) || z.Edges() == nil {
		t.Errorf("a model without fields and edges: fields %v, edges %v", z.Fields(), z.Edges())
	}
	if b := m.Bytes(); b < int64(8*len(m.Fields())) {
		t.Errorf("Bytes = %d, less than the fields", b)
	}
}

func TestStateNamesAndObservables(t *testing.T) {
	m, _ := Grid(2, 2, true, 3, 0.5, nil)
	if m.StateNames(0) != nil {
		t.Error("an unnamed model has names")
	}
	if got := m.ObservableNames(); !slices.Equal(got, []string{"fraction_0", "fraction_1", "fraction_2"}) {
		t.Errorf("ObservableNames = %v", got)
	}
	named, err := m.WithStateNames([]string{"red", "green", "dark blue"})
	if err != nil {
		t.Fatal(err)
	}
	if got := named.StateNames(3); !slices.Equal(got, []string{"red", "green", "dark blue"}) {
		t.Errorf("StateNames = %v", got)
	}
	if got := named.ObservableNames(); !slices.Equal(got, []string{"fraction_red", "fraction_green", "fraction_dark blue"}) {
		t.Errorf("named ObservableNames = %v", got)
	}
	if m.StateNames(0) != nil || m.ObservableNames()[0] != "fraction_0" {
		t.Error("WithStateNames changed the original")
	}
	if _, ok := model.Model(named).(model.StateNamer); !ok {
		t.Error("the model is no model.StateNamer")
	}
	z := []int{2, 0, 2, 2}
	dst := make([]float64, 3)
	named.Observe(dst, z)
	if !slices.Equal(dst, []float64{0.25, 0, 0.75}) {
		t.Errorf("Observe(%v) = %v", z, dst)
	}
	modeltest.ForEachState(named, func(z []int) {
		if named.LogProb(z) != m.LogProb(z) {
			t.Fatalf("names changed log p* at %v", z)
		}
	})
	for names, want := range map[string]string{
		"red,green":       "3 states but 2 state names",
		"red,,blue":       "state 1 has an empty name",
		"red,green,red":   `states 0 and 2 are both named "red"`,
		"red,gr\neen,x":   "unprintable",
		"red,\x00,blue":   "unprintable",
		"red,\xff\xfe,ok": "not valid UTF-8",
	} {
		if _, err := m.WithStateNames(strings.Split(names, ",")); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("names %q: %v; want an error containing %q", names, err, want)
		}
	}
}

// The factor graph gives log p* exactly as the model does, with a unary
// factor only for variables whose fields are not all zero.
func TestFactorGraph(t *testing.T) {
	h := randomFields(11, 6, 3, 0.7)
	clear(h[3:6]) // variable 1 has no field
	m, err := Grid(2, 3, true, 3, -0.4, h)
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.FactorGraph()
	if err != nil {
		t.Fatal(err)
	}
	if want := 5 + len(m.Edges()); len(g.Factors()) != want {
		t.Errorf("%d factors; want %d (5 unary, one per edge)", len(g.Factors()), want)
	}
	if g.Dim() != 6 || !slices.Equal(g.Cards(), []int{3, 3, 3, 3, 3, 3}) {
		t.Errorf("factor graph of %d variables, cards %v", g.Dim(), g.Cards())
	}
	modeltest.ForEachState(m, func(z []int) {
		if a, b := m.LogProb(z), g.LogProb(z); math.Abs(a-b) > 1e-12 {
			t.Fatalf("at %v: Potts %v, factor graph %v", z, a, b)
		}
	})
	e, _ := New(3, 4, nil, nil)
	if g, err := e.FactorGraph(); err != nil || len(g.Factors()) != 0 {
		t.Errorf("a model without edges or fields: %v, %v", g, err)
	}
	big, _ := New(2, 1<<17, nil, nil)
	if _, err := big.FactorGraph(); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("q = 2^17: %v", err)
	}
}

// The hot paths allocate nothing.
func TestHotPathsDoNotAllocate(t *testing.T) {
	m, _ := Grid(4, 4, true, 5, 0.3, randomFields(12, 16, 5, 0.5))
	z := make([]int, 16)
	for i := range z {
		z[i] = i % 5
	}
	dst := make([]float64, 5)
	tr := m.NewTracker(z)
	gt := m.NewGradientTracker(z)
	obs := make([]float64, 5)
	i, s := 0, 0
	allocs := testing.AllocsPerRun(200, func() {
		i = (i + 7) % 16
		s = (s + 1) % 5
		dst = m.LogConditional(dst, z, i)
		_ = m.DeltaLogProb(z, i, s)
		dst = tr.LogConditional(dst, i)
		_ = tr.DeltaLogProb(i, s)
		tr.Set(i, s)
		_ = gt.DeltaLogProb(i, s)
		if s != gt.State()[i] {
			gt.Try(i, s)
			if i%2 == 0 {
				gt.Commit()
			}
		}
		m.Observe(obs, z)
	})
	if allocs != 0 {
		t.Errorf("hot paths allocate %v times a round", allocs)
	}
}

func BenchmarkLogConditional(b *testing.B) {
	m, _ := Grid(32, 32, true, 5, 0.3, randomFields(13, 1024, 5, 0.5))
	z := make([]int, 1024)
	for i := range z {
		z[i] = i * 7 % 5
	}
	dst := make([]float64, 5)
	i := 0
	for b.Loop() {
		dst = m.LogConditional(dst, z, i)
		if i++; i == 1024 {
			i = 0
		}
	}
}

func BenchmarkGradientTrackerTryCommit(b *testing.B) {
	m, _ := Grid(32, 32, true, 5, 0.3, randomFields(14, 1024, 5, 0.5))
	z := make([]int, 1024)
	gt := m.NewGradientTracker(z)
	i := 0
	for b.Loop() {
		gt.Try(i, (gt.State()[i]+1)%5)
		gt.Commit()
		if i++; i == 1024 {
			i = 0
		}
	}
}
