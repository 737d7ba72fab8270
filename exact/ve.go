package exact

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dstein/dstein/internal/memlimit"
)

// DefaultMaxWidth is the elimination width NewVE allows when given
// maxWidth ≤ 0: intermediate factors over at most 25 variables, 2^25 entries
// for binary variables, as many as MaxTableEntries allows (the Promedus_12
// network of the UAI 2014 competition, with 3 evidence variables, needs
// width 24). The limit that protects memory is MaxTableEntries (with
// MaxTotalEntries), which NewVE checks whatever maxWidth.
const DefaultMaxWidth = 25

// MaxTableEntries is the most entries (2^25, 256 MiB of float64) that one
// intermediate factor of NewVE may have: the product of the cardinalities of
// an eliminated variable and of its neighbours when it is eliminated.
const MaxTableEntries = 1 << 25

// MaxTotalEntries is the most entries (2^27, 1 GiB of float64) that the
// intermediate factors of NewVE may have together; VE keeps them all, as the
// conditional tables it samples from.
const MaxTotalEntries = 1 << 27

// Factor is one factor of a discrete factor graph: its scope (variable
// indices) and its table of log-values in row-major order over Scope, the
// last scope variable changing fastest (the UAI layout); −Inf entries are
// zeros. A factor with an empty scope is a constant (one log-value).
type Factor struct {
	Scope    []int
	LogTable []float64
}

// VE is the exact ground truth of a discrete factor graph
// p(z) ∝ Π_f exp(LogTable_f[z_{Scope_f}]) by variable elimination in log
// space: log Z, every marginal and mean, and independent exact samples.
//
// # Order
//
// Variables are eliminated in greedy min-fill order: at each step the
// variable whose elimination adds the fewest edges between its neighbours in
// the interaction graph, ties broken by the smaller intermediate table (the
// product of the cardinalities of the variable and its neighbours: min-degree
// for binary variables), then by the lower index. Eliminating x_k creates
// the clique C_k = {x_k} ∪ S_k, S_k its neighbours then; the width is the
// largest |C_k|, treewidth + 1 for an optimal order. Greedy min-fill is
// near optimal on sparse and narrow graphs (6 on a 5×20 grid, the optimum)
// but cuts square grids diagonally: width 7 at 6×6, 14 at 10×10 (optimum
// 11), 20 at 14×14 (optimum 15), where IsingGrid's transfer is cheaper.
//
// # Algorithm
//
// Upward pass (bucket elimination): each factor goes to the bucket of its
// first-eliminated variable; step k adds the log-tables of bucket k into
// ψ_k over C_k (stored with x_k fastest), and sends the message
// m_k(S_k) = log Σ_{x_k} exp ψ_k to the bucket of the first-eliminated
// variable of S_k, its parent in the elimination tree. Messages with empty
// S_k (one per connected component) add up to log Z. Downward pass (the
// Hugin two-pass schedule on that junction tree, from the roots): the
// belief β_k = ψ_k + δ_k is log P(C_k), with δ_root = −m_root and, for each
// child c of k, δ_c = log Σ_{C_k∖S_c} exp β_k − m_c (division by the
// child's message; where m_c = −Inf the child's belief is −Inf anyway, and
// δ_c is set to −Inf rather than NaN). The marginal of x_k is β_k summed over
// S_k. Every sum is a log-sum-exp with its own maximum subtracted, so
// nothing underflows before the logs are taken. Finally β_k becomes the
// cumulative table of P(x_k | S_k), from which Sample draws backwards along
// the elimination order: the last-eliminated variable first, then each
// variable given its S_k, all sampled already (forward filtering, backward
// sampling).
//
// Cost: the order takes O(n²) comparisons to pick the variables plus, at
// each step, rescoring the variables within distance two of the eliminated
// one (O(deg²) lookups each); the passes O(Σ_k |C_k|·(f_k + c_k + 3))
// additions and about Σ_k |C_k|·(c_k + 3) exponentials (f_k factors in
// bucket k, c_k children): for a 10×10 binary grid 6.6·10⁴ clique entries
// and about 13 ms. Memory: 8·Σ_k |C_k| bytes for the stored tables. A
// sample costs Σ_k (|S_k| + K_k) operations and one uniform per variable
// with more than one state (2.6 µs for the 10×10 grid). Nothing depends on GOMAXPROCS. It is immutable after
// construction and safe for concurrent use, given one *rand.Rand per
// goroutine.
type VE struct {
	card  []int
	order []int
	width int
	steps []veStep
	res   *Result
}

