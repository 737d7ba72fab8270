package infer

import (
	"context"
	"fmt"
	"math"

	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
)

// Estimates says how a run estimates its variables' marginals and means.
type Estimates int

const (
	// RaoBlackwell (the default) averages, over the draws, each variable's
	// conditional distribution given the rest of the draw,
	// p(z_i = s | z_−i), instead of counting the draws with z_i = s.
	// Both are unbiased when the draws come from p (E[p(z_i = s | z_−i)]
	// = p(z_i = s)); the conditional average has no more variance for
	// independent draws (the Rao–Blackwell theorem) and, for Gibbs-type
	// chains, usually much less: a variable nearly independent of the
	// rest is estimated almost exactly, and a rare state gets a positive
	// estimate from the draws whose neighbours make it likely without
	// having to be visited. Its MCSE, ESS and R̂ are those of the series
	// of conditional probabilities. It applies to draws meant to come
	// from p (kept draws of chains, exact draws, the final states of an
	// MCMC method) on models that give their conditionals
	// (model.Conditional or model.Incremental); otherwise the run counts.
	RaoBlackwell Estimates = iota
	// Frequencies counts the draws in each state (the first rounds'
	// estimates; the experiments' published journals were made with it).
	Frequencies
)

// String returns "rao-blackwell" or "frequencies".
func (e Estimates) String() string {
	if e == Frequencies {
		return "frequencies"
	}
	return "rao-blackwell"
}

// ParseEstimates reads "rao-blackwell" or "frequencies".
func ParseEstimates(s string) (Estimates, error) {
	switch s {
	case RaoBlackwell.String():
		return RaoBlackwell, nil
	case Frequencies.String():
		return Frequencies, nil
	}
	return 0, fmt.Errorf("estimates %q; want rao-blackwell or frequencies", s)
}

// condTable holds, for every sample row, each variable's conditional
// distribution given the rest of the row: one column per quantity of the
// variable (Quantities): P(z_i = state 1 | z_−i) for a variable with two
// states, P(z_i = s | z_−i) for each state s of the others (one column of
// ones for a variable with one state). Column c is
// data[c·rows : (c+1)·rows].
type condTable struct {
	rows int
	col  []int // col[i]: the first column of variable i
	data []float64
}

// column returns column c: P(z_i = 1 | z_−i) for c = col[i] of a
// variable with two states, P(z_i = s | z_−i) for c = col[i] + s
// otherwise.
func (t *condTable) column(c int) []float64 { return t.data[c*t.rows : (c+1)*t.rows] }

// condTableMemory is the bytes a condTable of rows samples holds.
func condTableMemory(m model.Model, rows float64) float64 {
	return 8*rows*float64(Quantities(m)) + 8*float64(m.Dim())
}

// hasConditionals reports whether m gives its conditionals without
// evaluating the whole model once per state.
func hasConditionals(m model.Model) bool {
	if _, ok := m.(model.Incremental); ok {
		return true
	}
	_, ok := m.(model.Conditional)
	return ok
}

// raoBlackwellApplies reports whether the run's samples are meant to be
// draws from p (kept draws, exact draws, the final states of an MCMC
// method; not an approximate method's particles) and m gives its
// conditionals.
func (o *Output) raoBlackwellApplies(m model.Model) bool {
	if !hasConditionals(m) || len(o.Pipeline.Stages) == 0 {
		return false
	}
	last, err := sampler.Lookup(o.Pipeline.Stages[len(o.Pipeline.Stages)-1].Method)
	return err == nil && !last.Approximate && o.approximateStage() == ""
}

// condRowsPerPoll is the number of rows between two looks at the context.
const condRowsPerPoll = 64

// conditionals computes the condTable of the samples. Rows are independent
// (a tracker is moved to each row), so the table does not depend on how
// the rows are split among the cores.
func conditionals(ctx context.Context, m model.Model, s *sampler.Samples) (*condTable, error) {
	d := m.Dim()
	t := &condTable{rows: s.N, col: make([]int, d)}
	cols := 0
	for i := range d {
		t.col[i] = cols
		if k := len(m.States(i)); k > 2 {
			cols += k
		} else {
			cols++
		}
	}
	t.data = make([]float64, cols*s.N)
	parallel.For(s.N, 16, parallel.Func(func(lo, hi int) {
		tr := model.NewTracker(m, s.Row(lo))
		var buf []float64
		for r := lo; r < hi; r++ {
			if (r-lo)%condRowsPerPoll == 0 && ctx.Err() != nil {
				return
			}
			tr.Reset(s.Row(r))
			for i := range d {
				buf = tr.LogConditional(buf, i)
				normalizeLog(buf)
				c := t.col[i]
				if len(buf) == 2 {
					t.data[c*s.N+r] = buf[1]
					continue
				}
				for k, p := range buf {
					t.data[(c+k)*s.N+r] = p
				}
			}
		}
	}))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return t, t.check()
}

// normalizeLog turns log-weights into probabilities in place (log-sum-exp;
// −Inf weights become 0). A row of the draws has positive probability, so
// its own state's weight is finite; all −Inf (a draw in a state of
// probability zero) leaves zeros.
func normalizeLog(w []float64) {
	mx := math.Inf(-1)
	for _, v := range w {
		mx = max(mx, v)
	}
	if math.IsInf(mx, -1) || math.IsNaN(mx) {
		clear(w)
		return
	}
	var sum float64
	for k, v := range w {
		e := math.Exp(v - mx)
		w[k] = e
		sum += e
	}
	for k := range w {
		w[k] /= sum
	}
}

// marginals returns the Rao–Blackwellised marginals: the mean of each
// column, P(state 0) = 1 − P(state 1) for two-state variables.
func (t *condTable) marginals(m model.Model) [][]float64 {
	out := make([][]float64, m.Dim())
	for i := range out {
		k := len(m.States(i))
		out[i] = make([]float64, k)
		if k == 2 {
			p := columnMean(t.column(t.col[i]))
			out[i][0], out[i][1] = 1-p, p
			continue
		}
		for s := range k {
			out[i][s] = columnMean(t.column(t.col[i] + s))
		}
	}
	return out
}

func columnMean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// check reports a table that holds a value outside [0, 1] (a model whose
// conditionals are wrong), which no estimate may use silently.
func (t *condTable) check() error {
	for k, v := range t.data {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("Rao–Blackwell estimate: conditional probability %v at row %d of column %d", v, k%t.rows, k/t.rows)
		}
	}
	return nil
}
