package factorgraph

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/modeltest"
)

var negInf = math.Inf(-1)

// reference computes log p*(z) from the factors with its own indexing: the
// table index is built from the last scope variable backwards.
func reference(card []int, factors []Factor) func(z []int) float64 {
	return func(z []int) float64 {
		var s float64
		for _, f := range factors {
			idx, mult := 0, 1
			for j := len(f.Scope) - 1; j >= 0; j-- {
				idx += z[f.Scope[j]] * mult
				mult *= card[f.Scope[j]]
			}
			s += f.LogTable[idx]
		}
		return s
	}
}

// randomFactors draws a graph over the given cardinalities: nf factors with
// scopes of 0 to 3 distinct variables in random order, log-values from
// N(0, 1) and each entry zero with probability pZero.
func randomFactors(rnd *rand.Rand, card []int, nf int, pZero float64) []Factor {
	var fs []Factor
	for range nf {
		r := rnd.IntN(min(3, len(card)) + 1)
		scope := rnd.Perm(len(card))[:r]
		size := 1
		for _, v := range scope {
			size *= card[v]
		}
		table := make([]float64, size)
		for a := range table {
			if rnd.Float64() < pZero {
				table[a] = negInf
			} else {
				table[a] = rnd.NormFloat64()
			}
		}
		fs = append(fs, Factor{Scope: scope, LogTable: table})
	}
	return fs
}

// randomGraph draws graphs until New accepts one whose configurations are
// not all impossible.
func randomGraph(t *testing.T, rnd *rand.Rand, card []int, nf int, pZero float64) (*Graph, []Factor) {
	t.Helper()
	for range 1000 {
		fs := randomFactors(rnd, card, nf, pZero)
		g, err := New(card, fs)
		if err != nil {
			continue
		}
		possible := false
		modeltest.ForEachState(g, func(z []int) {
			if !math.IsInf(g.LogProb(z), -1) {
				possible = true
			}
		})
		if possible {
			return g, fs
		}
	}
	t.Fatal("no valid random graph in 1000 draws")
	return nil, nil
}

func TestTableLayout(t *testing.T) {
	// Factor over (variable 1, variable 0) with cardinalities 2 and 3:
	// entry a·3 + b is the value at z1 = a, z0 = b.
	table := []float64{0, 1, 2, 3, 4, 5}
	g, err := New([]int{3, 2}, []Factor{{Scope: []int{1, 0}, LogTable: table}})
	if err != nil {
		t.Fatal(err)
	}
	for z0 := range 3 {
		for z1 := range 2 {
			if got, want := g.LogProb([]int{z0, z1}), float64(z1*3+z0); got != want {
				t.Errorf("LogProb(%d, %d) = %v; want %v", z0, z1, got, want)
			}
		}
	}
	if st := g.States(0); len(st) != 3 || st[0] != 0 || st[2] != 2 {
		t.Errorf("States(0) = %v; want [0 1 2]", st)
	}
	if st := g.States(1); len(st) != 2 || cap(st) != 2 {
		t.Errorf("States(1) = %v (cap %d); want [0 1] with capacity 2", st, cap(st))
	}
}

func TestConformance(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	cards := [][]int{
		{2, 2, 2},
		{3, 1, 2, 3},
		{1},
		{3, 3},
		{2, 3, 1, 2, 2},
	}
	for trial := range 12 {
		card := cards[trial%len(cards)]
		pZero := []float64{0, 0.2, 0.4}[trial%3]
		g, fs := randomGraph(t, rnd, card, 2+trial%5, pZero)
		modeltest.Check(t, g, modeltest.Options{Reference: reference(card, fs), Seed: uint64(trial)})
		if t.Failed() {
			t.Fatalf("trial %d: card %v, factors %v", trial, card, fs)
		}
	}
}

