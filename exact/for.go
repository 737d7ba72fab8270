package exact

import (
	"context"
	"fmt"
	"math"

	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/model/rbm"
)

// For returns exact ground truth for m by the cheapest method that applies:
// transfer over the grid for an open-boundary Ising grid (shorter side up to
// MaxGridSide), the transfers of IsingTorus conditioned on one line for a
// periodic one (shorter side up to MaxTorusSide; a periodic grid whose
// couplings are too strong for them in float64 is enumerated when it has
// at most DefaultMaxStates states), enumeration of the hidden units for an
// RBM with at most MaxHidden hidden units when that is cheaper than
// enumerating the visible ones, variable elimination for a factor graph
// and for a Potts model (its FactorGraph), and enumeration of every joint
// state for models with at most DefaultMaxStates states. It says clearly
// when none applies.
func For(m model.Model) (Truth, error) {
	return ForContext(context.Background(), m)
}

// ForContext is For that stops with ctx's error soon after ctx is
// canceled: every route looks at ctx as it goes (each elimination and pass
// step of variable elimination, every 2^16 entry updates of the Ising
// transfer and of each transfer on a torus, each chunk of 2^12 hidden
// configurations of the RBM, every 4096 joint states of an enumeration).
func ForContext(ctx context.Context, m model.Model) (Truth, error) {
	return ForContextWidth(ctx, m, DefaultMaxWidth)
}

// ForContextWidth is ForContext with maxWidth in place of
// DefaultMaxWidth on the routes of variable elimination (factor graphs,
// Potts models and Ising models by their bonds; dstein exact's
// --max-width).
func ForContextWidth(ctx context.Context, m model.Model, maxWidth int) (Truth, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch mm := m.(type) {
	case *ising.Ising:
		if rows, cols, periodic, ok := mm.GridShape(); ok && !periodic && min(rows, cols) <= MaxGridSide {
			return truthOrError(isingGridContext(ctx, mm))
		}
		if rows, cols, periodic, ok := mm.GridShape(); ok && periodic && min(rows, cols) <= MaxTorusSide {
			t, err := isingTorusContext(ctx, mm)
			if err == nil || ctx.Err() != nil || model.StateCount(m) > DefaultMaxStates {
				return truthOrError(t, err)
			}
		}
		if model.StateCount(m) > DefaultMaxStates {
			ve, err := forIsingVE(ctx, mm, maxWidth)
			if err != nil && ctx.Err() == nil {
				return nil, fmt.Errorf("%w (%v)", errNoExact, err)
			}
			return truthOrError(ve, err)
		}
	case *rbm.RBM:
		if mm.Hidden() <= MaxHidden && (mm.Hidden() < mm.Dim() || model.StateCount(m) > DefaultMaxStates) {
			return truthOrError(newRBMTruthContext(ctx, mm, rbmChunkBits, false))
		}
	case *factorgraph.Graph:
		return truthOrError(ForFactorGraphContext(ctx, mm, maxWidth, memlimit.Budget{}))
	case *potts.Potts:
		return truthOrError(forPotts(ctx, mm, maxWidth))
	}
	if model.StateCount(m) <= DefaultMaxStates {
		return truthOrError(newEnumeratedContext(ctx, m, DefaultMaxStates))
	}
	return nil, errNoExact
}

// errNoExact is For's refusal of a model that no route takes.
var errNoExact = tooLarge("no exact method for this model: exact answers need an open-boundary Ising grid with shorter side ≤ %d, a periodic one with shorter side ≤ %d, an RBM with ≤ %d hidden units, a factor graph, Potts or Ising model of elimination width within the limit (%d by default, --max-width), or at most %d joint states", MaxGridSide, MaxTorusSide, MaxHidden, DefaultMaxWidth, DefaultMaxStates)

