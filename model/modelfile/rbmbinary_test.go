package modelfile

import (
	"math"
	"strings"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/internal/numeric"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/modeltest"
	"github.com/dstein/dstein/model/rbm"
)

// binaryLogP sums the {0, 1} hidden units out by brute force: log Σ_h
// exp(vᵀWh + bᵀv + cᵀh) with v, h ∈ {0, 1}, written from the definition
// and independent of the conversion to ±1 units.
func binaryLogP(W [][]float64, b, c []float64, v []float64) float64 {
	m := len(c)
	terms := make([]float64, 0, 1<<m)
	for hb := 0; hb < 1<<m; hb++ {
		e := 0.0
		for i := range v {
			e += b[i] * v[i]
		}
		for k := range m {
			h := float64((hb >> k) & 1)
			e += c[k] * h
			for i := range v {
				e += v[i] * W[i][k] * h
			}
		}
		terms = append(terms, e)
	}
	return numeric.LogSumExp(terms)
}

// An RBM file with "units": "binary" is the RBM of {0, 1} units: its log p*
// equals the brute-force {0, 1} log p* (hidden units summed out) up to one
// constant, K of rbm.BinaryOffset, over all states; its states report 0 and
// 1; and its exact marginals and means (hidden enumeration) agree with the
// brute-force ones.
func TestBinaryRBMFile(t *testing.T) {
	lm, err := Open("../../examples/rbm-binary.json", "")
	if err != nil {
		t.Fatal(err)
	}
	m := lm.Model
	r, ok := m.(*rbm.RBM)
	if !ok || !r.Binary() {
		t.Fatalf("examples/rbm-binary.json loads as %T (binary %v)", m, ok && r.Binary())
	}
	W := [][]float64{{1.2, -0.8, 0.4}, {-0.6, 1.0, 0.3}, {0.9, 0.2, -1.1}, {-0.4, -0.7, 0.8}, {0.5, 0.6, 0.1}}
	b := []float64{-0.5, 0.2, 0.1, -0.3, 0.4}
	c := []float64{0.3, -0.2, -0.4}
	d := len(W)
	for i := range d {
		if st := m.States(i); len(st) != 2 || st[0] != 0 || st[1] != 1 {
			t.Fatalf("variable %d has states %v; want [0 1]", i, st)
		}
	}
	K := rbm.BinaryOffset(W, b, c)
	var lps []float64
	var states [][]int
	modeltest.ForEachState(m, func(z []int) {
		v := make([]float64, d)
		for i, s := range z {
			v[i] = m.States(i)[s]
		}
		want := binaryLogP(W, b, c, v)
		if got := m.LogProb(z) + K; math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
			t.Errorf("v = %v: log p* + K = %.15g, brute-force {0,1} log p* = %.15g", v, got, want)
		}
		lps = append(lps, want)
		states = append(states, append([]int(nil), z...))
	})
	logZ := numeric.LogSumExp(lps)
	marg := make([]float64, d) // P(v_i = 1)
	for k, z := range states {
		p := math.Exp(lps[k] - logZ)
		for i, s := range z {
			marg[i] += p * float64(s)
		}
	}
	tr, err := exact.NewRBM(r)
	if err != nil {
		t.Fatal(err)
	}
	res := tr.Result()
	if math.Abs(res.LogZ+K-logZ) > 1e-10 {
		t.Errorf("exact log Z + K = %v; brute-force {0,1} log Z = %v", res.LogZ+K, logZ)
	}
	for i := range d {
		if math.Abs(res.Marginals[i][1]-marg[i]) > 1e-12 || math.Abs(res.Marginals[i][0]-(1-marg[i])) > 1e-12 {
			t.Errorf("variable %d: exact marginal %v; brute force P(v=1) = %v", i, res.Marginals[i], marg[i])
		}
		if math.Abs(res.Means[i]-marg[i]) > 1e-12 {
			t.Errorf("variable %d: exact mean %v; want P(v=1) = %v", i, res.Means[i], marg[i])
		}
	}
	// Enumeration, which knows nothing of RBMs, agrees too.
	en, err := exact.NewEnumerated(m, 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	for i := range d {
		if got := en.Result().Means[i]; math.Abs(got-marg[i]) > 1e-12 {
			t.Errorf("variable %d: enumerated mean %v; want %v", i, got, marg[i])
		}
	}
	// Every interface of the model (trackers, relaxation, batches) against
	// its log p*.
	modeltest.Check(t, m, modeltest.Options{Reference: func(z []int) float64 {
		v := make([]float64, d)
		for i, s := range z {
			v[i] = float64(s)
		}
		return binaryLogP(W, b, c, v)
	}})
}

// "units" defaults to spin, names the same RBM as before when "spin", and
// anything else is refused; "random" draws the {0, 1} parameters with
// "binary".
func TestRBMUnits(t *testing.T) {
	spin, err := Parse([]byte(`{"type":"rbm","W":[[0.5,-0.2]],"b":[0.1],"c":[0,0.3]}`))
	if err != nil {
		t.Fatal(err)
	}
	named, err := Parse([]byte(`{"type":"rbm","units":"spin","W":[[0.5,-0.2]],"b":[0.1],"c":[0,0.3]}`))
	if err != nil {
		t.Fatal(err)
	}
	modeltest.ForEachState(spin, func(z []int) {
		if spin.LogProb(z) != named.LogProb(z) {
			t.Errorf("\"units\": \"spin\" differs from the default at %v", z)
		}
	})
	if st := spin.States(0); st[0] != -1 || st[1] != 1 {
		t.Errorf("spin RBM states %v", st)
	}
	if _, err := Parse([]byte(`{"type":"rbm","units":"bits","W":[[0.5]]}`)); err == nil || !strings.Contains(err.Error(), `want "spin"`) {
		t.Errorf("units bits: %v", err)
	}
	m, err := Parse([]byte(`{"type":"rbm","units":"binary","visible":6,"hidden":2,"random":{"w_std":1,"bias_std":0.5,"seed":4}}`))
	if err != nil {
		t.Fatal(err)
	}
	W, b, c, _ := rbm.RandomParams(6, 2, 1, 0.5, 4)
	K := rbm.BinaryOffset(W, b, c)
	modeltest.ForEachState(m, func(z []int) {
		v := make([]float64, 6)
		for i, s := range z {
			v[i] = float64(s)
		}
		if got, want := m.LogProb(z)+K, binaryLogP(W, b, c, v); math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
			t.Errorf("random binary RBM at %v: %v, want %v", z, got, want)
		}
	})
	var _ model.Model = m
}
