package factorgraph

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/dstein/dstein/model"
)

// Limits of New, which bound the memory a graph takes whatever its input:
// MaxCardinality is the largest number of states of one variable and
// MaxStates the largest total number of states Σ_i K_i (the length of a
// membership vector).
const (
	MaxCardinality = 1 << 16
	MaxStates      = 1 << 24
)

// Factor is one non-negative function of the variables in Scope, stored as
// the logarithms of its values.
//
// LogTable has one entry per assignment (a_0, …, a_{r−1}) of the scope
// variables, in UAI order: row-major with the last scope variable changing
// fastest, so that the entry of the assignment is at
// Σ_j a_j · Π_{k>j} K_{Scope[k]}. Entries are finite or −Inf (a zero value),
// never NaN or +Inf. Scope may be empty: the factor is then a constant with a
// single entry.
type Factor struct {
	Scope    []int
	LogTable []float64
}

// factor is a Factor with its layout precomputed.
type factor struct {
	scope  []int
	card   []int // cardinality of each scope variable
	stride []int // table stride of each scope variable
	moff   []int // start of each scope variable's block of memberships
	table  []float64
}

// index returns the table index of the assignment that z gives the scope.
func (f *factor) index(z []int) int {
	idx := 0
	for j, v := range f.scope {
		idx += z[v] * f.stride[j]
	}
	return idx
}

// Graph is a discrete factor graph. It is immutable and safe for concurrent
// use.
type Graph struct {
	card    []int
	off     []int // start of each variable's block of per-state entries
	states  []float64
	factors []Factor
	fac     []factor
	// The factors adjacent to variable i are adjF[adjStart[i]:adjStart[i+1]],
	// with the position of i in each one's scope in adjPos.
	adjStart, adjF, adjPos []int
	possible               []bool // per state, laid out by off
	maxTable, maxScope     int
	pool                   sync.Pool // *scratch for RelaxedLogProb
	// names are the variables' names when they differ from "z" + index
	// (a clamped graph's: its free variables' names in the graph it was
	// clamped from; a Bayesian network's own); nil otherwise. stateNames
	// are each variable's states' names (nil: unnamed).
	names      []string
	stateNames [][]string
	// zeros counts the zero entries of factors over two or more
	// variables (deterministic or logical tables).
	zeros int
	// blocks are the groups of variables updated jointly
	// (model.BlockConditional; blocks.go).
	blocks []block
	// covered: every factor with zeros lies within a block (BlocksCover).
	covered bool
}

// ZeroEntries returns the number of zero entries in the tables of factors
// over two or more variables: the deterministic or logical relations
// (either = lung OR tub) that can leave single-site samplers unable to
// reach every configuration of positive probability.
func (g *Graph) ZeroEntries() int { return g.zeros }

// Named returns a graph like g whose variables and states have names (a
// Bayesian network read from a BIF file): names[i] names variable i (never
// empty, all distinct), states[i] its states (nil: unnamed), distinct
// within a variable. The tables are shared with g.
func (g *Graph) Named(names []string, states [][]string) (*Graph, error) {
	if len(names) != len(g.card) || (states != nil && len(states) != len(g.card)) {
		return nil, fmt.Errorf("%d names for %d variables", len(names), len(g.card))
	}
	seen := map[string]bool{}
	for i, n := range names {
		if n == "" || seen[n] {
			return nil, fmt.Errorf("variable %d: name %q is empty or given twice", i, n)
		}
		seen[n] = true
		if states == nil || states[i] == nil {
			continue
		}
		if len(states[i]) != g.card[i] {
			return nil, fmt.Errorf("variable %s: %d state names for %d states", n, len(states[i]), g.card[i])
		}
		st := map[string]bool{}
		for _, s := range states[i] {
			if s == "" || st[s] {
				return nil, fmt.Errorf("variable %s: state name %q is empty or given twice", n, s)
			}
			st[s] = true
		}
	}
	c := &Graph{card: g.card, off: g.off, states: g.states, factors: g.factors, fac: g.fac,
		adjStart: g.adjStart, adjF: g.adjF, adjPos: g.adjPos, possible: g.possible,
		maxTable: g.maxTable, maxScope: g.maxScope, zeros: g.zeros, blocks: g.blocks, covered: g.covered,
		names: append([]string(nil), names...), stateNames: states}
	c.pool.New = func() any { return c.newScratch() }
	return c, nil
}

