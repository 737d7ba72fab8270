package factorgraph

import (
	"math"
	"slices"

	"github.com/dstein/dstein/model"
)

var _ model.BlockConditional = (*Graph)(nil)

// block is a group of variables updated jointly (model.BlockConditional),
// its variables' cardinalities and joint states, and the factors that
// name any of them.
type block struct {
	vars   []int
	card   []int
	states int
	// joint lists the factors naming two or more of the block's
	// variables; single[j] the adjacency entries (indices of adjF and
	// adjPos) of the factors naming variable j alone among them, whose
	// terms sit at uoff[j] among the one-variable terms (Σ K: sumK).
	joint  []int
	single [][]int
	uoff   []int
	sumK   int
	// cost is the table reads of one update, about.
	cost int
}

// findBlocks groups the variables of the factors over two or more
// variables with a zero entry (variables of one state left out): the
// scopes that share a variable, directly or through others, form one
// component, and a component of at most model.MaxBlockStates joint states
// is one block. A larger component falls back to a block per scope (those
// within the limit, each dropped when another one holds it), and the
// graph records that its blocks do not cover its zeros.
func (g *Graph) findBlocks() {
	var scopes [][]int
	parent := make([]int, len(g.card))
	for v := range parent {
		parent[v] = v
	}
	root := func(v int) int {
		for parent[v] != v {
			parent[v] = parent[parent[v]]
			v = parent[v]
		}
		return v
	}
	for k := range g.fac {
		f := &g.fac[k]
		if len(f.scope) < 2 || !slices.ContainsFunc(f.table, func(x float64) bool { return math.IsInf(x, -1) }) {
			continue
		}
		var vars []int
		for _, v := range f.scope {
			if g.card[v] > 1 {
				vars = append(vars, v)
			}
		}
		if len(vars) < 2 {
			continue // a zero of one variable's states: Possible rules it out
		}
		scopes = append(scopes, vars)
		for _, v := range vars[1:] {
			parent[root(v)] = root(vars[0])
		}
	}
	g.covered = true
	byRoot := map[int][]int{} // component → indices of its scopes, in the factors' order
	var roots []int
	for i, vars := range scopes {
		r := root(vars[0])
		if _, ok := byRoot[r]; !ok {
			roots = append(roots, r)
		}
		byRoot[r] = append(byRoot[r], i)
	}
	var blocks [][]int
	through := map[int][]int{}          // a variable's blocks, among those of a component too large
	inUnion := make([]int, len(g.card)) // inUnion[v] == r+1 when v is in component r's union
	for _, r := range roots {
		// The union of the component's scopes, until its joint states
		// pass the limit (a component of thousands of tables stops at
		// its first few).
		var union []int
		joint := 1
	gather:
		for _, i := range byRoot[r] {
			for _, v := range scopes[i] {
				if inUnion[v] != r+1 {
					inUnion[v] = r + 1
					union = append(union, v)
					if joint *= g.card[v]; joint > model.MaxBlockStates {
						break gather
					}
				}
			}
		}
		if joint <= model.MaxBlockStates {
			slices.Sort(union)
			blocks = append(blocks, union)
			continue
		}
		// Too large together: a block per scope that fits, larger ones
		// first so that a scope within one already kept is dropped.
		g.covered = false
		var own [][]int
		for _, i := range byRoot[r] {
			if states(g.card, scopes[i]) <= model.MaxBlockStates {
				own = append(own, scopes[i])
			}
		}
		slices.SortStableFunc(own, func(a, b []int) int { return len(b) - len(a) })
		// A block holding vars holds its first variable: only the
		// blocks through that variable are compared (a network of many
		// tables in one component stays linear in its tables, about).
		for _, vars := range own {
			if !slices.ContainsFunc(through[vars[0]], func(b int) bool { return within(vars, blocks[b]) }) {
				for _, v := range vars {
					through[v] = append(through[v], len(blocks))
				}
				blocks = append(blocks, vars)
			}
		}
	}
	count := make([]int, len(g.fac)) // a factor's variables in the block
	for _, vars := range blocks {
		b := block{vars: vars, card: make([]int, len(vars)), states: states(g.card, vars),
			single: make([][]int, len(vars)), uoff: make([]int, len(vars))}
		for _, v := range vars {
			for a := g.adjStart[v]; a < g.adjStart[v+1]; a++ {
				count[g.adjF[a]]++
			}
		}
		for j, v := range vars {
			b.card[j], b.uoff[j] = g.card[v], b.sumK
			b.sumK += g.card[v]
			for a := g.adjStart[v]; a < g.adjStart[v+1]; a++ {
				f := &g.fac[g.adjF[a]]
				if count[g.adjF[a]] == 1 {
					b.single[j] = append(b.single[j], a)
					b.cost += len(f.scope) + g.card[v]
				} else if !slices.Contains(b.joint, g.adjF[a]) {
					b.joint = append(b.joint, g.adjF[a])
				}
			}
		}
		for _, k := range b.joint {
			b.cost += b.states * len(g.fac[k].scope)
		}
		b.cost += b.states * len(vars)
		for _, v := range vars {
			for a := g.adjStart[v]; a < g.adjStart[v+1]; a++ {
				count[g.adjF[a]] = 0
			}
		}
		slices.Sort(b.joint)
		g.blocks = append(g.blocks, b)
	}
}

