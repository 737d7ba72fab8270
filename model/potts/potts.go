package potts

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/model/ising"
)

// Why one file of about 540 lines: the Potts model's density, conditionals, relaxation and
// gradients share its edge lists and per-site layout.

// Edge is an undirected edge between variables I and J with coupling J_ij:
// the edge adds J_ij to log p* when the two variables are in the same state.
type Edge struct {
	I, J     int
	Coupling float64
}

// Potts is a Potts model. It is immutable and safe for concurrent use.
type Potts struct {
	n, q   int
	states []float64 // 0, 1, …, q−1, shared by every variable
	edges  []Edge
	fields []float64 // n×q, row-major: fields[i*q+s] = h_i(s)
	// Adjacency in compressed rows: the neighbours of i are
	// nbr[start[i]:start[i+1]] with couplings cpl[...].
	start  []int
	nbr    []int
	cpl    []float64
	maxDeg int
	// rows and cols are set when the model was built on a grid.
	rows, cols int
	periodic   bool
	names      []string // the states' names; nil: unnamed
	observed   []string // the observables' names
}

var (
	_ model.Model              = (*Potts)(nil)
	_ model.Conditional        = (*Potts)(nil)
	_ model.Delta              = (*Potts)(nil)
	_ model.Relaxed            = (*Potts)(nil)
	_ model.Incremental        = (*Potts)(nil)
	_ model.RelaxedIncremental = (*Potts)(nil)
	_ model.Observables        = (*Potts)(nil)
	_ model.StateNamer         = (*Potts)(nil)
	_ model.Sizer              = (*Potts)(nil)
)

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// maxEntries bounds n·q, so that the fields and the memberships (n·q
// float64s each) have a length that int and the allocator can hold.
const maxEntries = math.MaxInt / 16

// New returns the Potts model on n variables with q ≥ 2 states each, the
// given edges and fields. fields holds h_i(s) at fields[i*q+s] (n·q
// entries), or is nil (all zero). Edges must join two different variables
// in [0, n), each pair at most once, with finite couplings; fields must be
// finite, and the parameters small enough for model.CheckLogBound. New
// copies its arguments.
func New(n, q int, edges []Edge, fields []float64) (*Potts, error) {
	if n < 1 {
		return nil, fmt.Errorf("potts model has no variables (n = %d)", n)
	}
	if q < 2 {
		return nil, fmt.Errorf("potts model has q = %d states per variable; want q ≥ 2", q)
	}
	if q > maxEntries/n {
		return nil, fmt.Errorf("potts model of %d variables with %d states each is too large to hold", n, q)
	}
	if fields != nil && len(fields) != n*q {
		return nil, fmt.Errorf("potts model has %d variables of %d states, so n·q = %d fields, but got %d", n, q, n*q, len(fields))
	}
	for k, h := range fields {
		if !finite(h) {
			return nil, fmt.Errorf("field of variable %d, state %d is %v; want a finite number", k/q, k%q, h)
		}
	}
	adj, err := model.NewAdjacency(n, "variable", len(edges), func(k int) (int, int, float64) {
		return edges[k].I, edges[k].J, edges[k].Coupling
	})
	if err != nil {
		return nil, err
	}
	// |log p*| ≤ Σ_e |J_e| + Σ_i max_s |h_i(s)|.
	bound := 0.0
	for i := 0; i < len(fields); i += q {
		largest := 0.0
		for _, h := range fields[i : i+q] {
			largest = max(largest, math.Abs(h))
		}
		bound += largest
	}
	for _, e := range edges {
		bound += math.Abs(e.Coupling)
	}
	if err := model.CheckLogBound("the Potts model", bound); err != nil {
		return nil, err
	}
	m := &Potts{
		n:      n,
		q:      q,
		states: make([]float64, q),
		edges:  slices.Clone(edges),
		fields: make([]float64, n*q),
		start:  adj.Start,
		nbr:    adj.Nbr,
		cpl:    adj.Cpl,
		maxDeg: adj.MaxDeg,
	}
	if m.edges == nil {
		m.edges = []Edge{}
	}
	copy(m.fields, fields)
	for s := range m.states {
		m.states[s] = float64(s)
	}
	m.observed = observableNames(q, nil)
	return m, nil
}