// StateNames returns variable i's state names, or nil when they have
// none (model.StateNamer).
func (g *Graph) StateNames(i int) []string {
	if g.stateNames == nil {
		return nil
	}
	return g.stateNames[i]
}

var (
	_ model.Model       = (*Graph)(nil)
	_ model.Conditional = (*Graph)(nil)
	_ model.Delta       = (*Graph)(nil)
	_ model.Relaxed     = (*Graph)(nil)
	_ model.Support     = (*Graph)(nil)
)

// New checks the cardinalities and factors and returns the graph. It needs
// at least one variable; every cardinality in [1, MaxCardinality], and at
// most MaxStates states in all; every
// factor's scope naming distinct variables in [0, len(card)); one table entry
// per assignment of the scope (see Factor); entries finite or −Inf. It
// rejects a factor that is zero everywhere, and a variable all of whose
// states are ruled out by the factors' zeros (see Possible), since either
// gives every configuration probability zero. New copies its arguments.
func New(card []int, factors []Factor) (*Graph, error) { return build(card, factors, true) }

// NewOwned is New without the copies: the graph keeps card, the factors
// slice and the factors' scopes and tables, which the caller must not
// modify afterwards. A reader that builds them for the graph alone (the UAI
// reader, Clamp) saves a second copy of every table and scope: half the
// memory of building a network from a file.
func NewOwned(card []int, factors []Factor) (*Graph, error) { return build(card, factors, false) }

