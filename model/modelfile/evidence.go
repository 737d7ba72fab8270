package modelfile

// The evidence of a loaded network: mapping states and marginals between
// the free variables (the model sampled) and every variable of the file.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dstein/dstein/model"
)

// ExpandStates maps n rows of states of the free variables (row-major) to
// rows over every variable of the file, evidence variables at their
// observed states.
func (l *Loaded) ExpandStates(z []int, n int) []int {
	if l.Free == nil {
		return z
	}
	d, df := l.File.Dim(), l.Model.Dim()
	out := make([]int, n*d)
	for i := range n {
		row := out[i*d : (i+1)*d]
		for v, st := range l.Evidence {
			row[v] = st
		}
		for j, v := range z[i*df : (i+1)*df] {
			row[l.Free[j]] = v
		}
	}
	return out
}

// FreeStates is ExpandStates' inverse: it takes n samples over every
// variable of the file, row after row (as "dstein sample --out" writes
// them with evidence), checks that each holds the evidence, and returns
// them over the free variables (z itself without evidence).
func (l *Loaded) FreeStates(z []int, n int) ([]int, error) {
	if l.Free == nil {
		return z, nil
	}
	vars := make([]int, 0, len(l.Evidence))
	for v := range l.Evidence {
		vars = append(vars, v)
	}
	slices.Sort(vars)
	d, df := l.File.Dim(), len(l.Free)
	out := make([]int, n*df)
	for r := range n {
		row := z[r*d : (r+1)*d]
		for _, v := range vars {
			if row[v] != l.Evidence[v] {
				return nil, fmt.Errorf("sample %d has %s = %s, but the evidence sets it to %s; want samples drawn given the same evidence", r+1,
					model.VariableName(l.File, v), stateName(l.File, v, row[v]), stateName(l.File, v, l.Evidence[v]))
			}
		}
		for j, v := range l.Free {
			out[r*df+j] = row[v]
		}
	}
	return out, nil
}

// stateName names state s of variable v: its name in a network that has
// them, else its index.
func stateName(m model.Model, v, s int) string {
	if sn, ok := m.(model.StateNamer); ok {
		if names := sn.StateNames(v); s < len(names) {
			return names[s]
		}
	}
	return strconv.Itoa(s)
}

// ExpandMarginals maps marginals of the free variables to marginals of
// every variable of the file, evidence variables as point masses.
func (l *Loaded) ExpandMarginals(marg [][]float64) [][]float64 {
	if l.Free == nil {
		return marg
	}
	out := make([][]float64, l.File.Dim())
	for v, st := range l.Evidence {
		out[v] = make([]float64, len(l.File.States(v)))
		out[v][st] = 1
	}
	for j, p := range marg {
		out[l.Free[j]] = p
	}
	return out
}

// EvidenceByName returns the observed state index of each evidence
// variable by its name in the file (model.VariableName of File: "z3"),
// empty without evidence.
func (l *Loaded) EvidenceByName() map[string]int {
	out := make(map[string]int, len(l.Evidence))
	for v, s := range l.Evidence {
		out[model.VariableName(l.File, v)] = s
	}
	return out
}

// EvidenceText says the evidence as "rain = yes, z3 = 1" (state names
// where the network has them, indices otherwise), in variable order; ""
// without evidence.
func (l *Loaded) EvidenceText() string {
	vars := make([]int, 0, len(l.Evidence))
	for v := range l.Evidence {
		vars = append(vars, v)
	}
	slices.Sort(vars)
	parts := make([]string, len(vars))
	for k, v := range vars {
		st := strconv.Itoa(l.Evidence[v])
		if sn, ok := l.File.(model.StateNamer); ok {
			if names := sn.StateNames(v); names != nil {
				st = names[l.Evidence[v]]
			}
		}
		parts[k] = model.VariableName(l.File, v) + " = " + st
	}
	return strings.Join(parts, ", ")
}