// veStep is the elimination of one variable: what Sample needs to draw it
// given the variables eliminated after it.
type veStep struct {
	v      int   // the variable eliminated
	k      int   // its number of states
	sep    []int // S_k, increasing
	stride []int // row stride of each sep variable (row-major, last fastest)
	// cdf holds, for each configuration of sep (row), the cumulative
	// weights of x_k's states given it, x_k fastest; an impossible row is
	// all zeros.
	cdf []float64
}

var _ Truth = (*VE)(nil)

// NewVE returns exact answers for the factor graph with card[i] states for
// variable i and the given factors, by variable elimination (see VE).
// values[i] are the state values of variable i for the Means (values or
// values[i] nil: 0…card[i]−1). It refuses, with an error saying which, an
// elimination width over maxWidth (DefaultMaxWidth when maxWidth ≤ 0), an
// intermediate factor over MaxTableEntries entries, intermediate factors
// over MaxTotalEntries entries together, malformed factors (a scope
// variable out of range or repeated, a table of the wrong length, NaN or
// +Inf log-values) and a model whose every state has probability zero. It
// does not modify or keep its arguments.
func NewVE(card []int, factors []Factor, values [][]float64, maxWidth int) (*VE, error) {
	return NewVEContext(context.Background(), card, factors, values, maxWidth, memlimit.Budget{})
}

// NewVEContext is NewVE that also refuses tables whose memory exceeds the
// budget (before allocating them) and stops with ctx's error when ctx is
// canceled.
func NewVEContext(ctx context.Context, card []int, factors []Factor, values [][]float64, maxWidth int, budget memlimit.Budget) (*VE, error) {
	if maxWidth <= 0 {
		maxWidth = DefaultMaxWidth
	}
	if err := checkFactors(card, factors, values); err != nil {
		return nil, err
	}
	p := planElimination(card, factors)
	if p.width > maxWidth {
		return nil, fmt.Errorf("exact: elimination width %d exceeds the limit %d (the largest intermediate factor of the min-fill order has %d variables)", p.width, maxWidth, p.width)
	}
	if p.maxEntries > MaxTableEntries {
		return nil, fmt.Errorf("exact: the largest intermediate factor of the min-fill elimination order would have %.4g entries, over the limit of %d (2^25)", p.maxEntries, MaxTableEntries)
	}
	if p.totalEntries > MaxTotalEntries {
		return nil, fmt.Errorf("exact: the intermediate factors of the min-fill elimination order would have %.4g entries in all, over the limit of %d (2^27)", p.totalEntries, MaxTotalEntries)
	}
	// The tables ψ_k and, at the peak of the upward pass, their messages.
	if err := budget.Check(fmt.Sprintf("variable elimination (width %d, %.3g table entries)", p.width, p.totalEntries), memlimit.Base+8*2*p.totalEntries); err != nil {
		return nil, err
	}
	b := newVEBuild(card, factors, p)
	if err := b.upward(ctx); err != nil {
		return nil, err
	}
	res, err := b.downward(ctx, values)
	if err != nil {
		return nil, err
	}
	return &VE{card: slices.Clone(card), order: p.order, width: p.width, steps: b.steps, res: res}, nil
}

// checkFactors reports malformed variables, values or factors.
func checkFactors(card []int, factors []Factor, values [][]float64) error {
	n := len(card)
	if n < 1 {
		return fmt.Errorf("exact: the model has no variables")
	}
	for i, k := range card {
		if k < 1 {
			return fmt.Errorf("exact: variable %d has %d states; want at least 1", i, k)
		}
	}
	if values != nil && len(values) != n {
		return fmt.Errorf("exact: %d variables but state values for %d", n, len(values))
	}
	for i, vs := range values {
		if vs != nil && len(vs) != card[i] {
			return fmt.Errorf("exact: variable %d has %d states but %d state values", i, card[i], len(vs))
		}
		for s, x := range vs {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("exact: state %d of variable %d has value %v; want a finite number", s, i, x)
			}
		}
	}
	seen := make([]int, n) // fi+1 where factor fi names the variable
	for fi, f := range factors {
		size := 1.0
		for _, u := range f.Scope {
			if u < 0 || u >= n {
				return fmt.Errorf("exact: factor %d names variable %d, outside [0, %d)", fi, u, n)
			}
			if seen[u] == fi+1 {
				return fmt.Errorf("exact: factor %d names variable %d twice in its scope %v", fi, u, f.Scope)
			}
			seen[u] = fi + 1
			size *= float64(card[u])
		}
		if size != float64(len(f.LogTable)) {
			return fmt.Errorf("exact: factor %d over %v has %d log-values; its scope needs %.0f", fi, f.Scope, len(f.LogTable), size)
		}
		for e, x := range f.LogTable {
			if math.IsNaN(x) || math.IsInf(x, 1) {
				return fmt.Errorf("exact: entry %d of factor %d is %v; want a finite log-value or −Inf (a zero)", e, fi, x)
			}
		}
	}
	return nil
}

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