func build(card []int, factors []Factor, copyArgs bool) (*Graph, error) {
	n := len(card)
	if n == 0 {
		return nil, errors.New("factor graph has no variables")
	}
	total := 0
	for i, k := range card {
		if k < 1 || k > MaxCardinality {
			return nil, fmt.Errorf("variable %d has %d states; want 1 to %d", i, k, MaxCardinality)
		}
		total += k
		if total > MaxStates {
			return nil, fmt.Errorf("the variables have more than %d states in all", MaxStates)
		}
	}
	g := &Graph{
		card:     card,
		off:      make([]int, n+1),
		adjStart: make([]int, n+1),
	}
	if copyArgs {
		g.card = append([]int(nil), card...)
	}
	maxK := 0
	for i, k := range card {
		g.off[i+1] = g.off[i] + k
		maxK = max(maxK, k)
	}
	g.states = make([]float64, maxK)
	for s := range g.states {
		g.states[s] = float64(s)
	}

	bound := 0.0            // Σ_f max |finite log-value|: the largest |log p*|
	stamp := make([]int, n) // stamp[v] == k+1 when factor k names v
	deg := make([]int, n)
	if copyArgs {
		g.factors = make([]Factor, len(factors))
	} else {
		g.factors = factors[:len(factors):len(factors)]
	}
	g.fac = make([]factor, len(factors))
	// The layout of every factor (cardinalities, strides and membership
	// offsets of its scope) in one allocation, three entries per scope
	// entry: one slice of a graph instead of three of each factor.
	entries := 0
	for _, f := range factors {
		entries += len(f.Scope)
	}
	layout := make([]int, 3*entries)
	for k, f := range factors {
		r := len(f.Scope)
		size := 1
		for _, v := range f.Scope {
			if v < 0 || v >= n {
				return nil, fmt.Errorf("factor %d: scope names variable %d; the graph has %d variables", k, v, n)
			}
			if stamp[v] == k+1 {
				return nil, fmt.Errorf("factor %d: scope names variable %d twice", k, v)
			}
			stamp[v] = k + 1
			if size > math.MaxInt/card[v] {
				return nil, fmt.Errorf("factor %d: the table of scope %v would have more than %d entries", k, f.Scope, math.MaxInt)
			}
			size *= card[v]
		}
		if len(f.LogTable) != size {
			return nil, fmt.Errorf("factor %d has %d table entries; its scope %v wants %d", k, len(f.LogTable), f.Scope, size)
		}
		someNonZero := false
		largest := 0.0
		for a, x := range f.LogTable {
			if math.IsNaN(x) || math.IsInf(x, 1) {
				return nil, fmt.Errorf("factor %d: log-table entry %d is %v; want a finite number or −Inf", k, a, x)
			}
			if !math.IsInf(x, -1) {
				someNonZero = true
				largest = max(largest, math.Abs(x))
			} else if r > 1 {
				g.zeros++
			}
		}
		bound += largest
		if !someNonZero {
			return nil, fmt.Errorf("factor %d is zero for every assignment of its scope %v, so every configuration has probability zero", k, f.Scope)
		}
		scope, table := f.Scope, f.LogTable
		if copyArgs {
			scope = append([]int(nil), f.Scope...)
			table = append([]float64(nil), f.LogTable...)
			g.factors[k] = Factor{Scope: scope, LogTable: table}
		} else if r == 0 {
			// As a copy would have it: an empty scope is nil.
			scope = nil
			g.factors[k].Scope = nil
		}
		lay := layout[: 3*r : 3*r]
		layout = layout[3*r:]
		fc := factor{scope: scope, card: lay[:r:r], stride: lay[r : 2*r : 2*r], moff: lay[2*r:], table: table}
		st := 1
		for j := r - 1; j >= 0; j-- {
			fc.card[j] = card[scope[j]]
			fc.moff[j] = g.off[scope[j]]
			fc.stride[j] = st
			st *= fc.card[j]
		}
		g.fac[k] = fc
		g.maxTable = max(g.maxTable, size)
		g.maxScope = max(g.maxScope, r)
		for _, v := range scope {
			deg[v]++
		}
	}

	if err := model.CheckLogBound("the factor graph", bound); err != nil {
		return nil, err
	}
	for i := range n {
		g.adjStart[i+1] = g.adjStart[i] + deg[i]
	}
	g.adjF = make([]int, g.adjStart[n])
	g.adjPos = make([]int, g.adjStart[n])
	fill := append([]int(nil), g.adjStart[:n]...)
	for k, f := range g.fac {
		for j, v := range f.scope {
			g.adjF[fill[v]], g.adjPos[fill[v]] = k, j
			fill[v]++
		}
	}

	if err := g.prune(); err != nil {
		return nil, err
	}
	if g.zeros > 0 {
		g.findBlocks()
	}
	g.pool.New = func() any { return g.newScratch() }
	return g, nil
}

// Dim returns the number of variables.
func (g *Graph) Dim() int { return len(g.card) }

// States returns the state values of variable i: 0, 1, …, K_i−1.
func (g *Graph) States(i int) []float64 { return g.states[:g.card[i]:g.card[i]] }

// Cards returns the number of states of each variable. The caller must not
// modify the slice.
func (g *Graph) Cards() []int { return g.card }

// Factors returns the factors, in the order given to New (for a graph made
// by Clamp, see Clamp). The caller must not modify them.
func (g *Graph) Factors() []Factor { return g.factors }

// Possible reports whether state s of variable i survives the arc-consistency
// pruning described in the package documentation. A state reported
// impossible has probability zero whatever the other variables are.
func (g *Graph) Possible(i, s int) bool { return g.possible[g.off[i]+s] }

// LogProb returns Σ_f log φ_f(z), −Inf when some factor is zero at z.
func (g *Graph) LogProb(z []int) float64 {
	var lp float64
	for k := range g.fac {
		f := &g.fac[k]
		lp += f.table[f.index(z)]
	}
	return lp
}

// LogConditional writes, for each state s of variable i, the sum of the
// log-values of the factors adjacent to i at z with z_i = s. It reads only
// those factors.
func (g *Graph) LogConditional(dst []float64, z []int, i int) []float64 {
	k := g.card[i]
	if cap(dst) < k {
		dst = make([]float64, k)
	}
	dst = dst[:k]
	clear(dst)
	for a := g.adjStart[i]; a < g.adjStart[i+1]; a++ {
		f := &g.fac[g.adjF[a]]
		pos := g.adjPos[a]
		base := f.index(z) - z[i]*f.stride[pos]
		st := f.stride[pos]
		for s := range dst {
			dst[s] += f.table[base+s*st]
		}
	}
	return dst
}