// GridEdges returns the edges of a rows×cols grid with uniform coupling:
// those of ising.GridEdges, in its order (site (r, c) is variable
// r*cols + c; with periodic boundaries each row and column wraps around,
// a side of length 2 merges its wrap-around bond into the inner one as an
// edge of coupling 2J, and a side of length 1 adds no bond).
func GridEdges(rows, cols int, periodic bool, coupling float64) []Edge {
	if rows < 1 || cols < 1 {
		return nil
	}
	ie := ising.GridEdges(rows, cols, periodic, coupling)
	edges := make([]Edge, len(ie))
	for k, e := range ie {
		edges[k] = Edge(e)
	}
	return edges
}

// checkGrid reports a grid without sites or with more sites than an int
// holds.
func checkGrid(rows, cols int) error {
	if rows < 1 || cols < 1 {
		return fmt.Errorf("potts grid must have at least one row and one column, got %d×%d", rows, cols)
	}
	if rows > maxEntries/cols {
		return fmt.Errorf("potts grid of %d×%d sites is too large to hold", rows, cols)
	}
	return nil
}

// Grid returns the Potts model with q states on a rows×cols grid with
// uniform coupling (see GridEdges) and the given fields (n·q entries,
// row-major, or nil for none).
func Grid(rows, cols int, periodic bool, q int, coupling float64, fields []float64) (*Potts, error) {
	if err := checkGrid(rows, cols); err != nil {
		return nil, err
	}
	if !finite(coupling) {
		return nil, fmt.Errorf("potts coupling is %v; want a finite number", coupling)
	}
	if q < 2 {
		return nil, fmt.Errorf("potts model has q = %d states per variable; want q ≥ 2", q)
	}
	return NewGrid(rows, cols, periodic, q, GridEdges(rows, cols, periodic, coupling), fields)
}

// NewGrid returns the Potts model with q states on a rows×cols grid with
// the given edges (each joining two grid neighbours, across the boundary
// too when periodic; couplings may differ per edge) and fields (n·q
// entries, row-major, or nil for none). Unlike New, the model remembers its
// grid (GridShape).
func NewGrid(rows, cols int, periodic bool, q int, edges []Edge, fields []float64) (*Potts, error) {
	if err := checkGrid(rows, cols); err != nil {
		return nil, err
	}
	n := rows * cols
	allowed := map[[2]int]bool{}
	for _, e := range GridEdges(rows, cols, periodic, 1) {
		allowed[[2]int{e.I, e.J}] = true
	}
	for k, e := range edges {
		if e.I < 0 || e.J < 0 || e.I >= n || e.J >= n || e.I == e.J {
			continue // New reports it
		}
		if !allowed[[2]int{min(e.I, e.J), max(e.I, e.J)}] {
			return nil, fmt.Errorf("edge %d (%d, %d) does not join neighbours of the %d×%d grid", k, e.I, e.J, rows, cols)
		}
	}
	m, err := New(n, q, edges, fields)
	if err != nil {
		return nil, err
	}
	m.rows, m.cols, m.periodic = rows, cols, periodic
	return m, nil
}

// GridShape reports the grid a model was built on by Grid or NewGrid:
// rows, cols and whether it is periodic. ok is false for models built
// otherwise.
func (m *Potts) GridShape() (rows, cols int, periodic, ok bool) {
	return m.rows, m.cols, m.periodic, m.rows > 0
}

