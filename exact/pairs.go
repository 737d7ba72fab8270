package exact

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/model/rbm"
)

// Pairs holds the exact two-variable marginals P(z_i = s, z_j = t) of a
// model for every pair i < j, with its one-variable marginals: the ground
// truth for second moments E[v(z_i)·v(z_j)] (spin correlations E[z_i z_j]
// for ±1 models) and for the indicator pairs 1[z_i = s]·1[z_j = t] of
// categorical variables.
//
// The tables are stored pair by pair in row-major order (i's state
// slowest), 8·Σ_{i<j} K_i·K_j bytes in all: 16 MB for 1000 binary variables.
// A Pairs is immutable after construction and safe for concurrent use.
type Pairs struct {
	d      int
	card   []int
	values [][]float64
	cum    []int // cum[i] = Σ_{u<i} K_u
	row    []int // start of the tables of the pairs (i, ·) in p
	p      []float64
	marg   [][]float64
	route  string
}

// pairTableLen returns Σ_{i<j} K_i·K_j.
func pairTableLen(card []int) float64 {
	var s, sq float64
	for _, k := range card {
		s += float64(k)
		sq += float64(k) * float64(k)
	}
	return (s*s - sq) / 2
}

// pairsBytes is the memory of a Pairs over these cardinalities.
func pairsBytes(card []int) float64 {
	var k float64
	for _, c := range card {
		k += float64(c)
	}
	return 8*pairTableLen(card) + 8*k + 64*float64(len(card))
}

// newPairs allocates zero tables for variables with these cardinalities and
// state values (values[i] nil: 0…K_i−1).
func newPairs(card []int, values [][]float64, route string) *Pairs {
	d := len(card)
	p := &Pairs{d: d, card: card, values: make([][]float64, d), cum: make([]int, d+1), row: make([]int, d+1), marg: make([][]float64, d), route: route}
	for i, k := range card {
		p.cum[i+1] = p.cum[i] + k
		if values != nil && values[i] != nil {
			p.values[i] = values[i]
		} else {
			v := make([]float64, k)
			for s := range v {
				v[s] = float64(s)
			}
			p.values[i] = v
		}
	}
	for i, k := range card {
		p.row[i+1] = p.row[i] + k*(p.cum[d]-p.cum[i+1])
	}
	p.p = make([]float64, p.row[d])
	return p
}

// off returns the start of the table of the pair i < j.
func (p *Pairs) off(i, j int) int { return p.row[i] + p.card[i]*(p.cum[j]-p.cum[i+1]) }

// Dim returns the number of variables.
func (p *Pairs) Dim() int { return p.d }

// Card returns the number of states of variable i.
func (p *Pairs) Card(i int) int { return p.card[i] }

// Values returns the state values of variable i. The caller must not modify
// them.
func (p *Pairs) Values(i int) []float64 { return p.values[i] }

// Route names how the tables were computed: "enumeration", "ising-grid",
// "ising-torus", "variable-elimination", "rbm-hidden" or "product".
func (p *Pairs) Route() string { return p.route }

// Marginals returns P(z_i = s) for every i and s. The caller must not modify
// them.
func (p *Pairs) Marginals() [][]float64 { return p.marg }

// Joint returns the table of P(z_i = s, z_j = t) for i < j, K_i×K_j in
// row-major order (entry s·K_j + t). The caller must not modify it. It
// panics unless 0 ≤ i < j < Dim().
func (p *Pairs) Joint(i, j int) []float64 {
	if i < 0 || i >= j || j >= p.d {
		panic(fmt.Sprintf("exact: Joint(%d, %d) needs 0 ≤ i < j < %d", i, j, p.d))
	}
	o := p.off(i, j)
	return p.p[o : o+p.card[i]*p.card[j] : o+p.card[i]*p.card[j]]
}

// Prob returns P(z_i = s, z_j = t) = E[1[z_i = s]·1[z_j = t]] in either
// order of i and j; for i = j it is P(z_i = s) when s = t and 0 otherwise.
func (p *Pairs) Prob(i, s, j, t int) float64 {
	switch {
	case i == j:
		if s == t {
			return p.marg[i][s]
		}
		return 0
	case i > j:
		i, s, j, t = j, t, i, s
	}
	return p.p[p.off(i, j)+s*p.card[j]+t]
}

// Moment returns E[v(z_i)·v(z_j)] in the model's state values (E[z_i z_j]
// for ±1 spins); for i = j it is E[v(z_i)²].
func (p *Pairs) Moment(i, j int) float64 {
	if i == j {
		var e float64
		for s, q := range p.marg[i] {
			e += q * p.values[i][s] * p.values[i][s]
		}
		return e
	}
	if i > j {
		i, j = j, i
	}
	tab := p.Joint(i, j)
	vi, vj := p.values[i], p.values[j]
	var e float64
	for s, a := range vi {
		row := tab[s*len(vj) : (s+1)*len(vj)]
		for t, b := range vj {
			e += row[t] * a * b
		}
	}
	return e
}