// upward runs bucket elimination: ψ_k and the message m_k of every step.
func (b *veBuild) upward(ctx context.Context) error {
	for k, v := range b.p.order {
		if k&15 == 0 && ctx.Err() != nil {
			return ctx.Err()
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
			b.idx = gather(b.idx, cc, b.str)
			for i, j := range b.idx {
				t[i] += f.t[j]
			}
		}
		b.setAxes(k, false)
		b.buckets[k] = nil
		m := make([]float64, rows)
		for r := range m {
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
		if k&15 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
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
		acc = b.marginal(res, st, beta, values, acc)
		if len(b.children[k]) > 0 {
			acc = b.sendDown(k, beta, down, acc)
		}
		conditionalCDF(beta, K)
		st.cdf = beta
		b.psi[k] = nil
	}
	return res, nil
}

// marginal sets x_k's marginal (β_k summed over S_k) and mean in res.
func (b *veBuild) marginal(res *Result, st *veStep, beta []float64, values [][]float64, acc []float64) []float64 {
	K := st.k
	lm := make([]float64, K)
	for s := range lm {
		lm[s] = math.Inf(-1)
	}
	for i, x := range beta {
		lm[i%K] = max(lm[i%K], x)
	}
	acc = append(acc[:0], make([]float64, K)...)
	for i, x := range beta {
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

// sendDown computes δ_c for each child c of step k.
func (b *veBuild) sendDown(k int, beta []float64, down [][]float64, acc []float64) []float64 {
	cc := b.cliqueCard(k)
	b.setAxes(k, true)
	for _, c := range b.children[k] {
		b.str = append(b.str[:0], make([]int, len(cc))...)
		for j, u := range b.steps[c].sep {
			b.str[b.axis[u]] = b.steps[c].stride[j]
		}
		b.idx = gather(b.idx, cc, b.str)
		dc := make([]float64, len(b.msg[c]))
		acc = logMarginalize(dc, beta, b.idx, acc)
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
func conditionalCDF(beta []float64, K int) {
	for r := 0; r < len(beta); r += K {
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

// Result returns log Z, the marginals and the means. The caller must not
// modify it.
func (ve *VE) Result() *Result { return ve.res }

// Width returns the elimination width: the number of variables of the
// largest intermediate factor.
func (ve *VE) Width() int { return ve.width }

// Order returns the elimination order. The caller must not modify it.
func (ve *VE) Order() []int { return ve.order }

// Sample fills dst (length a multiple of the number of variables) with
// independent exact samples, row-major state indices, drawing one uniform
// from r per variable with more than one state and per sample, and nothing
// else.
func (ve *VE) Sample(dst []int, r *rand.Rand) {
	d := len(ve.card)
	if len(dst)%d != 0 {
		panic(fmt.Sprintf("exact: sample buffer of length %d for dimension %d", len(dst), d))
	}
	for o := 0; o < len(dst); o += d {
		z := dst[o : o+d]
		for k := len(ve.steps) - 1; k >= 0; k-- {
			st := &ve.steps[k]
			if st.k == 1 {
				z[st.v] = 0
				continue
			}
			row := 0
			for j, u := range st.sep {
				row += z[u] * st.stride[j]
			}
			c := st.cdf[row*st.k : (row+1)*st.k]
			u := r.Float64() * c[st.k-1]
			// The first state whose cumulative weight exceeds u; it has
			// positive weight. Should u round up to the total, fall back
			// to the last state of positive weight.
			s := 0
			for s < st.k-1 && c[s] <= u {
				s++
			}
			for s > 0 && c[s] == c[s-1] {
				s--
			}
			z[st.v] = s
		}
	}
}

// Width returns the width of the elimination order NewVE uses for these
// factors (the number of variables of its largest intermediate factor) and
// the order itself, without building anything; it is for reporting and for
// checking a model before NewVE. It panics on a scope variable outside
// [0, len(card)).
func Width(card []int, factors []Factor) (width int, order []int) {
	p := planElimination(card, factors)
	return p.width, p.order
}

// vePlan is a min-fill elimination order with its cliques.
type vePlan struct {
	order        []int
	seps         [][]int // seps[k]: the neighbours of order[k] when eliminated, increasing
	width        int     // max over k of 1 + len(seps[k])
	maxEntries   float64 // largest clique table
	totalEntries float64 // all clique tables together
}

// planElimination computes the greedy min-fill order (see VE) on the
// interaction graph of the factors. Fill-in and table size of a variable
// change only when a variable within distance two of it is eliminated, so
// only those are rescored after each step.
func planElimination(card []int, factors []Factor) vePlan {
	n := len(card)
	adj := make([]map[int]struct{}, n)
	for i := range adj {
		adj[i] = map[int]struct{}{}
	}
	for _, f := range factors {
		for a, u := range f.Scope {
			if u < 0 || u >= n {
				panic(fmt.Sprintf("exact: factor scope %v names a variable outside [0, %d)", f.Scope, n))
			}
			for _, w := range f.Scope[a+1:] {
				if w != u && w >= 0 && w < n {
					adj[u][w] = struct{}{}
					adj[w][u] = struct{}{}
				}
			}
		}
	}
	fill := make([]int, n)
	size := make([]float64, n)
	var nb []int
	neighbours := func(v int) []int {
		nb = nb[:0]
		for u := range adj[v] {
			nb = append(nb, u)
		}
		slices.Sort(nb)
		return nb
	}
	score := func(v int) {
		ns := neighbours(v)
		sz := float64(card[v])
		f := 0
		for a, u := range ns {
			sz *= float64(card[u])
			for _, w := range ns[a+1:] {
				if _, ok := adj[u][w]; !ok {
					f++
				}
			}
		}
		fill[v], size[v] = f, sz
	}
	for v := range n {
		score(v)
	}

	p := vePlan{order: make([]int, 0, n), seps: make([][]int, 0, n)}
	done := make([]bool, n)
	mark := make([]int, n) // step+1 when queued for rescoring
	var touched []int
	for step := range n {
		x := -1
		for v := range n {
			if done[v] {
				continue
			}
			if x < 0 || fill[v] < fill[x] || fill[v] == fill[x] && size[v] < size[x] {
				x = v
			}
		}
		sep := slices.Clone(neighbours(x))
		p.order = append(p.order, x)
		p.seps = append(p.seps, sep)
		p.width = max(p.width, 1+len(sep))
		p.maxEntries = max(p.maxEntries, size[x])
		p.totalEntries += size[x]

		done[x] = true
		for a, u := range sep {
			delete(adj[u], x)
			for _, w := range sep[a+1:] {
				adj[u][w] = struct{}{}
				adj[w][u] = struct{}{}
			}
		}
		adj[x] = nil
		touched = touched[:0]
		for _, u := range sep {
			if mark[u] != step+1 {
				mark[u] = step + 1
				touched = append(touched, u)
			}
			for w := range adj[u] {
				if mark[w] != step+1 {
					mark[w] = step + 1
					touched = append(touched, w)
				}
			}
		}
		for _, u := range touched {
			score(u)
		}
	}
	return p
}

// gather sets idx[i], for each entry i of a row-major table with axis sizes
// card (last axis fastest), to Σ_a z_a·strides[a] for its configuration z:
// its index in a table with those strides (0 on the axes it lacks). It
// reuses idx's storage when it can.
func gather(idx []int32, card, strides []int) []int32 {
	total := 1
	for _, k := range card {
		total *= k
	}
	idx = slices.Grow(idx[:0], total)[:total]
	z := make([]int, len(card))
	j := 0
	for i := range idx {
		idx[i] = int32(j)
		for a := len(card) - 1; a >= 0; a-- {
			z[a]++
			j += strides[a]
			if z[a] < card[a] {
				break
			}
			j -= strides[a] * card[a]
			z[a] = 0
		}
	}
	return idx
}

// logMarginalize sets dst[j] = log Σ_{i: idx[i] = j} exp(src[i]), with each
// sum's largest term factored out (−Inf for an empty or all-zero sum). acc
// is scratch space, returned for reuse.
func logMarginalize(dst, src []float64, idx []int32, acc []float64) []float64 {
	for j := range dst {
		dst[j] = math.Inf(-1)
	}
	for i, x := range src {
		dst[idx[i]] = max(dst[idx[i]], x)
	}
	acc = append(acc[:0], make([]float64, len(dst))...)
	for i, x := range src {
		if mx := dst[idx[i]]; !math.IsInf(mx, -1) {
			acc[idx[i]] += math.Exp(x - mx)
		}
	}
	for j := range dst {
		if !math.IsInf(dst[j], -1) {
			dst[j] += math.Log(acc[j])
		}
	}
	return acc
}

// logSumExp returns log Σ exp(x), −Inf when every x is −Inf (or x is empty).
func logSumExp(x []float64) float64 {
	mx := math.Inf(-1)
	for _, v := range x {
		mx = max(mx, v)
	}
	if math.IsInf(mx, -1) {
		return mx
	}
	var s float64
	for _, v := range x {
		s += math.Exp(v - mx)
	}
	return mx + math.Log(s)
}
