package exact

import (
	"fmt"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
)

// For returns exact ground truth for m by the cheapest method that applies:
// transfer over the grid for an open-boundary Ising grid (shorter side up to
// MaxGridSide), enumeration of the hidden units for an RBM with at most
// MaxHidden hidden units when that is cheaper than enumerating the visible
// ones, and enumeration of every joint state for models with at most
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
	}
	if model.StateCount(m) <= DefaultMaxStates {
		return NewEnumerated(m, DefaultMaxStates)
	}
	return nil, fmt.Errorf("no exact method for this model: exact answers need an open-boundary Ising grid with shorter side ≤ %d, an RBM with ≤ %d hidden units, or at most %d joint states", MaxGridSide, MaxHidden, DefaultMaxStates)
}