// WithStateNames returns a copy of the model whose states have the given
// names (model.StateNamer), which quantity and observable names use: q
// distinct names, each non-empty, valid UTF-8 and printable (spaces inside
// a name allowed, no control characters).
func (m *Potts) WithStateNames(names []string) (*Potts, error) {
	if len(names) != m.q {
		return nil, fmt.Errorf("potts model has %d states but %d state names", m.q, len(names))
	}
	seen := make(map[string]int, len(names))
	for s, name := range names {
		if name == "" {
			return nil, fmt.Errorf("state %d has an empty name", s)
		}
		if !utf8.ValidString(name) {
			return nil, fmt.Errorf("the name of state %d is not valid UTF-8", s)
		}
		for _, r := range name {
			if !unicode.IsPrint(r) {
				return nil, fmt.Errorf("the name of state %d, %q, holds the unprintable character %U", s, name, r)
			}
		}
		if prev, ok := seen[name]; ok {
			return nil, fmt.Errorf("states %d and %d are both named %q", prev, s, name)
		}
		seen[name] = s
	}
	c := *m
	c.names = slices.Clone(names)
	c.observed = observableNames(m.q, c.names)
	return &c, nil
}

// StateNames returns the names of variable i's states (the same for every
// variable), or nil when the states are unnamed. The caller must not modify
// the slice.
func (m *Potts) StateNames(int) []string { return m.names }

// observableNames returns "fraction_<state>" for each state, by name or
// else by index.
func observableNames(q int, names []string) []string {
	out := make([]string, q)
	for s := range out {
		if names != nil {
			out[s] = "fraction_" + names[s]
		} else {
			out[s] = "fraction_" + strconv.Itoa(s)
		}
	}
	return out
}

// Dim returns the number of variables.
func (m *Potts) Dim() int { return m.n }

// Q returns the number of states of each variable.
func (m *Potts) Q() int { return m.q }

// States returns {0, 1, …, q−1}, one slice shared by every variable. The
// caller must not modify it.
func (m *Potts) States(int) []float64 { return m.states }

// Edges returns the edges. The caller must not modify the slice.
func (m *Potts) Edges() []Edge { return m.edges }

// Fields returns the fields, n×q row-major (h_i(s) at i*q+s), zeros where
// none were given. The caller must not modify the slice.
func (m *Potts) Fields() []float64 { return m.fields }

// Neighbors returns the neighbours of variable i and the couplings to them.
// The caller must not modify the slices.
func (m *Potts) Neighbors(i int) ([]int, []float64) {
	return m.nbr[m.start[i]:m.start[i+1]], m.cpl[m.start[i]:m.start[i+1]]
}

// LogProb returns Σ_e J_e·[z_i = z_j] + Σ_i h_i(z_i).
func (m *Potts) LogProb(z []int) float64 {
	var lp float64
	for _, e := range m.edges {
		if z[e.I] == z[e.J] {
			lp += e.Coupling
		}
	}
	for i, s := range z[:m.n] {
		lp += m.fields[i*m.q+s]
	}
	return lp
}

// LogConditional writes h_i(s) + Σ_j J_ij·[z_j = s] for each state s of
// variable i: log p*(z with z_i = s) up to a constant. It costs
// O(q + degree) and allocates only when dst holds fewer than q entries.
func (m *Potts) LogConditional(dst []float64, z []int, i int) []float64 {
	q := m.q
	if cap(dst) < q {
		dst = make([]float64, q)
	}
	dst = dst[:q]
	copy(dst, m.fields[i*q:(i+1)*q])
	for k := m.start[i]; k < m.start[i+1]; k++ {
		dst[z[m.nbr[k]]] += m.cpl[k]
	}
	return dst
}

// entry returns h_i(s) + Σ_j J_ij·[z_j = s], summed in the order of
// LogConditional and RelaxedLogProb, so that all three agree bit for bit.
func (m *Potts) entry(z []int, i, s int) float64 {
	l := m.fields[i*m.q+s]
	for k := m.start[i]; k < m.start[i+1]; k++ {
		if z[m.nbr[k]] == s {
			l += m.cpl[k]
		}
	}
	return l
}

// DeltaLogProb returns the change of log p* when variable i takes state s,
// in O(degree).
func (m *Potts) DeltaLogProb(z []int, i, s int) float64 {
	a := z[i]
	if a == s {
		return 0
	}
	d := m.fields[i*m.q+s] - m.fields[i*m.q+a]
	for k := m.start[i]; k < m.start[i+1]; k++ {
		switch z[m.nbr[k]] {
		case s:
			d += m.cpl[k]
		case a:
			d -= m.cpl[k]
		}
	}
	return d
}

