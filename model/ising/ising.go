package ising

import (
	"fmt"
	"math"

	"github.com/dstein/dstein/model"
)

// Edge is an undirected edge between spins I and J with coupling J_ij.
type Edge struct {
	I, J     int
	Coupling float64
}

// Ising is an Ising model. It is immutable and safe for concurrent use.
type Ising struct {
	n      int
	edges  []Edge
	fields []float64
	// Adjacency in compressed rows: the neighbours of i are
	// nbr[start[i]:start[i+1]] with couplings cpl[...].
	start []int
	nbr   []int
	cpl   []float64
	// rows and cols are set when the model was built by Grid.
	rows, cols int
	periodic   bool
}

var (
	_ model.Model       = (*Ising)(nil)
	_ model.Conditional = (*Ising)(nil)
	_ model.Delta       = (*Ising)(nil)
	_ model.Relaxed     = (*Ising)(nil)
	_ model.Incremental = (*Ising)(nil)

	_ model.RelaxedIncremental = (*Ising)(nil)
)

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// New returns the Ising model on n spins with the given edges and fields.
// fields may be nil (all zero). Edges must join two different spins in
// [0, n), each pair at most once, with finite couplings.
func New(n int, edges []Edge, fields []float64) (*Ising, error) {
	if n < 1 {
		return nil, fmt.Errorf("ising model has no spins (n = %d)", n)
	}
	if fields == nil {
		fields = make([]float64, n)
	}
	if len(fields) != n {
		return nil, fmt.Errorf("ising model has %d spins but %d fields", n, len(fields))
	}
	for i, h := range fields {
		if !finite(h) {
			return nil, fmt.Errorf("field of spin %d is %v; want a finite number", i, h)
		}
	}
	adj, err := model.NewAdjacency(n, "spin", len(edges), func(k int) (int, int, float64) {
		return edges[k].I, edges[k].J, edges[k].Coupling
	})
	if err != nil {
		return nil, err
	}
	bound := 0.0
	for _, h := range fields {
		bound += math.Abs(h)
	}
	for _, e := range edges {
		bound += math.Abs(e.Coupling)
	}
	if err := model.CheckLogBound("the Ising model", bound); err != nil {
		return nil, err
	}
	m := &Ising{
		n:      n,
		edges:  append([]Edge(nil), edges...),
		fields: append([]float64(nil), fields...),
		start:  adj.Start,
		nbr:    adj.Nbr,
		cpl:    adj.Cpl,
	}
	return m, nil
}

// MaxSites is the most sites of a grid Grid and NewGrid accept (2³¹ − 1:
// the spins' indices stay int32-sized, and rows·cols cannot overflow).
const MaxSites = math.MaxInt32

// GridEdges returns the edges of a rows×cols grid with uniform coupling
// (nil for a grid without sites or of more than MaxSites).
// Site (r, c) is spin r*cols + c. With periodic boundaries each row and
// column wraps around; where a side has length 2 the wrap-around bond joins
// the same pair as the inner bond and the two are merged into one edge of
// coupling 2J, and a side of length 1 adds no bond.
func GridEdges(rows, cols int, periodic bool, coupling float64) []Edge {
	if rows < 1 || cols < 1 || rows > MaxSites/cols {
		return nil // no grid, or none Grid accepts
	}
	// At most two edges per site: sized once, so that building a large
	// grid does not grow (and copy) the list and the index.
	idx := make(map[[2]int]int, 2*rows*cols)
	edges := make([]Edge, 0, 2*rows*cols)
	add := func(a, b int) {
		if a == b {
			return
		}
		key := [2]int{min(a, b), max(a, b)}
		if k, ok := idx[key]; ok {
			edges[k].Coupling += coupling
			return
		}
		idx[key] = len(edges)
		edges = append(edges, Edge{I: key[0], J: key[1], Coupling: coupling})
	}
	for r := range rows {
		for c := range cols {
			s := r*cols + c
			if c+1 < cols {
				add(s, s+1)
			} else if periodic {
				add(s, r*cols)
			}
			if r+1 < rows {
				add(s, s+cols)
			} else if periodic {
				add(s, c)
			}
		}
	}
	return edges
}

// Grid returns the Ising model on a rows×cols grid with uniform coupling
// (see GridEdges) and the given fields (nil for none).
func Grid(rows, cols int, periodic bool, coupling float64, fields []float64) (*Ising, error) {
	if rows < 1 || cols < 1 {
		return nil, fmt.Errorf("ising grid must have at least one row and one column, got %d×%d", rows, cols)
	}
	if rows > MaxSites/cols {
		return nil, fmt.Errorf("ising grid of %d×%d sites: at most %d sites", rows, cols, MaxSites)
	}
	if !finite(coupling) {
		return nil, fmt.Errorf("ising coupling is %v; want a finite number", coupling)
	}
	return NewGrid(rows, cols, periodic, GridEdges(rows, cols, periodic, coupling), fields)
}

