// Package observed is the model of draws summarised without their model
// (dstein summary DRAWS): its variables are the draws' columns, named as
// they are, and each one's states are the distinct values seen in its
// column, in increasing order. It has no density (model.NoDensity): its
// LogProb is 0 everywhere.
package observed

import (
	"fmt"
	"math"
	"slices"

	"github.com/dstein/dstein/model"
)

// Model is the observed model of some draws. It is immutable and safe for
// concurrent use.
type Model struct {
	names  []string
	states [][]float64
}

var (
	_ model.VariableNamer = (*Model)(nil)
	_ model.NoDensity     = (*Model)(nil)
)

// New returns the model of columns of draws: names[i] names column i, and
// values(i, r) returns its value in draw r of rows. Every value must be
// finite.
func New(names []string, rows int, values func(i, r int) float64) (*Model, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("no variables")
	}
	seen := map[string]bool{}
	m := &Model{names: append([]string(nil), names...), states: make([][]float64, len(names))}
	for i, n := range names {
		if n == "" {
			return nil, fmt.Errorf("variable %d has an empty name", i+1)
		}
		if seen[n] {
			return nil, fmt.Errorf("two variables are named %q", n)
		}
		seen[n] = true
		var st []float64
		for r := range rows {
			v := values(i, r)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("variable %s, draw %d: value %v; want a finite number", n, r+1, v)
			}
			st = append(st, v)
		}
		slices.Sort(st)
		m.states[i] = slices.Compact(st)
	}
	return m, nil
}

// Dim returns the number of variables.
func (m *Model) Dim() int { return len(m.names) }

// States returns the values seen of variable i, in increasing order.
func (m *Model) States(i int) []float64 { return m.states[i] }

// State returns the index of value v among variable i's states, and false
// when it was not seen.
func (m *Model) State(i int, v float64) (int, bool) {
	return slices.BinarySearch(m.states[i], v)
}

// LogProb returns 0: the model has no density.
func (m *Model) LogProb([]int) float64 { return 0 }

// VariableName returns the column's name.
func (m *Model) VariableName(i int) string { return m.names[i] }

// NoDensity marks the model as one without a density.
func (m *Model) NoDensity() {}

// Kind names the model's kind for messages (model.Kinder).
func (m *Model) Kind() string { return "a model given only by its samples" }