// states returns Π K_v over vars, or model.MaxBlockStates + 1 once the
// product passes the limit.
func states(card, vars []int) int {
	p := 1
	for _, v := range vars {
		if p *= card[v]; p > model.MaxBlockStates {
			return model.MaxBlockStates + 1
		}
	}
	return p
}

// within reports whether every variable of a is in b.
func within(a, b []int) bool {
	for _, v := range a {
		if !slices.Contains(b, v) {
			return false
		}
	}
	return true
}

// BlocksCover reports whether every factor with zero entries over two or
// more variables lies within one block, its connected scopes with it (see
// Blocks): then single-site moves and one joint update per block reach
// every configuration of positive probability from every other.
func (g *Graph) BlocksCover() bool { return g.zeros == 0 || g.covered }

// Blocks returns the groups of variables that a sampler should update
// jointly: the factors with zero entries over two or more variables,
// joined when they share variables (see findBlocks), each in ascending
// order of the variables.
func (g *Graph) Blocks() [][]int {
	out := make([][]int, len(g.blocks))
	for i, b := range g.blocks {
		out[i] = b.vars
	}
	return out
}

// LogBlockConditional writes, for each joint state of block b (mixed
// radix, the last variable fastest), the sum of the log-values of the
// factors that name a variable of the block at z with the block set to
// that state, and returns dst[:states]. A factor that names one variable
// of the block adds a term of that variable's state alone, summed first
// (as LogConditional does), so that only the factors naming two or more
// enumerate the joint states; those it visits by changing z in place, and
// it restores z. dst's capacity past the states holds the one-variable
// terms (Σ K of the block): reused when large enough, else allocated.
func (g *Graph) LogBlockConditional(dst []float64, z []int, b int) []float64 {
	bl := &g.blocks[b]
	if cap(dst) < bl.states+bl.sumK {
		dst = make([]float64, bl.states, 2*bl.states) // Σ K ≤ Π K for two or more variables of two or more states
	}
	dst = dst[:bl.states]
	unary := dst[bl.states : bl.states+bl.sumK]
	clear(unary)
	for j, v := range bl.vars {
		u := unary[bl.uoff[j] : bl.uoff[j]+bl.card[j]]
		for _, a := range bl.single[j] {
			f := &g.fac[g.adjF[a]]
			st := f.stride[g.adjPos[a]]
			base := f.index(z) - z[v]*st
			for s := range u {
				u[s] += f.table[base+s*st]
			}
		}
	}
	var saved, digit [16]int // a block of at most MaxBlockStates = 2¹⁰ states has at most 10 variables of two or more states
	for j, v := range bl.vars {
		saved[j] = z[v]
		z[v] = 0
	}
	last := len(bl.vars) - 1
	for a := range dst {
		lp := 0.0
		for j := range bl.vars {
			lp += unary[bl.uoff[j]+digit[j]]
		}
		for _, k := range bl.joint {
			f := &g.fac[k]
			lp += f.table[f.index(z)]
		}
		dst[a] = lp
		// The next joint state: the last variable fastest.
		for j := last; j >= 0; j-- {
			v := bl.vars[j]
			if digit[j]++; digit[j] < bl.card[j] {
				z[v] = digit[j]
				break
			}
			digit[j], z[v] = 0, 0
		}
	}
	for j, v := range bl.vars {
		z[v] = saved[j]
	}
	return dst
}

// BlockCosts returns the table reads of one update of each block and of
// one sweep of LogConditional over every variable, about: a factor read
// for a variable's K states costs its scope's length (the index) and K.
func (g *Graph) BlockCosts() (blocks []int, sweep int) {
	blocks = make([]int, len(g.blocks))
	for i, b := range g.blocks {
		blocks[i] = b.cost
	}
	for v := range g.card {
		for a := g.adjStart[v]; a < g.adjStart[v+1]; a++ {
			sweep += len(g.fac[g.adjF[a]].scope) + g.card[v]
		}
	}
	return blocks, sweep
}