// RelaxedLogProb evaluates Σ_e J_e Σ_s m_is·m_js + Σ_i Σ_s h_i(s)·m_is at
// the memberships mem (n blocks of q), the expectation of log p* under
// independent memberships. Its gradient with respect to m_is is
// h_i(s) + Σ_j J_ij·m_js: at a one-hot state, variable i's log conditional.
func (m *Potts) RelaxedLogProb(grad, mem []float64) float64 {
	q := m.q
	var f float64
	for i := range m.n {
		h := m.fields[i*q : (i+1)*q]
		mi := mem[i*q : (i+1)*q]
		lo, hi := m.start[i], m.start[i+1]
		for s := range q {
			g := h[s]
			for k := lo; k < hi; k++ {
				g += m.cpl[k] * mem[m.nbr[k]*q+s]
			}
			// Each edge is seen from both ends: count half of it here.
			f += mi[s] * (g + h[s]) / 2
			if grad != nil {
				grad[i*q+s] = g
			}
		}
	}
	return f
}

// tracker keeps the configuration of one chain; conditionals cost
// O(q + degree), changes of log p* O(degree).
type tracker struct {
	m *Potts
	z []int
}

// NewTracker returns a tracker at a copy of z.
func (m *Potts) NewTracker(z []int) model.Tracker {
	return &tracker{m: m, z: slices.Clone(z)}
}

func (t *tracker) State() []int  { return t.z }
func (t *tracker) Set(i, s int)  { t.z[i] = s }
func (t *tracker) Reset(z []int) { copy(t.z, z) }
func (t *tracker) LogConditional(dst []float64, i int) []float64 {
	return t.m.LogConditional(dst, t.z, i)
}
func (t *tracker) DeltaLogProb(i, s int) float64 { return t.m.DeltaLogProb(t.z, i, s) }

// gradTracker keeps one configuration and the relaxed gradient at it,
// variable v's block being its log conditional. Variable i's block does
// not depend on z_i, so a change of i from a to s changes two entries of
// each neighbour's block, a and s; each is recomputed from scratch in
// O(degree), in the order of RelaxedLogProb, so Grad equals
// RelaxedLogProb's gradient bit for bit, nothing accumulates, and a Try
// costs O(Σ_{j∼i} deg_j) whatever q.
type gradTracker struct {
	m       *Potts
	z       []int
	g, g2   []float64 // gradient at z; g2 equals g outside the pending Try's entries
	changed []int     // the pending Try's variables: i, then its neighbours
	ti, ts  int       // the pending Try (ti < 0: none)
	ta      int       // z_i before the pending Try
}

// NewGradientTracker returns a gradient tracker at a copy of z.
func (m *Potts) NewGradientTracker(z []int) model.GradientTracker {
	t := &gradTracker{
		m: m, z: make([]int, m.n),
		g: make([]float64, m.n*m.q), g2: make([]float64, m.n*m.q),
		changed: make([]int, 0, m.maxDeg+1), ti: -1,
	}
	t.Reset(z)
	return t
}

func (t *gradTracker) State() []int                  { return t.z }
func (t *gradTracker) Grad() []float64               { return t.g }
func (t *gradTracker) DeltaLogProb(i, s int) float64 { return t.m.DeltaLogProb(t.z, i, s) }

// abandon brings g2 back to g after a Try that was not committed.
func (t *gradTracker) abandon() {
	if t.ti < 0 {
		return
	}
	q := t.m.q
	for _, v := range t.changed[1:] {
		t.g2[v*q+t.ta], t.g2[v*q+t.ts] = t.g[v*q+t.ta], t.g[v*q+t.ts]
	}
	t.ti = -1
}