// NewGrid returns the Ising model on a rows×cols grid with the given edges
// (each joining two grid neighbours, across the boundary too when periodic;
// couplings may differ per edge) and fields (nil for none). Unlike New, the
// model remembers its grid, which exact inference by transfer over the grid
// needs.
func NewGrid(rows, cols int, periodic bool, edges []Edge, fields []float64) (*Ising, error) {
	if rows < 1 || cols < 1 {
		return nil, fmt.Errorf("ising grid must have at least one row and one column, got %d×%d", rows, cols)
	}
	if rows > MaxSites/cols {
		return nil, fmt.Errorf("ising grid of %d×%d sites: at most %d sites", rows, cols, MaxSites)
	}
	allowed := map[[2]int]bool{}
	for _, e := range GridEdges(rows, cols, periodic, 1) {
		allowed[[2]int{e.I, e.J}] = true
	}
	n := rows * cols
	for k, e := range edges {
		if e.I < 0 || e.J < 0 || e.I >= n || e.J >= n {
			continue // New reports it
		}
		if !allowed[[2]int{min(e.I, e.J), max(e.I, e.J)}] {
			return nil, fmt.Errorf("edge %d (%d, %d) does not join neighbours of the %d×%d grid", k, e.I, e.J, rows, cols)
		}
	}
	m, err := New(n, edges, fields)
	if err != nil {
		return nil, err
	}
	m.rows, m.cols, m.periodic = rows, cols, periodic
	return m, nil
}

// GridShape reports the grid a model was built on by Grid: rows, cols and
// whether it is periodic. ok is false for models built otherwise.
func (m *Ising) GridShape() (rows, cols int, periodic, ok bool) {
	return m.rows, m.cols, m.periodic, m.rows > 0
}

// Complete returns the Ising model on the complete graph of n spins with
// uniform coupling and the given fields (nil for none).
func Complete(n int, coupling float64, fields []float64) (*Ising, error) {
	if !finite(coupling) {
		return nil, fmt.Errorf("ising coupling is %v; want a finite number", coupling)
	}
	var edges []Edge
	for i := range n {
		for j := i + 1; j < n; j++ {
			edges = append(edges, Edge{I: i, J: j, Coupling: coupling})
		}
	}
	return New(n, edges, fields)
}

// Dim returns the number of spins.
func (m *Ising) Dim() int { return m.n }

// States returns {−1, +1}.
func (m *Ising) States(int) []float64 { return model.Spins }

// Edges returns the edges. The caller must not modify the slice.
func (m *Ising) Edges() []Edge { return m.edges }

// Fields returns the fields h. The caller must not modify the slice.
func (m *Ising) Fields() []float64 { return m.fields }

// Neighbors returns the neighbours of spin i and the couplings to them. The
// caller must not modify the slices.
func (m *Ising) Neighbors(i int) ([]int, []float64) {
	return m.nbr[m.start[i]:m.start[i+1]], m.cpl[m.start[i]:m.start[i+1]]
}

// LogProb returns Σ J_ij z_i z_j + Σ h_i z_i.
func (m *Ising) LogProb(z []int) float64 {
	var s float64
	for _, e := range m.edges {
		s += e.Coupling * model.Spin(z[e.I]) * model.Spin(z[e.J])
	}
	for i, h := range m.fields {
		s += h * model.Spin(z[i])
	}
	return s
}

// LocalField returns h_i + Σ_j J_ij z_j, the coefficient of z_i in log p*.
func (m *Ising) LocalField(z []int, i int) float64 {
	l := m.fields[i]
	for k := m.start[i]; k < m.start[i+1]; k++ {
		l += m.cpl[k] * model.Spin(z[m.nbr[k]])
	}
	return l
}

// LogConditional writes −L and +L, with L the local field of spin i.
func (m *Ising) LogConditional(dst []float64, z []int, i int) []float64 {
	l := m.LocalField(z, i)
	return append(dst[:0], -l, l)
}

// DeltaLogProb returns the change of log p* when spin i takes state s.
func (m *Ising) DeltaLogProb(z []int, i, s int) float64 {
	if z[i] == s {
		return 0
	}
	return 2 * m.LocalField(z, i) * model.Spin(s)
}

// RelaxedLogProb evaluates log p* at soft spins u_i = m_i+ − m_i− (the
// expected spin under the memberships): Σ J_ij u_i u_j + Σ h_i u_i. With
// independent memberships this is also the expectation of log p*.
func (m *Ising) RelaxedLogProb(grad, mem []float64) float64 {
	var f float64
	for i := range m.n {
		ui := mem[2*i+1] - mem[2*i]
		g := m.fields[i]
		for k := m.start[i]; k < m.start[i+1]; k++ {
			j := m.nbr[k]
			g += m.cpl[k] * (mem[2*j+1] - mem[2*j])
		}
		// Each edge is seen from both ends: count half of it here.
		f += ui * (g + m.fields[i]) / 2
		if grad != nil {
			grad[2*i+1] = g
			grad[2*i] = -g
		}
	}
	return f
}