// Covariance returns E[v(z_i)·v(z_j)] − E[v(z_i)]·E[v(z_j)].
func (p *Pairs) Covariance(i, j int) float64 {
	return p.Moment(i, j) - p.mean(i)*p.mean(j)
}

func (p *Pairs) mean(i int) float64 {
	var m float64
	for s, q := range p.marg[i] {
		m += q * p.values[i][s]
	}
	return m
}

// MaxPairsWork bounds the work of the routes of PairsFor other than
// enumeration, in elementary operations of about a nanosecond: the clamped
// transfer d²·2^side entry updates, the transfers on a torus
// (2L − 1)·(d − side)·4^side (and ModeMass's on a torus
// (d − side)²·4^side/4), the clamped variable-elimination passes
// 200·(Σ_i (K_i − 1) + 1)·(clique table entries), the hidden enumeration
// 2^M·(d²/2 + 20d). At 2^36 a route takes about a minute on one core.
const MaxPairsWork = 1 << 36

// PairsFor returns the exact pair marginals of m by the cheapest route that
// applies, checking its memory against budget first (*memlimit.Exceeded
// when over):
//
//   - a product of categorical variables: products of the marginals;
//   - an open Ising grid with shorter side ≤ MaxGridSide: the transfer of
//     IsingGrid clamped at each site in turn (GridPairs);
//   - a periodic Ising grid with shorter side ≤ MaxTorusSide within
//     MaxPairsWork: the conditional transfers of IsingTorus with each line
//     in turn as the first (TorusPairs);
//   - an RBM whose hidden enumeration is cheaper than the visible one and
//     within MaxHidden and MaxPairsWork: RBMPairs;
//   - a factor graph, a Potts model (as its factor graph), or an Ising
//     model that no transfer takes, of small
//     elimination width: variable elimination clamped at each variable and
//     state (VEPairs);
//   - any model with at most DefaultMaxStates joint states: enumeration
//     (EnumeratePairs).
//
// When none applies it says so; pair moments must then be estimated from a
// large exact i.i.d. reference sample. PairsMemory is its memory estimate.
func PairsFor(ctx context.Context, m model.Model, budget memlimit.Budget) (*Pairs, error) {
	var why string
	switch mm := m.(type) {
	case Product:
		if err := budget.Check("exact pair marginals of a product", PairsMemory(m)); err != nil {
			return nil, err
		}
		return productPairsContext(ctx, mm)
	case *ising.Ising:
		if rows, cols, periodic, ok := mm.GridShape(); ok && (!periodic && min(rows, cols) <= MaxGridSide || periodic && min(rows, cols) <= MaxTorusSide) {
			// The transfers refuse couplings too strong for float64 (and
			// the torus's work over MaxPairsWork); variable elimination,
			// in log space, may still work.
			var p *Pairs
			var err error
			if periodic {
				p, err = TorusPairs(ctx, mm, budget)
			} else {
				p, err = GridPairs(ctx, mm, budget)
			}
			if err == nil || ctx.Err() != nil || isExceeded(err) {
				return p, err
			}
			why = err.Error() + "; "
		}
		card, fs, vals := isingFactorList(mm)
		p, err := VEPairs(ctx, card, fs, vals, DefaultMaxWidth, budget)
		if err == nil || ctx.Err() != nil || isExceeded(err) {
			return p, err
		}
		why += err.Error()
	case *rbm.RBM:
		if rbmPairsApplies(mm) {
			return RBMPairs(ctx, mm, budget)
		}
		why = fmt.Sprintf("the RBM's hidden enumeration (%d hidden units, %d visible) is over MaxHidden = %d or MaxPairsWork", mm.Hidden(), mm.Dim(), MaxHidden)
	case *factorgraph.Graph:
		p, err := FactorGraphPairs(ctx, mm, budget)
		if err == nil || ctx.Err() != nil || isExceeded(err) {
			return p, err
		}
		why = err.Error()
	case *potts.Potts:
		g, err := mm.FactorGraph()
		if err != nil {
			return nil, err
		}
		p, err := FactorGraphPairs(ctx, g, budget)
		if err == nil || ctx.Err() != nil || isExceeded(err) {
			return p, err
		}
		why = err.Error()
	}
	if model.StateCount(m) <= DefaultMaxStates {
		if err := budget.Check("exact pair marginals by enumeration", enumPairsBytes(m)); err != nil {
			return nil, err
		}
		return EnumeratePairs(ctx, m, DefaultMaxStates)
	}
	if why != "" {
		why = " (" + why + ")"
	}
	return nil, tooLarge("exact: no exact route to the pair marginals of this model%s: they need a product of categorical variables, an open Ising grid with shorter side ≤ %d or a periodic one with shorter side ≤ %d, an RBM with few hidden units, a factor graph or Ising model of small elimination width, or at most %d joint states; estimate pair moments from a large exact i.i.d. sample instead", why, MaxGridSide, MaxTorusSide, DefaultMaxStates)
}