// isingFactors returns an Ising model as pairwise factors over states
// {0, 1} (spins −1, +1) and the spins' values, for variable elimination: a
// unary factor (−h_i, h_i) for each nonzero field, then a 2×2 factor per
// edge with log-values J_e·z_i·z_j, in the order of Edges.
func isingFactors(m *ising.Ising) (card []int, fs []Factor, values [][]float64) {
	n := m.Dim()
	card = make([]int, n)
	values = make([][]float64, n)
	for i := range card {
		card[i], values[i] = 2, model.Spins
	}
	for i, h := range m.Fields() {
		if h != 0 {
			fs = append(fs, Factor{Scope: []int{i}, LogTable: []float64{-h, h}})
		}
	}
	for _, e := range m.Edges() {
		j := e.Coupling
		fs = append(fs, Factor{Scope: []int{e.I, e.J}, LogTable: []float64{j, -j, -j, j}})
	}
	return card, fs, values
}

// isingGridWidth is pottsGridWidth for an Ising model built by ising.Grid
// (every bond present): a lower bound of its elimination width, 0 for
// models built otherwise.
func isingGridWidth(m *ising.Ising) int {
	rows, cols, periodic, ok := m.GridShape()
	if !ok || min(rows, cols) < 2 || len(m.Edges()) != gridBonds(rows, cols, periodic) {
		return 0 // some neighbours are not joined
	}
	return min(rows, cols) + 1
}

// gridBonds is the number of bonds of a whole rows × cols grid (a wrap of a
// side of 2 merges with the inner bond).
func gridBonds(rows, cols int, periodic bool) int {
	line := func(k int) int {
		switch {
		case !periodic:
			return k - 1
		case k == 2:
			return 1
		}
		return k
	}
	return rows*line(cols) + cols*line(rows)
}

// forIsingVE runs variable elimination on an Ising model that the grid
// transfers do not take (any graph of bonds, or a grid too large for them)
// and that is too large to enumerate, with the width limit maxWidth. A
// whole grid whose treewidth alone puts it over maxWidth or
// MaxTableEntries is refused before the elimination is planned.
func forIsingVE(ctx context.Context, m *ising.Ising, maxWidth int) (*VE, error) {
	if w := isingGridWidth(m); w > maxWidth || math.Pow(2, float64(w)) > MaxTableEntries {
		rows, cols, _, _ := m.GridShape()
		return nil, tooLarge("exact: the %d×%d Ising grid has treewidth %d or more, so variable elimination needs a factor over at least %d variables, over the limit %d", rows, cols, w-1, w, min(maxWidth, DefaultMaxWidth))
	}
	if m.Dim() > vePlanMaxVars {
		return nil, tooLarge("exact: %d spins, over the %d for which variable elimination of an Ising model is tried", m.Dim(), vePlanMaxVars)
	}
	card, fs, values := isingFactors(m)
	return newVE(ctx, card, fs, values, maxWidth, memlimit.Budget{}, 0, true)
}

