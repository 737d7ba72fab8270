package exact

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dstein/dstein/memlimit"
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
// Cost: the order takes O(n log n) comparisons to pick the variables (a
// heap) plus, at each step, rescoring the variables within distance two of
// the eliminated one (O(deg²) binary searches in sorted neighbour lists
// each): about 0.3 s for a chain of 300,000 variables; the passes O(Σ_k |C_k|·(f_k + c_k + 3))
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
	need  float64 // the memory estimate (Memory)
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

// NewVEContext is NewVE that also refuses work whose memory exceeds the
// budget (before allocating it: its structures before the order is
// planned, its tables after) and stops with ctx's error when ctx is
// canceled.
func NewVEContext(ctx context.Context, card []int, factors []Factor, values [][]float64, maxWidth int, budget memlimit.Budget) (*VE, error) {
	return newVE(ctx, card, factors, values, maxWidth, budget, 0, false)
}

// newVE is NewVEContext while the caller holds held bytes besides
// memlimit.Base, which the budget checks add to VE's own.
//
// With stopWide the plan stops at its first clique over maxWidth
// (planEliminationWithin) and the refusal gives that lower bound of the
// width: for models that may be far too wide, whose whole min-fill order
// would take long to plan only to be refused.
func newVE(ctx context.Context, card []int, factors []Factor, values [][]float64, maxWidth int, budget memlimit.Budget, held float64, stopWide bool) (*VE, error) {
	if maxWidth <= 0 {
		maxWidth = DefaultMaxWidth
	}
	if err := checkFactors(card, factors, values); err != nil {
		return nil, err
	}
	states, scope := 0, 0
	for _, k := range card {
		states += k
	}
	for _, f := range factors {
		scope += len(f.Scope)
	}
	// The structures, before the plan: whatever the order, each variable's
	// clique has at least its own states.
	least := VEMemory(len(card), states, len(factors), scope, 0, float64(states))
	if err := budget.Check(fmt.Sprintf("variable elimination of %d variables", len(card)), memlimit.Base+held+least); err != nil {
		return nil, err
	}
	limit := 0
	if stopWide {
		limit = maxWidth
	}
	p, err := planEliminationWithin(ctx, card, factors, limit)
	if errors.Is(err, errTooWide) {
		return nil, tooLarge("exact: the greedy min-fill elimination order reaches a factor over %d variables, over the limit %d (a heuristic order: the model's treewidth may be smaller, as on large grids, where a row-by-row order needs the shorter side + 1; --max-width raises the limit)", p.width, maxWidth)
	}
	if err != nil {
		return nil, err
	}
	if p.width > maxWidth {
		return nil, tooLarge("exact: elimination width %d exceeds the limit %d (the largest intermediate factor of the min-fill order has %d variables)", p.width, maxWidth, p.width)
	}
	if p.maxEntries > MaxTableEntries {
		return nil, tooLarge("exact: the largest intermediate factor of the min-fill elimination order would have %.4g entries, over the limit of %d (2^25)", p.maxEntries, MaxTableEntries)
	}
	if p.totalEntries > MaxTotalEntries {
		return nil, tooLarge("exact: the intermediate factors of the min-fill elimination order would have %.4g entries in all, over the limit of %d (2^27)", p.totalEntries, MaxTotalEntries)
	}
	need := p.need(card, factors)
	if err := budget.Check(fmt.Sprintf("variable elimination (width %d, %.3g table entries)", p.width, p.totalEntries), memlimit.Base+held+need); err != nil {
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
	return &VE{card: slices.Clone(card), order: p.order, width: p.width, steps: b.steps, res: res, need: need}, nil
}

// need is what variable elimination takes at its peak with plan p: the
// structures, the tables ψ_k and, at the peak of the passes, their
// messages (the model not included).
func (p *vePlan) need(card []int, factors []Factor) float64 {
	states, scope, seps := 0, 0, 0
	for _, k := range card {
		states += k
	}
	for _, f := range factors {
		scope += len(f.Scope)
	}
	for _, sep := range p.seps {
		seps += len(sep)
	}
	return VEMemory(len(card), states, len(factors), scope, seps, p.totalEntries) + 4*p.maxEntries
}

// veNeed estimates what variable elimination of factors with these scopes
// takes at its peak, from the elimination order it would plan (the
// estimate NewVE checks against its budget; the tables' values play no
// part, so factors may come without them). It is 0 where NewVE refuses the
// plan before building anything (a width or tables over its limits), and
// ok is false where no plan was made: over vePlanMaxVars variables, where
// planning alone would be slow.
func veNeed(card []int, factors []Factor) (need float64, ok bool) {
	if len(card) > vePlanMaxVars {
		return 0, false
	}
	p, err := planEliminationWithin(context.Background(), card, factors, DefaultMaxWidth)
	if errors.Is(err, errTooWide) {
		return 0, true
	}
	if err != nil {
		return 0, false
	}
	if p.width > DefaultMaxWidth || p.maxEntries > MaxTableEntries || p.totalEntries > MaxTotalEntries {
		return 0, true
	}
	return p.need(card, factors), true
}

// VEMemory estimates what variable elimination takes at its peak for n
// variables of states states in all and factors factors of scopeEntries
// scope entries in all, whose elimination order has seps separator entries
// (Σ_k |S_k|) and entries clique table entries (Σ_k |C_k|, the tables'
// entries): the result included, the model not. It is the larger of two
// phases' estimates.
//
// At the end of the upward pass (usually the peak): per variable 340
// bytes: the plan (the order and the separators' lists, 32), the passes'
// lists (positions, buckets, axes, parents, children, ψ, messages and δ:
// 196 with the children's lists), a step (88), the state values (24), the
// result's marginals and means (32) and the copy of the cardinalities; per
// state 8 (its marginal); per separator entry 24 (its place in the list,
// with the list's slack, and its stride); per table entry 16: ψ_k, which
// becomes the conditional table, and the messages and δ's rows. Measured
// with runtime/metrics on chains of 1.5·10⁵–3·10⁵ binary and ternary
// variables, a chain of triplets and a 4-row strip: the live heap's peak
// was 0.85–0.97 of it.
//
// While the order is planned and the factors wait in their buckets: per
// variable 264 bytes (the plan's heap, marks, adjacency and order, then
// the passes' lists), per factor 72 (its copy for VE and its place in a
// bucket, with the buckets' growth), per scope entry 24 (its place in its
// neighbours' adjacency lists, with their growth, for pairwise factors).
func VEMemory(n, states, factors, scopeEntries, seps int, entries float64) float64 {
	passes := 340*float64(n) + 8*float64(states) + 24*float64(seps) + 16*entries
	plan := 264*float64(n) + 72*float64(factors) + 24*float64(scopeEntries)
	return max(passes, plan)
}

// Memory returns the estimate of VE's memory that NewVEContext checked
// against its budget (see VEMemory; the model not included).
func (ve *VE) Memory() float64 { return ve.need }

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

// Result returns log Z, the marginals and the means. The caller must not
// modify it.
func (ve *VE) Result() *Result { return ve.res }

// Order returns the elimination order. The caller must not modify it.
func (ve *VE) Order() []int { return ve.order }

// Sample fills dst (length a multiple of the number of variables) with
// independent exact samples, row-major state indices, drawing one uniform
// from r per variable with more than one state and per sample, and nothing
// else.
func (ve *VE) Sample(dst []int, r *rand.Rand) {
	_ = ve.SampleContext(context.Background(), dst, r)
}

// SampleContext is Sample that stops with ctx's error when ctx is canceled
// (see Truth).
func (ve *VE) SampleContext(ctx context.Context, dst []int, r *rand.Rand) error {
	d := len(ve.card)
	if len(dst)%d != 0 {
		panic(fmt.Sprintf("exact: sample buffer of length %d for dimension %d", len(dst), d))
	}
	work := 0
	for o := 0; o < len(dst); o += d {
		if work += d; work >= pollDraws {
			work = 0
			if err := ctx.Err(); err != nil {
				return err
			}
		}
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
	return nil
}
