package infer

import (
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
)

// The quantities a run monitors: log p*, the observables, each variable's
// mean (two states) or each state's indicator (more).

// quantityFunc writes the value of one quantity for each sample row.
type quantityFunc struct {
	name string
	// v is the variable of a variable's quantity (−1 for log p* and the
	// observables) and state the state of an indicator (−1 for the value
	// of a variable with two states).
	v, state int
	fill     func(dst []float64, s *sampler.Samples)
}

// quantities lists the monitored quantities of m.
func quantities(m model.Model) []quantityFunc {
	var out []quantityFunc
	if _, none := m.(model.NoDensity); !none {
		out = append(out, quantityFunc{"log_p", -1, -1, func(dst []float64, s *sampler.Samples) {
			for r := range s.N {
				dst[r] = m.LogProb(s.Row(r))
			}
		}})
	}
	if o, ok := m.(model.Observables); ok {
		names := o.ObservableNames()
		for k, name := range names {
			out = append(out, quantityFunc{name, -1, -1, func(dst []float64, s *sampler.Samples) {
				buf := make([]float64, len(names))
				for r := range s.N {
					o.Observe(buf, s.Row(r))
					dst[r] = buf[k]
				}
			}})
		}
	}
	for i := range m.Dim() {
		st := m.States(i)
		var names []string
		if sn, ok := m.(model.StateNamer); ok {
			names = sn.StateNames(i)
		}
		if len(st) == 2 {
			// The mean of the state values; with named states of values
			// 0 and 1 (a Bayesian network's), that is the probability of
			// the second state, and the quantity is named for it
			// ("asia=no", not "asia", which reads as P(asia = yes)).
			name := model.VariableName(m, i)
			if len(names) == 2 && st[0] == 0 && st[1] == 1 {
				name += "=" + names[1]
			}
			out = append(out, quantityFunc{name, i, -1, func(dst []float64, s *sampler.Samples) {
				for r := range s.N {
					dst[r] = st[s.Z[r*s.D+i]]
				}
			}})
			continue
		}
		for k, v := range st {
			label := formatState(v)
			if len(names) == len(st) {
				label = names[k]
			}
			out = append(out, quantityFunc{model.VariableName(m, i) + "=" + label, i, k, func(dst []float64, s *sampler.Samples) {
				for r := range s.N {
					dst[r] = 0
					if s.Z[r*s.D+i] == k {
						dst[r] = 1
					}
				}
			}})
		}
	}
	return out
}

// visits counts the rows in the quantity's state: state 1 of a two-state
// variable, the indicator's state otherwise.
func (q quantityFunc) visits(s *sampler.Samples) int {
	want := q.state
	if want < 0 {
		want = 1
	}
	c := 0
	for r := range s.N {
		if s.Z[r*s.D+q.v] == want {
			c++
		}
	}
	return c
}

// fillConditional writes the quantity's Rao–Blackwellised series: the
// conditional mean of the variable's value (two states) or of the
// indicator, given the rest of each row.
func (q quantityFunc) fillConditional(dst []float64, m model.Model, t *condTable) {
	if q.state >= 0 {
		copy(dst, t.column(t.col[q.v]+q.state))
		return
	}
	st := m.States(q.v)
	for r, p := range t.column(t.col[q.v]) {
		dst[r] = st[0] + (st[1]-st[0])*p
	}
}

// ruledOut reports whether a variable's quantity is constant by the model's
// own account (model.Support): the indicator of a state that is impossible
// whatever the other variables are, or the value of a two-state variable
// with such a state. Its state is never rare, since no chain is to enter
// it (a categorical probability of 0 kept the adaptive default running to
// its limit, waiting for the state to be seen).
func (q quantityFunc) ruledOut(m model.Model) bool {
	if q.v >= 0 && len(m.States(q.v)) == 1 {
		// The indicator of a variable's only state: no other is to enter
		// (a categorical variable of one state ran the default to its
		// limit).
		return true
	}
	sup, ok := m.(model.Support)
	if !ok || q.v < 0 {
		return false
	}
	if q.state >= 0 {
		return !sup.Possible(q.v, q.state)
	}
	return !sup.Possible(q.v, 0) || !sup.Possible(q.v, 1)
}