// DeltaLogProb returns log p*(z') − log p*(z), z' being z with z_i = s,
// from the factors adjacent to i: +Inf when only those at z are zero, −Inf
// when only those at z' are, and 0 when both are (or s = z_i).
func (g *Graph) DeltaLogProb(z []int, i, s int) float64 {
	if s == z[i] {
		return 0
	}
	var before, after float64
	for a := g.adjStart[i]; a < g.adjStart[i+1]; a++ {
		f := &g.fac[g.adjF[a]]
		idx := f.index(z)
		before += f.table[idx]
		after += f.table[idx+(s-z[i])*f.stride[g.adjPos[a]]]
	}
	if math.IsInf(before, -1) && math.IsInf(after, -1) {
		return 0
	}
	return after - before
}

// Bytes returns the memory the graph holds (see Shape.Bytes).
func (g *Graph) Bytes() int64 { return int64(g.Shape().Bytes()) }

// Shape returns the graph's shape: its numbers of variables, states,
// factors and scope entries, and its tables' memory.
func (g *Graph) Shape() Shape {
	s := Shape{Variables: len(g.card), States: g.off[len(g.card)], Factors: len(g.fac), ScopeEntries: len(g.adjF)}
	for _, f := range g.fac {
		s.TableBytes += TableBytes(len(f.table))
	}
	return s
}

// Shape is the size of a factor graph, what its memory grows with; a
// reader knows it before it reads the tables.
type Shape struct {
	// Variables and States: the variables, and their states in all (Σ K_i).
	Variables, States int
	// Factors and ScopeEntries: the factors, and their scopes' entries in
	// all.
	Factors, ScopeEntries int
	// TableBytes is the memory of the factors' tables: TableBytes of each.
	TableBytes float64
}

// Bytes estimates the memory a graph of this shape holds, from its layout
// (measured on UAI chains and grids of 10⁴ to 6·10⁵ variables with
// runtime.MemStats, within 2% of the estimate):
//
//   - per variable 24 bytes: its cardinality, its offsets among the states
//     and among the adjacency;
//   - per state 1 byte: whether it is possible;
//   - per factor 168 bytes: its Factor (48) and its precomputed layout
//     (five slices, 120);
//   - per scope entry 48 bytes: the scope (8), the layout's cardinality,
//     stride and membership offset (24) and the adjacency's factor and
//     position (16);
//   - the tables (TableBytes).
func (s Shape) Bytes() float64 {
	return 24*float64(s.Variables) + float64(s.States) + 168*float64(s.Factors) + 48*float64(s.ScopeEntries) + s.TableBytes
}

// BuildBytes estimates what New and NewOwned allocate for a graph of this
// shape beyond what the graph keeps, garbage that is live while they run:
// per variable three counters (24 bytes), per factor its place in the
// support's queue (9 bytes).
func (s Shape) BuildBytes() float64 { return 24*float64(s.Variables) + 9*float64(s.Factors) }

// TableBytes returns the memory of a table of entries log-values: 8 bytes
// an entry, rounded up to the size of Go's allocation (its size class up
// to 32 KiB, whole pages of 8 KiB beyond).
func TableBytes(entries int) float64 {
	b := 8 * entries
	if b > sizeClasses[len(sizeClasses)-1] {
		return float64((b + 8191) &^ 8191)
	}
	k, _ := slices.BinarySearch(sizeClasses, b)
	return float64(sizeClasses[k])
}

// sizeClasses are the Go runtime's allocation sizes up to 32 KiB
// (runtime/sizeclasses.go); an allocation takes the smallest that holds it.
var sizeClasses = []int{0, 8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792,
	2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240,
	10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// Kind names the model's kind for messages (model.Kinder).
func (g *Graph) Kind() string { return "a factor graph (a UAI or Bayesian network)" }