// PairsMemory estimates the bytes PairsFor allocates for m: the pair tables
// plus what its route keeps (the transfer's forward and backward messages,
// the conditional marginals and messages of the transfers on a torus, the
// tables of one variable-elimination pass, the RBM's accumulators and
// blocks, or the enumeration's log-probabilities). Each route checks its own
// estimate against the budget before it allocates.
func PairsMemory(m model.Model) float64 {
	d := m.Dim()
	card := make([]int, d)
	for i := range card {
		card[i] = len(m.States(i))
	}
	base := memlimit.Base + pairsBytes(card)
	switch mm := m.(type) {
	case Product:
		return base
	case *ising.Ising:
		if rows, cols, periodic, ok := mm.GridShape(); ok && !periodic && min(rows, cols) <= MaxGridSide {
			return base + gridPairsBytes(d, min(rows, cols))
		}
		if rows, cols, periodic, ok := mm.GridShape(); ok && periodic && min(rows, cols) <= MaxTorusSide && torusPairsWork(d, min(rows, cols)) <= MaxPairsWork {
			return base + torusPairsBytes(d, min(rows, cols))
		}
		c, fs, _ := isingFactorList(mm)
		return base + vePairsBytes(c, fs)
	case *rbm.RBM:
		if rbmPairsApplies(mm) {
			return base + rbmPairsBytes(d)
		}
	case *factorgraph.Graph:
		return base + vePairsBytes(mm.Cards(), factorList(mm))
	case *potts.Potts:
		if g, err := mm.FactorGraph(); err == nil {
			return base + vePairsBytes(g.Cards(), factorList(g))
		}
	}
	return enumPairsBytes(m)
}

// enumPairsBytes is EnumeratePairs' memory: the pair tables and one
// log-probability per joint state.
func enumPairsBytes(m model.Model) float64 {
	d := m.Dim()
	card := make([]int, d)
	for i := range card {
		card[i] = len(m.States(i))
	}
	return memlimit.Base + pairsBytes(card) + 8*float64(model.StateCount(m))
}

// isingFactorList converts an Ising model to factors: exp(J·z_i·z_j) per
// edge and exp(h·z_i) per spin, with ±1 state values.
func isingFactorList(m *ising.Ising) ([]int, []Factor, [][]float64) {
	d := m.Dim()
	card := make([]int, d)
	values := make([][]float64, d)
	fs := make([]Factor, 0, d+len(m.Edges()))
	for i, h := range m.Fields() {
		card[i] = 2
		values[i] = model.Spins
		fs = append(fs, Factor{Scope: []int{i}, LogTable: []float64{-h, h}})
	}
	for _, e := range m.Edges() {
		j := e.Coupling
		fs = append(fs, Factor{Scope: []int{e.I, e.J}, LogTable: []float64{j, -j, -j, j}})
	}
	return card, fs, values
}

// factorList returns the factors of a factor graph in VE's form.
func factorList(g *factorgraph.Graph) []Factor {
	fs := make([]Factor, 0, len(g.Factors()))
	for _, f := range g.Factors() {
		fs = append(fs, Factor{Scope: f.Scope, LogTable: f.LogTable})
	}
	return fs
}

// Product is a model of independent variables that knows their
// marginals (model/categorical).
type Product interface {
	model.Model
	// Probs returns the probability of each state of variable i.
	Probs(i int) []float64
}

// ProductPairs returns the pair marginals of independent variables:
// P(z_i = s, z_j = t) = P(z_i = s)·P(z_j = t).
func ProductPairs(c Product) *Pairs {
	p, _ := productPairsContext(context.Background(), c)
	return p
}

// productPairsContext is ProductPairs that looks at ctx between rows of
// pairs and stops with ctx's error when it is canceled.
func productPairsContext(ctx context.Context, c Product) (*Pairs, error) {
	d := c.Dim()
	card := make([]int, d)
	vals := make([][]float64, d)
	for i := range d {
		card[i] = len(c.States(i))
		vals[i] = c.States(i)
	}
	p := newPairs(card, vals, "product")
	for i := range d {
		p.marg[i] = append([]float64(nil), c.Probs(i)...)
	}
	work := 0
	for i := range d {
		if work += d - i; work >= 1<<14 {
			work = 0
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		for j := i + 1; j < d; j++ {
			tab := p.p[p.off(i, j):]
			for s, a := range p.marg[i] {
				for t, b := range p.marg[j] {
					tab[s*card[j]+t] = a * b
				}
			}
		}
	}
	return p, nil
}

// clampProb returns x clamped to [0, 1]: rounding may leave a probability
// computed by differences slightly outside.
func clampProb(x float64) float64 {
	if math.IsNaN(x) {
		panic("exact: internal error: NaN probability")
	}
	return min(max(x, 0), 1)
}

// isExceeded reports a memory refusal, which no other route should hide.
func isExceeded(err error) bool {
	var e *memlimit.Exceeded
	return errors.As(err, &e)
}