func (t *gradTracker) Try(i, s int) ([]int, []float64) {
	t.abandon()
	m, q := t.m, t.m.q
	nb := m.nbr[m.start[i]:m.start[i+1]]
	t.changed = append(append(t.changed[:0], i), nb...)
	a := t.z[i]
	t.z[i] = s
	for _, v := range nb {
		t.g2[v*q+a] = m.entry(t.z, v, a)
		t.g2[v*q+s] = m.entry(t.z, v, s)
	}
	t.z[i] = a
	t.ti, t.ts, t.ta = i, s, a
	return t.changed, t.g2
}

func (t *gradTracker) Commit() {
	if t.ti < 0 {
		panic("potts: GradientTracker.Commit without a pending Try")
	}
	q := t.m.q
	t.z[t.ti] = t.ts
	for _, v := range t.changed[1:] {
		t.g[v*q+t.ta], t.g[v*q+t.ts] = t.g2[v*q+t.ta], t.g2[v*q+t.ts]
	}
	t.ti = -1
}

func (t *gradTracker) Reset(z []int) {
	copy(t.z, z)
	q := t.m.q
	for v := range t.m.n {
		t.m.LogConditional(t.g[v*q:(v+1)*q], t.z, v)
	}
	copy(t.g2, t.g)
	t.ti = -1
}

// Bytes returns the model's size: edges, fields, adjacency, state values
// and names.
func (m *Potts) Bytes() int64 {
	b := int64(len(m.edges))*24 + int64(len(m.fields)+len(m.start)+len(m.states))*8 + int64(len(m.nbr))*16
	for _, s := range m.observed {
		b += 16 + int64(len(s))
	}
	for _, s := range m.names {
		b += 16 + int64(len(s))
	}
	return b
}

// ObservableNames returns "fraction_<state>" for each state, by its name
// when the states are named and else by its index: "fraction_0",
// "fraction_red".
func (m *Potts) ObservableNames() []string { return slices.Clone(m.observed) }

// Observe writes, for each state, the fraction of z's variables in it.
func (m *Potts) Observe(dst []float64, z []int) {
	dst = dst[:m.q]
	clear(dst)
	for _, s := range z {
		dst[s]++
	}
	for s := range dst {
		dst[s] /= float64(len(z))
	}
}

// FactorGraph returns the same distribution as a pairwise factor graph
// over q states per variable, for variable elimination: a unary factor of
// log-values h_i(·) for each variable with a nonzero field, then a q×q
// factor per edge, in the order of Edges, with log-value J_e on its
// diagonal and 0 elsewhere. The tables take 8·q² bytes an edge; it fails
// where factorgraph.New's limits on states do (q over
// factorgraph.MaxCardinality, n·q over factorgraph.MaxStates).
func (m *Potts) FactorGraph() (*factorgraph.Graph, error) {
	if m.q > factorgraph.MaxCardinality {
		return nil, fmt.Errorf("the Potts model as a factor graph: %d states per variable, over the limit of %d", m.q, factorgraph.MaxCardinality)
	}
	if m.n > factorgraph.MaxStates/m.q {
		return nil, fmt.Errorf("the Potts model as a factor graph: %d variables of %d states, over the limit of %d states in all", m.n, m.q, factorgraph.MaxStates)
	}
	q := m.q
	card := make([]int, m.n)
	for i := range card {
		card[i] = q
	}
	fs := make([]factorgraph.Factor, 0, m.n+len(m.edges))
	for i := range m.n {
		row := m.fields[i*q : (i+1)*q]
		if slices.ContainsFunc(row, func(h float64) bool { return h != 0 }) {
			fs = append(fs, factorgraph.Factor{Scope: []int{i}, LogTable: slices.Clone(row)})
		}
	}
	for _, e := range m.edges {
		table := make([]float64, q*q)
		for s := range q {
			table[s*q+s] = e.Coupling
		}
		fs = append(fs, factorgraph.Factor{Scope: []int{e.I, e.J}, LogTable: table})
	}
	g, err := factorgraph.NewOwned(card, fs)
	if err != nil {
		return nil, fmt.Errorf("the Potts model as a factor graph: %w", err)
	}
	return g, nil
}

// Kind names the model's kind for messages (model.Kinder).
func (m *Potts) Kind() string { return "a Potts model" }