func TestConformanceNoFactors(t *testing.T) {
	g, err := New([]int{2, 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	modeltest.Check(t, g, modeltest.Options{Reference: func([]int) float64 { return 0 }})
}

// TestSupport checks that every state Possible rules out has probability
// zero (by enumeration), and that the pruning finds the cases it promises.
func TestSupport(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	ruledOut := 0
	for trial := range 200 {
		card := [][]int{{2, 3, 2}, {3, 3, 1, 2}}[trial%2]
		g, _ := randomGraph(t, rnd, card, 3, 0.35)
		for i := range card {
			any := false
			for s := range card[i] {
				if g.Possible(i, s) {
					any = true
					continue
				}
				ruledOut++
				modeltest.ForEachState(g, func(z []int) {
					if z[i] == s && !math.IsInf(g.LogProb(z), -1) {
						t.Fatalf("Possible(%d, %d) is false but LogProb(%v) = %v", i, s, z, g.LogProb(z))
					}
				})
			}
			if !any {
				t.Fatalf("variable %d has no possible state", i)
			}
		}
	}
	if ruledOut == 0 {
		t.Fatal("no random graph had a state ruled out; the test checks nothing")
	}

	// A unary zero; a row of zeros in a pairwise table; and its
	// consequence: variable 2 can be 1 only when variable 1 is 0, which the
	// unary zero on variable 1 forbids.
	g, err := New([]int{3, 2, 2}, []Factor{
		{Scope: []int{0}, LogTable: []float64{0, negInf, 0}},
		{Scope: []int{0, 1}, LogTable: []float64{0, 0, 0, 0, negInf, negInf}},
		{Scope: []int{1}, LogTable: []float64{negInf, 0}},
		{Scope: []int{1, 2}, LogTable: []float64{0, 0, 0.5, negInf}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]bool{{true, false, false}, {false, true}, {true, false}}
	for i, w := range want {
		for s, p := range w {
			if g.Possible(i, s) != p {
				t.Errorf("Possible(%d, %d) = %v; want %v", i, s, !p, p)
			}
		}
	}
}

// naive computes the multilinear extension and its gradient in the linear
// domain, straight from the definition.
func naive(g *Graph, m []float64) (float64, []float64) {
	off := model.Offsets(g)
	grad := make([]float64, len(m))
	var f float64
	for _, fc := range g.Factors() {
		r := len(fc.Scope)
		cards := make([]int, r)
		for j, v := range fc.Scope {
			cards[j] = g.Cards()[v]
		}
		d := make([]int, r)
		var sum float64
		part := make([]float64, len(m))
		for _, lt := range fc.LogTable {
			w := math.Exp(lt)
			p := w
			for j, v := range fc.Scope {
				p *= m[off[v]+d[j]]
			}
			sum += p
			for j, v := range fc.Scope {
				q := w
				for k, u := range fc.Scope {
					if k != j {
						q *= m[off[u]+d[k]]
					}
				}
				part[off[v]+d[j]] += q
			}
			advance(d, cards)
		}
		f += math.Log(sum)
		for k := range grad {
			grad[k] += part[k] / sum
		}
	}
	return f, grad
}

func TestRelaxedAgainstDefinition(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	for trial := range 20 {
		card := []int{2, 3, 1, 2}
		g, _ := randomGraph(t, rnd, card, 4, 0.3)
		off := model.Offsets(g)
		m := make([]float64, off[len(off)-1])
		grad := make([]float64, len(m))
		for i := range card {
			var s float64
			for k := off[i]; k < off[i+1]; k++ {
				m[k] = rnd.Float64()
				if g.Possible(i, k-off[i]) && trial%2 == 1 && rnd.IntN(3) == 0 {
					m[k] = 0 // memberships on the boundary
				}
				s += m[k]
			}
			if s == 0 {
				m[off[i]] = 1
				s = 1
			}
			for k := off[i]; k < off[i+1]; k++ {
				m[k] /= s
			}
		}
		got := g.RelaxedLogProb(grad, m)
		want, wantGrad := naive(g, m)
		if math.IsInf(want, -1) {
			if !math.IsInf(got, -1) {
				t.Errorf("trial %d: relaxed %v; definition −Inf", trial, got)
			}
			continue
		}
		if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("trial %d: relaxed %v; definition %v", trial, got, want)
		}
		for k := range grad {
			if math.Abs(grad[k]-wantGrad[k]) > 1e-10*math.Max(1, math.Abs(wantGrad[k])) {
				t.Errorf("trial %d: gradient entry %d = %v; definition %v", trial, k, grad[k], wantGrad[k])
			}
		}
	}
}

// TestRelaxedTinyMemberships scales one variable's memberships down to 1e-300:
// each of its factors is linear in them, so the value drops by deg·log(1e300)
// and the gradient of that variable grows by 1e300, which must come out
// exactly although the products underflow in the linear domain.
func TestRelaxedTinyMemberships(t *testing.T) {
	g, err := New([]int{2, 3, 2}, []Factor{
		{Scope: []int{0, 1}, LogTable: []float64{0.1, -0.4, negInf, 0.3, -800, 0.2}},
		{Scope: []int{1, 2}, LogTable: []float64{0, 1, 2, negInf, -1, 0.5}},
		{Scope: []int{1}, LogTable: []float64{0.2, -0.1, 0}},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := []float64{0.3, 0.7, 0.2, 0.5, 0.3, 0.6, 0.4}
	grad := make([]float64, len(m))
	f := g.RelaxedLogProb(grad, m)
	// Scales on both sides of tinyMembership, where the gradient changes
	// method.
	for _, c := range []float64{1e-140, 1e-160, 1e-300} {
		tiny := append([]float64(nil), m...)
		for k := 2; k < 5; k++ { // variable 1, in all three factors
			tiny[k] *= c
		}
		tgrad := make([]float64, len(m))
		ft := g.RelaxedLogProb(tgrad, tiny)
		if want := f + 3*math.Log(c); math.Abs(ft-want) > 1e-12*math.Abs(want) {
			t.Errorf("scale %g: relaxed %v; want %v", c, ft, want)
		}
		for k := range grad {
			want := grad[k]
			if k >= 2 && k < 5 {
				want /= c
			}
			if math.Abs(tgrad[k]-want) > 1e-12*math.Abs(want) {
				t.Errorf("scale %g: gradient entry %d = %v; want %v", c, k, tgrad[k], want)
			}
		}
	}

	// A membership vector that puts all weight on zero entries gives −Inf
	// and a gradient without NaN or Inf.
	zero := []float64{1, 0, 0, 0, 1, 1, 0} // z0 = 0, z1 = 2, z2 = 0: factor 0 entry (0, 2) is zero
	f = g.RelaxedLogProb(grad, zero)
	if !math.IsInf(f, -1) {
		t.Errorf("relaxed at an impossible one-hot point = %v; want −Inf", f)
	}
	for k, x := range grad {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Errorf("gradient entry %d = %v at an impossible point", k, x)
		}
	}
}

func TestClampAgainstBruteForce(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	card := []int{2, 3, 1, 2, 3}
	checked := 0
	for trial := range 60 {
		g, fs := randomGraph(t, rnd, card, 5, 0.25)
		ref := reference(card, fs)
		ev := map[int]int{}
		for v := range card {
			if rnd.IntN(2) == 0 {
				ev[v] = rnd.IntN(card[v])
			}
		}
		if len(ev) == len(card) {
			delete(ev, 0)
		}
		c, free, err := g.Clamp(ev)
		if err != nil {
			// Only evidence of probability zero may fail.
			if !strings.Contains(err.Error(), "probability zero") {
				t.Fatalf("trial %d: Clamp(%v): %v", trial, ev, err)
			}
			modeltest.ForEachState(g, func(z []int) {
				for v, s := range ev {
					if z[v] != s {
						return
					}
				}
				if !math.IsInf(g.LogProb(z), -1) {
					t.Fatalf("trial %d: Clamp(%v) says %v, but LogProb(%v) = %v", trial, ev, err, z, g.LogProb(z))
				}
			})
			continue
		}
		if c.Dim() != len(card)-len(ev) || len(free) != c.Dim() {
			t.Fatalf("trial %d: clamped graph has %d variables (map %v); want %d", trial, c.Dim(), free, len(card)-len(ev))
		}
		full := make([]int, len(card))
		for v, s := range ev {
			full[v] = s
		}
		modeltest.ForEachState(c, func(z []int) {
			for i, v := range free {
				if _, obs := ev[v]; obs {
					t.Fatalf("free variable %d is observed", v)
				}
				if c.Cards()[i] != card[v] {
					t.Fatalf("free variable %d has %d states; want %d", i, c.Cards()[i], card[v])
				}
				full[v] = z[i]
			}
			got, want := c.LogProb(z), ref(full)
			if math.IsInf(want, -1) != math.IsInf(got, -1) || !math.IsInf(want, -1) && math.Abs(got-want) > 1e-12 {
				t.Errorf("trial %d: clamped LogProb(%v) = %v; original at %v gives %v", trial, z, got, full, want)
			}
		})
		modeltest.Check(t, c, modeltest.Options{})
		checked++
	}
	if checked < 20 {
		t.Fatalf("only %d of 60 clamps succeeded", checked)
	}
}

func TestClampErrors(t *testing.T) {
	g, err := New([]int{2, 3, 2}, []Factor{
		{Scope: []int{0, 1}, LogTable: []float64{0, 0, 0, negInf, negInf, negInf}},
		{Scope: []int{2}, LogTable: []float64{negInf, 0}},
		{Scope: []int{1, 2}, LogTable: []float64{0, 0, 0, negInf, 0, 0}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		ev   map[int]int
		want string
	}{
		"variable": {map[int]int{3: 0}, "names variable 3; the graph has 3 variables"},
		"negative": {map[int]int{-1: 0}, "names variable -1"},
		"state":    {map[int]int{1: 3}, "sets variable 1 to state 3; it has 3 states (0 to 2)"},
		"all":      {map[int]int{0: 0, 1: 0, 2: 1}, "observes all 3 variables"},
		"row":      {map[int]int{0: 1}, "probability zero: factor 0, over z0, z1, is zero wherever z0=1"},
		"constant": {map[int]int{2: 0}, "probability zero: factor 1, over z2, is zero at z2=0"},
		"possible": {map[int]int{0: 0}, ""},
	}
	for name, c := range cases {
		_, _, err := g.Clamp(c.ev)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want one containing %q", name, err, c.want)
		}
	}
	// Observing variable 1 = 1 leaves variable 2 only state 0 through the
	// last factor, which the unary zero forbids.
	h, err := New([]int{2, 2}, []Factor{
		{Scope: []int{1}, LogTable: []float64{negInf, 0}},
		{Scope: []int{0, 1}, LogTable: []float64{0, 0, 0, negInf}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Clamp(map[int]int{0: 1}); err == nil || !strings.Contains(err.Error(), "rule out every state of z1") {
		t.Errorf("joint zero through pruning: error %v", err)
	}
	c, free, err := h.Clamp(map[int]int{0: 0})
	if err != nil || len(free) != 1 || free[0] != 1 || c.Possible(0, 0) || !c.Possible(0, 1) {
		t.Errorf("Clamp(0 = 0) = %v, %v", free, err)
	}
	// The constant of fully observed factors is kept.
	k, _, err := h.Clamp(map[int]int{1: 1})
	if err != nil {
		t.Fatal(err)
	}
	if fs := k.Factors(); len(fs) != 2 || len(fs[1].Scope) != 0 || fs[1].LogTable[0] != 0 {
		t.Errorf("factors after clamping variable 1: %+v", fs)
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	ok := []float64{0, 0}
	cases := map[string]struct {
		card []int
		fs   []Factor
		want string
	}{
		"no variables": {nil, nil, "no variables"},
		"card 0":       {[]int{2, 0}, nil, "variable 1 has 0 states"},
		"card huge":    {[]int{MaxCardinality + 1}, nil, "want 1 to"},
		"range":        {[]int{2}, []Factor{{Scope: []int{1}, LogTable: ok}}, "factor 0: scope names variable 1; the graph has 1 variables"},
		"negative":     {[]int{2}, []Factor{{Scope: []int{-1}, LogTable: ok}}, "names variable -1"},
		"twice":        {[]int{2, 2}, []Factor{{Scope: []int{1, 1}, LogTable: []float64{0, 0, 0, 0}}}, "names variable 1 twice"},
		"length":       {[]int{2, 3}, []Factor{{Scope: []int{0}, LogTable: ok}, {Scope: []int{0, 1}, LogTable: ok}}, "factor 1 has 2 table entries; its scope [0 1] wants 6"},
		"empty scope":  {[]int{2}, []Factor{{Scope: nil, LogTable: ok}}, "wants 1"},
		"NaN":          {[]int{2}, []Factor{{Scope: []int{0}, LogTable: []float64{0, math.NaN()}}}, "entry 1 is NaN"},
		"+Inf":         {[]int{2}, []Factor{{Scope: []int{0}, LogTable: []float64{math.Inf(1), 0}}}, "entry 0 is +Inf"},
		"all zero":     {[]int{2}, []Factor{{Scope: []int{0}, LogTable: []float64{negInf, negInf}}}, "factor 0 is zero for every assignment"},
		"zero const":   {[]int{2}, []Factor{{Scope: []int{}, LogTable: []float64{negInf}}}, "factor 0 is zero for every assignment"},
		"no state": {[]int{2, 2}, []Factor{
			{Scope: []int{0}, LogTable: []float64{negInf, 0}},
			{Scope: []int{0, 1}, LogTable: []float64{0, 0, negInf, negInf}},
		}, "rule out every state of variable"},
		"overflow": {[]int{MaxCardinality, MaxCardinality, MaxCardinality, MaxCardinality}, []Factor{{Scope: []int{0, 1, 2, 3}, LogTable: ok}}, "more than"},
	}
	for name, c := range cases {
		_, err := New(c.card, c.fs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want one containing %q", name, err, c.want)
		}
	}
}

func TestNewLimitsTheStates(t *testing.T) {
	card := make([]int, MaxStates/MaxCardinality)
	for i := range card {
		card[i] = MaxCardinality
	}
	if _, err := New(card, nil); err != nil {
		t.Errorf("New with MaxStates states: %v", err)
	}
	card = append(card, 1)
	if _, err := New(card, nil); err == nil || !strings.Contains(err.Error(), "more than 16777216 states in all") {
		t.Errorf("New with MaxStates+1 states: error %v", err)
	}
}

func TestNewCopiesItsInput(t *testing.T) {
	card := []int{2}
	fs := []Factor{{Scope: []int{0}, LogTable: []float64{0, 1}}}
	g, err := New(card, fs)
	if err != nil {
		t.Fatal(err)
	}
	card[0], fs[0].Scope[0], fs[0].LogTable[1] = 5, 3, 7
	if g.Cards()[0] != 2 || g.Factors()[0].Scope[0] != 0 || g.LogProb([]int{1}) != 1 {
		t.Errorf("New kept a reference to its arguments")
	}
}

// A clamped graph names its free variables by their index in the graph it
// came from, and a graph clamped twice keeps the first graph's names.
func TestClampNamesFreeVariables(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	g, _ := randomGraph(t, rnd, []int{2, 2, 2, 2, 2}, 4, 0)
	if model.VariableName(g, 3) != "z3" {
		t.Fatalf("unclamped name %q", model.VariableName(g, 3))
	}
	c, free, err := g.Clamp(map[int]int{1: 0, 3: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range free {
		if got, want := model.VariableName(c, i), "z"+strconv.Itoa(v); got != want {
			t.Errorf("free variable %d: name %q, want %q", i, got, want)
		}
	}
	cc, _, err := c.Clamp(map[int]int{0: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := model.VariableName(cc, 0); got != "z2" {
		t.Errorf("clamped twice: first free variable %q, want z2", got)
	}
}

// Impossible evidence on a network with names is reported in the names
// the user gave to --given, not by factor scopes of indices.
func TestClampErrorsUseNames(t *testing.T) {
	negInf := math.Inf(-1)
	g, err := New([]int{2, 2, 2}, []Factor{
		{Scope: []int{0}, LogTable: []float64{0, 0}},
		{Scope: []int{0, 1}, LogTable: []float64{0, negInf, 0, 0}},
		{Scope: []int{1, 2}, LogTable: []float64{0, 0, 0, 0}},
	})
	if err != nil {
		t.Fatal(err)
	}
	g, err = g.Named([]string{"rain", "wet", "slip"}, [][]string{{"no", "yes"}, {"dry", "soaked"}, {"no", "yes"}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = g.Clamp(map[int]int{0: 0, 1: 1})
	want := "evidence has probability zero: factor 1, over rain, wet, is zero at rain=no, wet=soaked"
	if err == nil || err.Error() != want {
		t.Errorf("error %v; want %q", err, want)
	}
}
