package modelfile

import (
	"math"
	"testing"

	"github.com/dstein/dstein/internal/memlimit"
)

// FuzzParse feeds arbitrary bytes to the JSON model loader with a small
// memory budget: it must return a model or an error, never panic, never
// exceed the budget's estimate, and a model it returns must give finite or
// −Inf log-probabilities (never NaN or +Inf) at its all-first-states and
// all-last-states configurations.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"type":"ising","grid":{"rows":3,"cols":3},"coupling":0.3,"field":0.1}`,
		`{"type":"ising","complete":{"n":4},"coupling":-0.2,"random":{"field_range":0.5,"seed":3}}`,
		`{"type":"ising","n":3,"edges":[[0,1,0.5],[1,2,-0.4]],"fields":[0.1,0,-0.2],"temperature":2}`,
		`{"type":"rbm","W":[[0.1,-0.2],[0.3,0.4],[0,1]],"b":[0,0.5,-1],"c":[0.2,0]}`,
		`{"type":"rbm","visible":5,"hidden":2,"random":{"w_std":0.5,"bias_std":1,"seed":2}}`,
		`{"type":"categorical","variables":[{"states":[-1,0,1],"probs":[0.2,0.3,0.5]},{"states":[0,1],"probs":[0,1]}]}`,
		`{"type":"ising","grid":{"rows":100000,"cols":100000},"coupling":1}`,
		`{"type":"ising","n":2,"edges":[[0,1,1e308]]}`,
		`{"type":"ising","coupling":0.1,"Coupling":3}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseLimit(data, memlimit.Budget{Limit: 64 << 20})
		if err != nil {
			return
		}
		d := m.Dim()
		if d < 1 {
			t.Fatalf("model with %d variables", d)
		}
		if d > 1<<20 {
			return // valid but too large to probe quickly
		}
		z := make([]int, d)
		for _, last := range []bool{false, true} {
			for i := range z {
				z[i] = 0
				if last {
					z[i] = len(m.States(i)) - 1
				}
			}
			lp := m.LogProb(z)
			if math.IsNaN(lp) || math.IsInf(lp, 1) {
				t.Fatalf("log p* = %v at %v", lp, z)
			}
		}
	})
}
