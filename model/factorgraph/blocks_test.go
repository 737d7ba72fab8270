package factorgraph

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/modeltest"
)

// TestLogBlockConditionalAgainstLogProb: on random graphs with zeros (and
// variables of one state), every block's conditional at every
// configuration equals log p* of the configuration with the block set to
// each joint state, up to one constant (log p* at the configuration
// itself where it is finite), −Inf exactly where log p* is (where the
// factors away from the block are not zero already); z comes back
// unchanged, and a short buffer is replaced, a long one reused.
func TestLogBlockConditionalAgainstLogProb(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 8))
	checked := 0
	for trial := range 60 {
		card := []int{2, 3, 1, 2, 4, 2}[:3+trial%4]
		g, fs := randomGraph(t, rnd, card, 2+trial%5, 0.3)
		ref := reference(card, fs)
		for b, vars := range g.Blocks() {
			var away []Factor // the factors naming no variable of the block
			for _, f := range fs {
				if !slices.ContainsFunc(f.Scope, func(v int) bool { return slices.Contains(vars, v) }) {
					away = append(away, f)
				}
			}
			refAway := reference(card, away)
			states := 1
			for _, v := range vars {
				if card[v] < 2 {
					t.Fatalf("block %v holds variable %d of one state", vars, v)
				}
				states *= card[v]
			}
			var buf []float64
			modeltest.ForEachState(g, func(z []int) {
				keep := slices.Clone(z)
				buf = g.LogBlockConditional(buf, z, b)
				if !slices.Equal(z, keep) {
					t.Fatalf("z changed: %v → %v", keep, z)
				}
				if math.IsInf(refAway(z), -1) {
					return
				}
				if len(buf) != states || cap(buf) < 2*states {
					t.Fatalf("len %d cap %d for %d states", len(buf), cap(buf), states)
				}
				y := slices.Clone(z)
				var shift float64
				set := false
				for a := range states {
					rest := a
					for j := len(vars) - 1; j >= 0; j-- {
						y[vars[j]] = rest % card[vars[j]]
						rest /= card[vars[j]]
					}
					want := ref(y)
					if math.IsInf(want, -1) != math.IsInf(buf[a], -1) {
						t.Fatalf("block %v at %v, joint state %d: %v, log p* %v", vars, z, a, buf[a], want)
					}
					if math.IsInf(want, -1) {
						continue
					}
					if !set {
						shift, set = want-buf[a], true
					}
					if d := want - buf[a] - shift; math.Abs(d) > 1e-12 {
						t.Fatalf("block %v at %v, joint state %d: off by %v", vars, z, a, d)
					}
				}
				checked++
			})
			p := &buf[0]
			if again := g.LogBlockConditional(buf, make([]int, len(card)), b); &again[0] != p {
				t.Error("a buffer of enough capacity was replaced")
			}
		}
	}
	if checked < 500 {
		t.Fatalf("only %d block conditionals checked", checked)
	}
}

// logical builds a graph of binary variables from 0/1 tables (0 a zero
// entry), with a weak field on every variable.
func logical(t *testing.T, n int, scopes [][]int, tables [][]float64) *Graph {
	t.Helper()
	card := make([]int, n)
	var fs []Factor
	for i := range card {
		card[i] = 2
		fs = append(fs, Factor{Scope: []int{i}, LogTable: []float64{0, 0.3}})
	}
	for k, sc := range scopes {
		lt := make([]float64, len(tables[k]))
		for a, x := range tables[k] {
			lt[a] = math.Log(x)
		}
		fs = append(fs, Factor{Scope: sc, LogTable: lt})
	}
	g, err := New(card, fs)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

var equal = []float64{1, 0, 0, 1}

// TestBlocksJoinSharedScopes: tables with zeros that share variables (a
// chain of equalities) make one block of their union; separate ones
// separate blocks; a union past model.MaxBlockStates falls back to a
// block per table and is not covered; a table of one state's variables
// and one other makes no block.
func TestBlocksJoinSharedScopes(t *testing.T) {
	g := logical(t, 6, [][]int{{2, 1}, {1, 0}, {4, 5}}, [][]float64{equal, equal, equal})
	if got := g.Blocks(); !slices.EqualFunc(got, [][]int{{0, 1, 2}, {4, 5}}, slices.Equal) || !g.BlocksCover() {
		t.Errorf("blocks %v, cover %v; want [[0 1 2] [4 5]], true", got, g.BlocksCover())
	}
	// A chain of 11 equalities: 12 variables, 4096 joint states.
	var scopes [][]int
	var tables [][]float64
	for i := range 11 {
		scopes = append(scopes, []int{i, i + 1})
		tables = append(tables, equal)
	}
	g = logical(t, 12, scopes, tables)
	if got := g.Blocks(); len(got) != 11 || g.BlocksCover() {
		t.Errorf("a chain past the limit: %d blocks, cover %v; want 11, false", len(got), g.BlocksCover())
	}
	// A table over {0, 1} within one over {0, 1, 2} that does not
	// share... both share variables, so one block of the union.
	g = logical(t, 3, [][]int{{0, 1}, {0, 1, 2}}, [][]float64{{1, 1, 1, 0}, {1, 0, 1, 0, 1, 0, 0, 1}})
	if got := g.Blocks(); !slices.EqualFunc(got, [][]int{{0, 1, 2}}, slices.Equal) {
		t.Errorf("nested tables: blocks %v; want [[0 1 2]]", got)
	}
	one, err := New([]int{1, 2}, []Factor{{Scope: []int{0, 1}, LogTable: []float64{0, negInf}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := one.Blocks(); len(got) != 0 || !one.BlocksCover() {
		t.Errorf("a zero beside a variable of one state: blocks %v, cover %v", got, one.BlocksCover())
	}
	var _ model.BlockConditional = g
}
