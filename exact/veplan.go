// The elimination order (greedy min-fill) and the table index helpers of
// variable elimination.

package exact

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Width returns the elimination width: the number of variables of the
// largest intermediate factor.
func (ve *VE) Width() int { return ve.width }

// Width returns the width of the elimination order NewVE uses for these
// factors (the number of variables of its largest intermediate factor) and
// the order itself, without building anything; it is for reporting and for
// checking a model before NewVE. It panics on a scope variable outside
// [0, len(card)).
func Width(card []int, factors []Factor) (width int, order []int) {
	p, _ := planElimination(context.Background(), card, factors)
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
// only those are rescored after each step; the variables wait in a heap
// ordered by (fill-in, table size, index), whose minimum is the variable
// that a scan in index order for the smallest fill-in, then table size,
// would pick first, so that each pick costs O(log n) instead of O(n). It
// looks at ctx at every step and returns ctx.Err() when it is canceled.
func planElimination(ctx context.Context, card []int, factors []Factor) (vePlan, error) {
	return planEliminationWithin(ctx, card, factors, 0)
}

// errTooWide is planEliminationWithin's error when the order's width
// passes its limit.
var errTooWide = errors.New("exact: elimination width over the limit")

// planEliminationWithin is planElimination that gives up, with errTooWide
// and the plan so far, as soon as a clique has more than maxWidth variables
// (maxWidth ≤ 0: no limit): a graph far too wide (a complete graph of a few
// hundred spins) is refused at its first steps instead of after the whole
// order, whose rescoring grows as the fourth power of the degree.
func planEliminationWithin(ctx context.Context, card []int, factors []Factor, maxWidth int) (vePlan, error) {
	n := len(card)
	// adj[v]: v's neighbours in the interaction graph, increasing.
	adj := make([][]int, n)
	link := func(u, w int) {
		if k, found := slices.BinarySearch(adj[u], w); !found {
			adj[u] = slices.Insert(adj[u], k, w)
		}
	}
	linked := func(u, w int) bool {
		_, found := slices.BinarySearch(adj[u], w)
		return found
	}
	for fi, f := range factors {
		if fi&1023 == 1023 && ctx.Err() != nil {
			return vePlan{}, ctx.Err()
		}
		for a, u := range f.Scope {
			if u < 0 || u >= n {
				panic(fmt.Sprintf("exact: factor scope %v names a variable outside [0, %d)", f.Scope, n))
			}
			for _, w := range f.Scope[a+1:] {
				if w != u && w >= 0 && w < n {
					link(u, w)
					link(w, u)
				}
			}
		}
	}
	h := fillHeap{fill: make([]int, n), size: make([]float64, n), pos: make([]int, n), heap: make([]int, n)}
	score := func(v int) {
		ns := adj[v]
		sz := float64(card[v])
		f := 0
		for a, u := range ns {
			sz *= float64(card[u])
			for _, w := range ns[a+1:] {
				if !linked(u, w) {
					f++
				}
			}
		}
		h.fill[v], h.size[v] = f, sz
	}
	for v := range n {
		if v&1023 == 1023 && ctx.Err() != nil {
			return vePlan{}, ctx.Err()
		}
		score(v)
		h.heap[v], h.pos[v] = v, v
	}
	h.init()

	p := vePlan{order: make([]int, 0, n), seps: make([][]int, 0, n)}
	mark := make([]int, n) // step+1 when queued for rescoring
	var touched []int
	for step := range n {
		if err := ctx.Err(); err != nil {
			return vePlan{}, err
		}
		x := h.pop()
		sep := adj[x] // x's slice is not touched again: it becomes the clique's
		adj[x] = nil
		p.order = append(p.order, x)
		p.seps = append(p.seps, sep)
		p.width = max(p.width, 1+len(sep))
		if maxWidth > 0 && p.width > maxWidth {
			return p, errTooWide
		}
		p.maxEntries = max(p.maxEntries, h.size[x])
		p.totalEntries += h.size[x]

		for a, u := range sep {
			if k, found := slices.BinarySearch(adj[u], x); found {
				adj[u] = slices.Delete(adj[u], k, k+1)
			}
			for _, w := range sep[a+1:] {
				link(u, w)
				link(w, u)
			}
		}
		touched = touched[:0]
		for _, u := range sep {
			if mark[u] != step+1 {
				mark[u] = step + 1
				touched = append(touched, u)
			}
			for _, w := range adj[u] {
				if mark[w] != step+1 {
					mark[w] = step + 1
					touched = append(touched, w)
				}
			}
		}
		for _, u := range touched {
			score(u)
			h.fix(u)
		}
	}
	return p, nil
}

// fillHeap is a binary min-heap of the variables not yet eliminated, by
// (fill[v], size[v], v): a strict total order (sizes are products of
// cardinalities, never NaN), so the minimum is unique.
type fillHeap struct {
	fill []int
	size []float64
	heap []int // the variables, heap-ordered
	pos  []int // pos[v]: v's index in heap, −1 once popped
}

func (h *fillHeap) less(a, b int) bool {
	if h.fill[a] != h.fill[b] {
		return h.fill[a] < h.fill[b]
	}
	if h.size[a] != h.size[b] {
		return h.size[a] < h.size[b]
	}
	return a < b
}

func (h *fillHeap) swap(i, j int) {
	h.heap[i], h.heap[j] = h.heap[j], h.heap[i]
	h.pos[h.heap[i]], h.pos[h.heap[j]] = i, j
}

func (h *fillHeap) init() {
	for i := len(h.heap)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *fillHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(h.heap[i], h.heap[parent]) {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

func (h *fillHeap) down(i int) {
	n := len(h.heap)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if r := c + 1; r < n && h.less(h.heap[r], h.heap[c]) {
			c = r
		}
		if !h.less(h.heap[c], h.heap[i]) {
			return
		}
		h.swap(i, c)
		i = c
	}
}

// pop removes and returns the minimum.
func (h *fillHeap) pop() int {
	last := len(h.heap) - 1
	h.swap(0, last)
	v := h.heap[last]
	h.heap = h.heap[:last]
	h.pos[v] = -1
	if last > 0 {
		h.down(0)
	}
	return v
}

// fix restores the order after v's key changed.
func (h *fillHeap) fix(v int) {
	i := h.pos[v]
	if i < 0 {
		return
	}
	h.up(i)
	h.down(h.pos[v])
}

// gather sets idx[i], for each entry i of a row-major table with axis sizes
// card (last axis fastest), to Σ_a z_a·strides[a] for its configuration z:
// its index in a table with those strides (0 on the axes it lacks). It
// reuses idx's storage when it can. When ctx is canceled it stops early
// (the caller looks at ctx before it uses idx).
func gather(ctx context.Context, idx []int32, card, strides []int) []int32 {
	total := 1
	for _, k := range card {
		total *= k
	}
	idx = slices.Grow(idx[:0], total)[:total]
	z := make([]int, len(card))
	j := 0
	for i := range idx {
		if i&pollMask == pollMask && ctx.Err() != nil {
			return idx
		}
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
// is scratch space, returned for reuse. When ctx is canceled it stops
// early (the caller looks at ctx before it uses dst).
func logMarginalize(ctx context.Context, dst, src []float64, idx []int32, acc []float64) []float64 {
	for j := range dst {
		dst[j] = math.Inf(-1)
	}
	for i, x := range src {
		if i&pollMask == pollMask && ctx.Err() != nil {
			return acc
		}
		dst[idx[i]] = max(dst[idx[i]], x)
	}
	acc = append(acc[:0], make([]float64, len(dst))...)
	for i, x := range src {
		if i&pollMask == pollMask && ctx.Err() != nil {
			return acc
		}
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
