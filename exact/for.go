package exact

import (
	"fmt"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
)

// For returns exact ground truth for m by the cheapest method that applies:
// transfer over the grid for an open-boundary Ising grid (shorter side up to
// MaxGridSide), enumeration of the hidden units for an RBM with at most
// MaxHidden hidden units when that is cheaper than enumerating the visible
// ones, variable elimination for a factor graph, and enumeration of every joint state for models with at most
// DefaultMaxStates states. It says clearly when none applies.
func For(m model.Model) (Truth, error) {
	switch mm := m.(type) {
	case *ising.Ising:
		if rows, cols, periodic, ok := mm.GridShape(); ok && !periodic && min(rows, cols) <= MaxGridSide {
			return NewIsingGrid(mm)
		}
	case *rbm.RBM:
		if mm.Hidden() <= MaxHidden && (mm.Hidden() < mm.Dim() || model.StateCount(m) > DefaultMaxStates) {
			return NewRBM(mm)
		}
	case *factorgraph.Graph:
		return ForFactorGraph(mm, DefaultMaxWidth)
	}
	if model.StateCount(m) <= DefaultMaxStates {
		return NewEnumerated(m, DefaultMaxStates)
	}
	return nil, fmt.Errorf("no exact method for this model: exact answers need an open-boundary Ising grid with shorter side ≤ %d, an RBM with ≤ %d hidden units, a factor graph of elimination width ≤ %d, or at most %d joint states", MaxGridSide, MaxHidden, DefaultMaxWidth, DefaultMaxStates)
}

// ForFactorGraph runs variable elimination on a factor graph, refusing
// elimination widths above maxWidth (see NewVE).
func ForFactorGraph(g *factorgraph.Graph, maxWidth int) (*VE, error) {
	var fs []Factor
	for _, f := range g.Factors() {
		fs = append(fs, Factor{Scope: f.Scope, LogTable: f.LogTable})
	}
	vals := make([][]float64, g.Dim())
	for i := range vals {
		vals[i] = g.States(i)
	}
	return NewVE(g.Cards(), fs, vals, maxWidth)
}
