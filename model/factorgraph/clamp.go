package factorgraph

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Clamp conditions the graph on evidence, a map from variable to observed
// state, and returns the graph over the free (unobserved) variables together
// with free, the original index of each of its variables (free[i] is the
// variable of g that variable i of the result stands for, in increasing
// order).
//
// Each factor is restricted to the observed values, keeping its free scope
// variables in their order. Factors whose whole scope is observed become
// constants; their log-values are summed into one constant factor with an
// empty scope, appended after the others (when there is any such factor), so
// that the clamped graph's LogProb equals g's LogProb at the joint
// configuration, up to rounding, and its normaliser is g's unnormalised
// probability of the evidence.
//
// Clamp fails when the evidence names a variable or a state out of range,
// when it observes every variable, and when it has probability zero in a way
// that the factors show locally: a factor that is zero at every completion of
// the observed values, or a free variable all of whose states the zeros rule
// out (see Possible). Evidence that is impossible only through several
// factors jointly is not detected.
func (g *Graph) Clamp(evidence map[int]int) (*Graph, []int, error) {
	n := len(g.card)
	obs := make([]int, n) // observed state, or −1
	for i := range obs {
		obs[i] = -1
	}
	vars := make([]int, 0, len(evidence))
	for v := range evidence {
		vars = append(vars, v)
	}
	slices.Sort(vars) // report the lowest offending variable, deterministically
	for _, v := range vars {
		s := evidence[v]
		if v < 0 || v >= n {
			return nil, nil, fmt.Errorf("evidence names variable %d; the graph has %d variables", v, n)
		}
		if s < 0 || s >= g.card[v] {
			return nil, nil, fmt.Errorf("evidence sets variable %d to state %d; it has %d states (0 to %d)", v, s, g.card[v], g.card[v]-1)
		}
		obs[v] = s
	}
	if len(vars) == n {
		return nil, nil, fmt.Errorf("evidence observes all %d variables; no free variable is left", n)
	}
	free := make([]int, 0, n-len(vars))
	newIndex := make([]int, n)
	for v := range n {
		newIndex[v] = -1
		if obs[v] < 0 {
			newIndex[v] = len(free)
			free = append(free, v)
		}
	}
	card := make([]int, len(free))
	for i, v := range free {
		card[i] = g.card[v]
	}

	var factors []Factor
	var constant float64
	constants := 0
	for k := range g.fac {
		f := &g.fac[k]
		base := 0
		var scope, fcard, fstride []int
		for j, v := range f.scope {
			if obs[v] >= 0 {
				base += obs[v] * f.stride[j]
			} else {
				scope = append(scope, newIndex[v])
				fcard = append(fcard, f.card[j])
				fstride = append(fstride, f.stride[j])
			}
		}
		if len(scope) == 0 {
			x := f.table[base]
			if math.IsInf(x, -1) {
				return nil, nil, fmt.Errorf("evidence has probability zero: factor %d, over %s, is zero at %s", k, g.scopeNames(f.scope), g.observed(f.scope, obs))
			}
			constant += x
			constants++
			continue
		}
		if len(scope) == len(f.scope) {
			factors = append(factors, Factor{Scope: scope, LogTable: f.table})
			continue
		}
		size := 1
		for _, c := range fcard {
			size *= c
		}
		table := make([]float64, size)
		d := make([]int, len(scope))
		someNonZero := false
		for a := range table {
			idx := base
			for j, s := range d {
				idx += s * fstride[j]
			}
			table[a] = f.table[idx]
			if !math.IsInf(table[a], -1) {
				someNonZero = true
			}
			advance(d, fcard)
		}
		if !someNonZero {
			return nil, nil, fmt.Errorf("evidence has probability zero: factor %d, over %s, is zero wherever %s", k, g.scopeNames(f.scope), g.observed(f.scope, obs))
		}
		factors = append(factors, Factor{Scope: scope, LogTable: table})
	}
	if constants > 0 {
		factors = append(factors, Factor{Scope: []int{}, LogTable: []float64{constant}})
	}
	// The restricted factors are this graph's own, or new: the clamped
	// graph keeps them without copies (unchanged tables are shared, and
	// neither graph changes them).
	c, err := NewOwned(card, factors)
	if err != nil {
		var ns *noStateError
		if errors.As(err, &ns) {
			return nil, nil, fmt.Errorf("evidence has probability zero: given it, the factors' zero entries rule out every state of %s", g.VariableName(free[ns.v]))
		}
		return nil, nil, err // cannot happen: the restricted factors are valid
	}
	c.names = make([]string, len(free))
	if g.stateNames != nil {
		c.stateNames = make([][]string, len(free))
	}
	for i, v := range free {
		c.names[i] = g.VariableName(v)
		if g.stateNames != nil {
			c.stateNames[i] = g.stateNames[v]
		}
	}
	return c, free, nil
}

// scopeNames lists the names of a factor's variables, for messages
// ("z1, z2, z3"; a network's own names where it has them).
func (g *Graph) scopeNames(scope []int) string {
	var b strings.Builder
	for j, v := range scope {
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(g.VariableName(v))
	}
	return b.String()
}

// observed writes the observed values of a scope's variables as the user
// gives them to --given: name=state, with the state's name where the graph
// has one and its index otherwise ("rain=yes, sprinkler=off").
func (g *Graph) observed(scope, obs []int) string {
	var b strings.Builder
	for _, v := range scope {
		if obs[v] < 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(g.VariableName(v))
		b.WriteByte('=')
		if names := g.StateNames(v); names != nil {
			b.WriteString(names[obs[v]])
		} else {
			b.WriteString(strconv.Itoa(obs[v]))
		}
	}
	return b.String()
}

// VariableName returns variable i's name: "z" followed by its index in
// the graph a clamped graph came from (its own index otherwise).
func (g *Graph) VariableName(i int) string {
	if g.names != nil {
		return g.names[i]
	}
	return "z" + strconv.Itoa(i)
}
