// The two passes of variable elimination (see VE): bucket elimination upward,
// the Hugin schedule downward.

package exact

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// logTable is a factor's or a message's log-values over a scope.
type logTable struct {
	scope []int
	t     []float64
}

// veBuild is the state of the two passes of NewVE.
type veBuild struct {
	card     []int
	p        vePlan
	pos      []int        // step at which each variable is eliminated
	buckets  [][]logTable // factors and messages waiting at each step
	logZ     float64      // constants and the roots' messages
	axis     []int        // axis of each variable in the current clique, −1 if none
	idx      []int32
	cc, str  []int
	steps    []veStep
	psi      [][]float64 // ψ_k, then β_k
	msg      [][]float64 // m_k
	parent   []int
	children [][]int
	noCDF    bool // marginals only: leave the conditional tables out
}

func newVEBuild(card []int, factors []Factor, p vePlan) *veBuild {
	n := len(card)
	b := &veBuild{card: card, p: p, pos: make([]int, n), buckets: make([][]logTable, n), axis: make([]int, n),
		steps: make([]veStep, n), psi: make([][]float64, n), msg: make([][]float64, n), parent: make([]int, n), children: make([][]int, n)}
	for k, v := range p.order {
		b.pos[v] = k
	}
	for i := range b.axis {
		b.axis[i] = -1
	}
	for _, f := range factors {
		if len(f.Scope) == 0 {
			b.logZ += f.LogTable[0]
			continue
		}
		k := b.first(f.Scope)
		b.buckets[k] = append(b.buckets[k], logTable{f.Scope, f.LogTable})
	}
	return b
}

// first returns the first step at which a variable of scope is eliminated.
func (b *veBuild) first(scope []int) int {
	f := len(b.card)
	for _, u := range scope {
		f = min(f, b.pos[u])
	}
	return f
}

// cliqueCard returns the cardinalities of C_k's axes: S_k, then x_k.
func (b *veBuild) cliqueCard(k int) []int {
	b.cc = b.cc[:0]
	for _, u := range b.p.seps[k] {
		b.cc = append(b.cc, b.card[u])
	}
	b.cc = append(b.cc, b.card[b.p.order[k]])
	return b.cc
}

// setAxes maps C_k's variables to their axes (on) or back to −1.
func (b *veBuild) setAxes(k int, on bool) {
	for a, u := range b.p.seps[k] {
		b.axis[u] = a
		if !on {
			b.axis[u] = -1
		}
	}
	if on {
		b.axis[b.p.order[k]] = len(b.p.seps[k])
	} else {
		b.axis[b.p.order[k]] = -1
	}
}

// pollMask: the passes look at the context every pollMask + 1 entries of
// a table (2^16: about a millisecond of work), so that Ctrl-C stops a
// clique of 2^25 entries within milliseconds, not after its pass (up to
// 0.9 s on Promedus_12, measured).
const pollMask = 1<<16 - 1

// upward runs bucket elimination: ψ_k and the message m_k of every step.
func (b *veBuild) upward(ctx context.Context) error {
	for k, v := range b.p.order {
		if err := ctx.Err(); err != nil {
			return err
		}
		sep := b.p.seps[k]
		K := b.card[v]
		st := &b.steps[k]
		st.v, st.k, st.sep = v, K, sep
		st.stride = make([]int, len(sep))
		rows := 1
		for j := len(sep) - 1; j >= 0; j-- {
			st.stride[j] = rows
			rows *= b.card[sep[j]]
		}
		cc := b.cliqueCard(k)
		b.setAxes(k, true)
		t := make([]float64, rows*K)
		for _, f := range b.buckets[k] {
			// A large clique takes a while per factor (2^25 entries:
			// tens of milliseconds each): Ctrl-C is looked at between.
			if err := ctx.Err(); err != nil {
				return err
			}
			b.str = append(b.str[:0], make([]int, len(cc))...)
			s := 1
			for a := len(f.scope) - 1; a >= 0; a-- {
				ax := b.axis[f.scope[a]]
				if ax < 0 {
					panic(fmt.Sprintf("exact: internal error: variable %d of a factor in bucket %d is outside its clique", f.scope[a], v))
				}
				b.str[ax] = s
				s *= b.card[f.scope[a]]
			}
			b.idx = gather(ctx, b.idx, cc, b.str)
			for i, j := range b.idx {
				if i&pollMask == pollMask && ctx.Err() != nil {
					return ctx.Err()
				}
				t[i] += f.t[j]
			}
		}
		b.setAxes(k, false)
		b.buckets[k] = nil
		m := make([]float64, rows)
		for r := range m {
			if r&pollMask == pollMask && ctx.Err() != nil {
				return ctx.Err()
			}
			m[r] = logSumExp(t[r*K : (r+1)*K])
		}
		b.psi[k], b.msg[k] = t, m
		if len(sep) == 0 {
			b.parent[k] = -1
			b.logZ += m[0]
			continue
		}
		pk := b.first(sep)
		b.parent[k] = pk
		b.children[pk] = append(b.children[pk], k)
		b.buckets[pk] = append(b.buckets[pk], logTable{sep, m})
	}
	if math.IsInf(b.logZ, -1) {
		return fmt.Errorf("exact: the model gives probability zero to every state")
	}
	return nil
}