// forPotts runs variable elimination on the factor graph of a Potts model
// (Potts.FactorGraph) with the width limit and budget of a factor graph. A
// model whose pairwise tables alone (q² entries an edge) would exceed
// MaxTotalEntries is refused before they are built: the c − 1 edges in the
// bucket of a variable eliminated with a clique of c variables have
// (c − 1)·q² ≤ q^c entries, so the cliques have at least as many as the
// edges and variable elimination would refuse it anyway. So is a whole
// grid whose treewidth alone puts it over maxWidth or MaxTableEntries
// (pottsGridWidth).
func forPotts(ctx context.Context, m *potts.Potts, maxWidth int) (*VE, error) {
	if e := pottsPairEntries(m); e > MaxTotalEntries {
		return nil, tooLarge("exact: the Potts model's pairwise factor tables would have %.4g entries (%d edges of %d×%d), over variable elimination's limit of %d (2^27)", e, len(m.Edges()), m.Q(), m.Q(), MaxTotalEntries)
	}
	if w := pottsGridWidth(m); w > 0 {
		rows, cols, _, _ := m.GridShape()
		if w > maxWidth {
			return nil, tooLarge("exact: the %d×%d Potts grid has treewidth %d or more, so variable elimination needs a factor over at least %d variables, over the limit %d", rows, cols, w-1, w, maxWidth)
		}
		if e := math.Pow(float64(m.Q()), float64(w)); e > MaxTableEntries {
			return nil, tooLarge("exact: the %d×%d Potts grid has treewidth %d or more, so variable elimination needs a factor of at least %d^%d = %.4g entries, over the limit of %d (2^25)", rows, cols, w-1, m.Q(), w, e, MaxTableEntries)
		}
	}
	g, err := m.FactorGraph()
	if err != nil {
		return nil, fmt.Errorf("exact: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return ForFactorGraphContext(ctx, g, maxWidth, memlimit.Budget{})
}

// pottsGridWidth returns a lower bound of the elimination width of a Potts
// model on a whole rows×cols grid (every pair of neighbours joined, as Grid
// builds it), both sides at least 2: such a grid holds the open grid, of
// treewidth min(rows, cols), so every elimination order has a factor over
// min(rows, cols) + 1 variables. It returns 0 for other models. The bound
// spares a large grid the minutes that planning the elimination would take
// before it refuses.
func pottsGridWidth(m *potts.Potts) int {
	rows, cols, periodic, ok := m.GridShape()
	if !ok || min(rows, cols) < 2 || len(m.Edges()) != gridBonds(rows, cols, periodic) {
		return 0 // some neighbours are not joined
	}
	return min(rows, cols) + 1
}

// factorBytes is what For holds per factor besides variable elimination's
// own memory: the Factor that hands it over.
const factorBytes = 48

// veBytes is variable elimination's peak for these factors when its order
// can be planned here (see veNeed), else the bound NewVE enforces: its
// tables and messages at MaxTotalEntries.
func veBytes(card []int, factors []Factor) float64 {
	if need, ok := veNeed(card, factors); ok {
		return need
	}
	return 8 * 2 * MaxTotalEntries
}

// pottsPairEntries returns the entries of a Potts model's pairwise factor
// tables: q² per edge.
func pottsPairEntries(m *potts.Potts) float64 {
	q := float64(m.Q())
	return q * q * float64(len(m.Edges()))
}

// truthOrError returns t as a Truth, or a nil Truth (not one holding a nil
// pointer) with err.
func truthOrError[T Truth](t T, err error) (Truth, error) {
	if err != nil {
		return nil, err
	}
	return t, nil
}

// ForFactorGraph runs variable elimination on a factor graph, refusing
// elimination widths above maxWidth (see NewVE).
func ForFactorGraph(g *factorgraph.Graph, maxWidth int) (*VE, error) {
	return ForFactorGraphContext(context.Background(), g, maxWidth, memlimit.Budget{})
}

// ForFactorGraphContext is ForFactorGraph within a memory budget, stopping
// with ctx's error when ctx is canceled.
func ForFactorGraphContext(ctx context.Context, g *factorgraph.Graph, maxWidth int, budget memlimit.Budget) (*VE, error) {
	return ForFactorGraphHolding(ctx, g, maxWidth, budget, 0)
}

// ForFactorGraphHolding is ForFactorGraphContext for a caller that holds
// held bytes meanwhile besides memlimit.Base (the model, what it will
// write), which every check of the budget adds to variable elimination's
// own memory.
func ForFactorGraphHolding(ctx context.Context, g *factorgraph.Graph, maxWidth int, budget memlimit.Budget, held float64) (*VE, error) {
	fs := make([]Factor, 0, len(g.Factors()))
	for _, f := range g.Factors() {
		fs = append(fs, Factor{Scope: f.Scope, LogTable: f.LogTable})
	}
	vals := make([][]float64, g.Dim())
	for i := range vals {
		vals[i] = g.States(i)
	}
	return newVE(ctx, g.Cards(), fs, vals, maxWidth, budget, held, false)
}

// Memory estimates the bytes For allocates for m: the state space's
// cumulative weights for enumeration, the forward tables of the Ising
// transfer, the conditional marginals and messages of the transfers on a
// torus (or what its Sample allocates, if more), the weights and chunk sums
// of the RBM's hidden enumeration; for a factor graph, variable
// elimination's peak for the order it plans (the bound of its tables at
// MaxTotalEntries above vePlanMaxVars variables), and for a Potts model
// that and its factor graph; memlimit.Base alone where For refuses the
// model before building anything.
func Memory(m model.Model) float64 {
	d := float64(m.Dim())
	switch mm := m.(type) {
	case *ising.Ising:
		if rows, cols, periodic, ok := mm.GridShape(); ok && !periodic && min(rows, cols) <= MaxGridSide {
			return memlimit.Base + 8*d*float64(int(1)<<min(rows, cols)) + 64*d
		}
		if rows, cols, periodic, ok := mm.GridShape(); ok && periodic && min(rows, cols) <= MaxTorusSide {
			// The plan checks the edges and the float64 bound without
			// allocating the transfer's tables; where it refuses, For
			// enumerates.
			if _, err := torusPlanOf(mm, 0); err == nil || model.StateCount(m) > DefaultMaxStates {
				return memlimit.Base + torusBytes(m.Dim(), min(rows, cols))
			}
		}
		if model.StateCount(m) > DefaultMaxStates {
			if w := isingGridWidth(mm); w > DefaultMaxWidth || math.Pow(2, float64(w)) > MaxTableEntries {
				return memlimit.Base // refused before anything is built (forIsingVE)
			}
			if mm.Dim() > vePlanMaxVars {
				return memlimit.Base + 8*2*MaxTotalEntries + (factorBytes+32)*float64(mm.Dim()+len(mm.Edges()))
			}
			card, fs, _ := isingFactors(mm)
			return memlimit.Base + veBytes(card, fs) + (factorBytes+32)*float64(len(fs))
		}
	case *rbm.RBM:
		if mm.Hidden() <= MaxHidden && (mm.Hidden() < mm.Dim() || model.StateCount(m) > DefaultMaxStates) {
			return memlimit.Base + 8*4*d*float64(mm.Hidden()) + 8*float64(int(1)<<max(0, mm.Hidden()-10)) + 1<<20
		}
	case *factorgraph.Graph:
		fs := make([]Factor, 0, len(mm.Factors()))
		for _, f := range mm.Factors() {
			fs = append(fs, Factor{Scope: f.Scope})
		}
		return memlimit.Base + veBytes(mm.Cards(), fs) + factorBytes*float64(len(fs))
	case *potts.Potts:
		if w := pottsGridWidth(mm); pottsPairEntries(mm) > MaxTotalEntries || w > DefaultMaxWidth || math.Pow(float64(mm.Q()), float64(w)) > MaxTableEntries {
			return memlimit.Base // refused before anything is built (forPotts)
		}
		n, q, e := mm.Dim(), mm.Q(), len(mm.Edges())
		fg := factorgraph.Shape{Variables: n, States: n * q, Factors: n + e, ScopeEntries: n + 2*e,
			TableBytes: float64(n)*factorgraph.TableBytes(q) + float64(e)*factorgraph.TableBytes(q*q)}
		card := make([]int, n)
		fs := make([]Factor, 0, n+e)
		for i := range card {
			card[i] = q
			fs = append(fs, Factor{Scope: []int{i}})
		}
		for _, ed := range mm.Edges() {
			fs = append(fs, Factor{Scope: []int{ed.I, ed.J}})
		}
		return memlimit.Base + veBytes(card, fs) + factorBytes*float64(len(fs)) + fg.Bytes() + fg.BuildBytes()
	}
	if c := model.StateCount(m); c <= DefaultMaxStates {
		return memlimit.Base + 8*float64(c) + 16*d
	}
	return memlimit.Base
}
