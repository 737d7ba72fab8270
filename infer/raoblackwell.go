package infer

import (
	"context"
	"fmt"
	"math"
	"slices"

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

// Limits of rareWidening's work: up to rareRows draws per variable with a
// rare state, and at most rareWork conditionals in all; beyond that the
// caller falls back to the frequencies' intervals.
const (
	rareRows = 32
	rareWork = 2e8
)

// rareWidening measures the extra Monte Carlo variance of each variable's
// Rao–Blackwellised marginal that comes from the rare states of other
// variables. The average of i's conditional weighs the draws in which
// variable j is in a rare state (seen fewer than RareVisits times) by
// their frequency p̂_j, whose own error has variance p_j(1 − p_j)/neff;
// in those draws i's conditional differs by up to Δ_ij (total variation),
// so the average carries an error of variance up to Δ_ij²·p_j(1 − p_j)/neff
// that its draws cannot show while they (nearly) never hold the rare
// state. p_j is taken at p̄_j, the Clopper–Pearson upper end of the
// summed frequency of j's rare states at the effective sample size neff,
// and the variances of different j add: v_i = Σ_j Δ_ij²·p̄_j(1 − p̄_j)/neff.
// Δ_ij is the largest change measured by setting z_j to each of its rare
// states in up to rareRows draws spread over the run (draws already in a
// rare state are skipped, a change to a state of probability zero is not
// made): how much i's conditional depends on z_j directly; an effect
// through other variables that move with z_j is not in it. It returns nil
// when no state is rare and ok = false when the work would exceed
// rareWork. Variables are processed in fixed blocks and summed in their
// order, so the result does not depend on the number of cores.
func rareWidening(ctx context.Context, m model.Model, s *sampler.Samples, neff float64) (w []float64, ok bool, err error) {
	d := m.Dim()
	type rareVar struct {
		j      int
		states []int
		pbar   float64
	}
	var rare []rareVar
	counts := make([]int, 0, 8)
	var work float64
	for j := range d {
		k := len(m.States(j))
		counts = counts[:0]
		for range k {
			counts = append(counts, 0)
		}
		for r := range s.N {
			counts[s.Z[r*s.D+j]]++
		}
		var states []int
		seen := 0
		for st, c := range counts {
			if c < RareVisits && c < s.N {
				states = append(states, st)
				seen += c
			}
		}
		if len(states) == 0 || len(states) == k {
			continue
		}
		_, hi := clopperPearson(float64(seen)/float64(s.N)*neff, neff, 0.90)
		rare = append(rare, rareVar{j, states, hi})
		work += float64(min(rareRows, s.N)) * float64(1+len(states)) * float64(d)
	}
	if len(rare) == 0 {
		return nil, true, nil
	}
	if work > rareWork {
		return nil, false, nil
	}
	off := model.Offsets(m)
	w = make([]float64, d)
	const block = 8
	delta := make([]float64, block*d)
	for b0 := 0; b0 < len(rare); b0 += block {
		b1 := min(b0+block, len(rare))
		clear(delta)
		parallel.For(b1-b0, 1, parallel.Func(func(lo, hi int) {
			base := make([]float64, off[d])
			var buf []float64
			tr := model.NewTracker(m, s.Row(0))
			for q := lo; q < hi; q++ {
				rv := rare[b0+q]
				dq := delta[q*d : (q+1)*d]
				rows := min(rareRows, s.N)
				for k := range rows {
					if ctx.Err() != nil {
						return
					}
					row := s.Row(k * s.N / rows)
					if slices.Contains(rv.states, row[rv.j]) {
						continue
					}
					tr.Reset(row)
					for i := range d {
						buf = tr.LogConditional(buf, i)
						normalizeLog(buf)
						copy(base[off[i]:off[i+1]], buf)
					}
					orig := row[rv.j]
					for _, st := range rv.states {
						if math.IsInf(tr.DeltaLogProb(rv.j, st), -1) {
							continue
						}
						tr.Set(rv.j, st)
						for i := range d {
							if i == rv.j {
								continue
							}
							buf = tr.LogConditional(buf, i)
							normalizeLog(buf)
							var tv float64
							for x, p := range buf {
								tv += math.Abs(p - base[off[i]+x])
							}
							dq[i] = max(dq[i], tv/2)
						}
						tr.Set(rv.j, orig)
					}
				}
			}
		}))
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		for q := range b1 - b0 {
			pbar := rare[b0+q].pbar
			for i, v := range delta[q*d : (q+1)*d] {
				w[i] += v * v * pbar * (1 - pbar) / neff
			}
		}
	}
	return w, true, nil
}