// downward runs the Hugin schedule from the roots: each β_k, the marginals
// and means, the messages to the children, and the conditional tables.
func (b *veBuild) downward(ctx context.Context, values [][]float64) (*Result, error) {
	n := len(b.card)
	res := &Result{LogZ: b.logZ, Marginals: make([][]float64, n), Means: make([]float64, n)}
	down := make([][]float64, n)
	var acc []float64
	for k := n - 1; k >= 0; k-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st := &b.steps[k]
		K := st.k
		beta := b.psi[k]
		if b.parent[k] < 0 {
			c := -b.msg[k][0]
			for i := range beta {
				beta[i] += c
			}
		} else {
			d := down[k]
			for i := range beta {
				beta[i] += d[i/K]
			}
			down[k] = nil
		}
		acc = b.marginal(ctx, res, st, beta, values, acc)
		if len(b.children[k]) > 0 {
			acc = b.sendDown(ctx, k, beta, down, acc)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !b.noCDF {
			conditionalCDF(ctx, beta, K)
			st.cdf = beta
		}
		b.psi[k] = nil
	}
	return res, nil
}

// marginal sets x_k's marginal (β_k summed over S_k) and mean in res.
// When ctx is canceled it stops early (the caller looks at ctx).
func (b *veBuild) marginal(ctx context.Context, res *Result, st *veStep, beta []float64, values [][]float64, acc []float64) []float64 {
	K := st.k
	lm := make([]float64, K)
	for s := range lm {
		lm[s] = math.Inf(-1)
	}
	for i, x := range beta {
		if i&pollMask == pollMask && ctx.Err() != nil {
			return acc
		}
		lm[i%K] = max(lm[i%K], x)
	}
	acc = append(acc[:0], make([]float64, K)...)
	for i, x := range beta {
		if i&pollMask == pollMask && ctx.Err() != nil {
			return acc
		}
		if mx := lm[i%K]; !math.IsInf(mx, -1) {
			acc[i%K] += math.Exp(x - mx)
		}
	}
	for s := range lm {
		if !math.IsInf(lm[s], -1) {
			lm[s] += math.Log(acc[s])
		}
	}
	tot := logSumExp(lm)
	mi := make([]float64, K)
	for s := range mi {
		mi[s] = math.Exp(lm[s] - tot)
		vs := float64(s)
		if values != nil && values[st.v] != nil {
			vs = values[st.v][s]
		}
		res.Means[st.v] += mi[s] * vs
	}
	res.Marginals[st.v] = mi
	return acc
}

// sendDown computes δ_c for each child c of step k. When ctx is canceled
// it stops early (the caller looks at ctx).
func (b *veBuild) sendDown(ctx context.Context, k int, beta []float64, down [][]float64, acc []float64) []float64 {
	cc := b.cliqueCard(k)
	b.setAxes(k, true)
	for _, c := range b.children[k] {
		b.str = append(b.str[:0], make([]int, len(cc))...)
		for j, u := range b.steps[c].sep {
			b.str[b.axis[u]] = b.steps[c].stride[j]
		}
		b.idx = gather(ctx, b.idx, cc, b.str)
		dc := make([]float64, len(b.msg[c]))
		acc = logMarginalize(ctx, dc, beta, b.idx, acc)
		if ctx.Err() != nil {
			break
		}
		for j, mc := range b.msg[c] {
			if math.IsInf(dc[j], -1) || math.IsInf(mc, -1) {
				dc[j] = math.Inf(-1)
			} else {
				dc[j] -= mc
			}
		}
		down[c] = dc
		b.msg[c] = nil
	}
	b.setAxes(k, false)
	return acc
}

// conditionalCDF turns β (rows of K log-values) into the cumulative
// weights of P(x_k | S_k) row by row; an impossible row becomes zeros.
// When ctx is canceled it stops early (the caller looks at ctx).
func conditionalCDF(ctx context.Context, beta []float64, K int) {
	for r := 0; r < len(beta); r += K {
		if r&pollMask < K && r > pollMask && ctx.Err() != nil {
			return
		}
		row := beta[r : r+K]
		mx := slices.Max(row)
		if math.IsInf(mx, -1) {
			clear(row)
			continue
		}
		var c float64
		for s, x := range row {
			c += math.Exp(x - mx)
			row[s] = c
		}
	}
}