// tracker keeps the configuration of one chain; local fields cost
// O(degree).
type tracker struct {
	m *Ising
	z []int
}

// NewTracker returns a tracker at a copy of z.
func (m *Ising) NewTracker(z []int) model.Tracker {
	return &tracker{m: m, z: append([]int(nil), z...)}
}

func (t *tracker) State() []int  { return t.z }
func (t *tracker) Set(i, s int)  { t.z[i] = s }
func (t *tracker) Reset(z []int) { copy(t.z, z) }
func (t *tracker) LogConditional(dst []float64, i int) []float64 {
	return t.m.LogConditional(dst, t.z, i)
}
func (t *tracker) DeltaLogProb(i, s int) float64 { return t.m.DeltaLogProb(t.z, i, s) }

// gradTracker keeps one configuration and the relaxed gradient at it,
// (−L_i, +L_i) for each spin. A change of spin i changes the local fields of
// i's neighbours only; each is recomputed from scratch in O(degree), in the
// order of RelaxedLogProb, so Grad equals RelaxedLogProb's gradient bit for
// bit and a Try costs O(degree²).
type gradTracker struct {
	m       *Ising
	z       []int
	g, g2   []float64 // gradient at z; g2 equals g outside the pending Try's blocks
	changed []int     // the pending Try's variables
	ti, ts  int       // the pending Try (ti < 0: none)
}

// NewGradientTracker returns a gradient tracker at a copy of z.
func (m *Ising) NewGradientTracker(z []int) model.GradientTracker {
	t := &gradTracker{m: m, z: make([]int, m.n), g: make([]float64, 2*m.n), g2: make([]float64, 2*m.n), ti: -1}
	t.Reset(z)
	return t
}

func (t *gradTracker) State() []int                  { return t.z }
func (t *gradTracker) Grad() []float64               { return t.g }
func (t *gradTracker) DeltaLogProb(i, s int) float64 { return t.m.DeltaLogProb(t.z, i, s) }

// abandon brings g2 back to g after a Try that was not committed.
func (t *gradTracker) abandon() {
	if t.ti >= 0 {
		for _, v := range t.changed {
			t.g2[2*v], t.g2[2*v+1] = t.g[2*v], t.g[2*v+1]
		}
		t.ti = -1
	}
}

func (t *gradTracker) Try(i, s int) ([]int, []float64) {
	t.abandon()
	nb := t.m.nbr[t.m.start[i]:t.m.start[i+1]]
	t.changed = append(append(t.changed[:0], i), nb...)
	old := t.z[i]
	t.z[i] = s
	for _, v := range t.changed {
		l := t.m.LocalField(t.z, v)
		t.g2[2*v], t.g2[2*v+1] = -l, l
	}
	t.z[i] = old
	t.ti, t.ts = i, s
	return t.changed, t.g2
}

func (t *gradTracker) Commit() {
	if t.ti < 0 {
		panic("ising: GradientTracker.Commit without a pending Try")
	}
	t.z[t.ti] = t.ts
	for _, v := range t.changed {
		t.g[2*v], t.g[2*v+1] = t.g2[2*v], t.g2[2*v+1]
	}
	t.ti = -1
}

func (t *gradTracker) Reset(z []int) {
	copy(t.z, z)
	for v := range t.m.n {
		l := t.m.LocalField(t.z, v)
		t.g[2*v], t.g[2*v+1] = -l, l
	}
	copy(t.g2, t.g)
	t.ti = -1
}

// Bytes returns the model's size: edges, fields and adjacency.
func (m *Ising) Bytes() int64 {
	return int64(len(m.edges))*24 + int64(len(m.fields)+len(m.start))*8 + int64(len(m.nbr))*16
}

// ObservableNames returns "magnetisation".
func (m *Ising) ObservableNames() []string { return []string{"magnetisation"} }

// Observe writes the magnetisation Σ z_i / d of z.
func (m *Ising) Observe(dst []float64, z []int) {
	var s int
	for _, v := range z {
		s += 2*v - 1
	}
	dst[0] = float64(s) / float64(len(z))
}

// SpinEdges returns the number of edges (model.SpinShape).
func (m *Ising) SpinEdges() int { return m.start[m.n] / 2 }

// SpinTableEntries returns Σ 2^deg_i over the spins of degree at most
// maxDeg (model.SpinShape).
func (m *Ising) SpinTableEntries(maxDeg int) float64 {
	var e float64
	for i := range m.n {
		if deg := m.start[i+1] - m.start[i]; deg <= maxDeg {
			e += float64(int(1) << deg)
		}
	}
	return e
}

// Kind names the model's kind for messages (model.Kinder).
func (m *Ising) Kind() string { return "an Ising model" }
