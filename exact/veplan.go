// The elimination order (greedy min-fill) and the table index helpers of
// variable elimination.

package exact

import (
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
