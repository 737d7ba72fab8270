package modelfile

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
)

// allocated returns the bytes that f allocates (garbage included).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// fuzzBudget is the budget of the fuzz test: room for models of 4 MiB
// beyond memlimit.Base, small enough that a model at the limit builds in
// milliseconds.
var fuzzBudget = memlimit.Budget{Limit: memlimit.Base + 4<<20}

// fuzzAllocBound is the most that ParseLimit(data, b) may allocate,
// garbage included: reading the JSON costs at most about 170 bytes a byte
// of input (internal/strictjson's measure, for the key check and the
// decode; 512 leaves room), building the model at most allocPerPeak times
// its peak estimate, which the budget holds to b.Limit − memlimit.Base (see
// allocPerPeak), and 1 MiB covers fixed costs (reflection caches, buffers,
// an error). A count in a file that sizes an allocation before it is
// checked against the budget fails it.
func fuzzAllocBound(n int, b memlimit.Budget) uint64 {
	return 512*uint64(n) + 1<<20 + allocPerPeak*uint64(b.Limit-memlimit.Base)
}

// FuzzParse feeds arbitrary bytes to the JSON model loader with a small
// memory budget: it must return a model or a one-line error, never panic,
// never allocate more than fuzzAllocBound, and a model it returns must give
// finite or −Inf log-probabilities (never NaN or +Inf) at its
// all-first-states and all-last-states configurations. Parse (the default
// budget, far larger) must then agree: the budget changes only whether a
// model is refused for its memory.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"type":"ising","grid":{"rows":3,"cols":3},"coupling":0.3,"field":0.1}`,
		`{"type":"ising","complete":{"n":4},"coupling":-0.2,"random":{"field_range":0.5,"seed":3}}`,
		`{"type":"ising","n":3,"edges":[[0,1,0.5],[1,2,-0.4]],"fields":[0.1,0,-0.2],"temperature":2}`,
		`{"type":"potts","q":3,"grid":{"rows":5,"cols":5,"periodic":true},"coupling":1.0,"states":["red","green","blue"]}`,
		`{"type":"potts","q":4,"n":3,"edges":[[0,1],[1,2,-0.4]],"coupling":0.5,"fields":[[0.1,0,0,0],[0,0.2,0,0],[0,0,0,-0.3]],"temperature":2}`,
		`{"type":"potts","q":2,"grid":{"rows":2,"cols":1,"periodic":true},"coupling":-1,"field":[0.5,0]}`,
		`{"type":"potts","q":9223372036854775807,"grid":{"rows":3,"cols":3},"coupling":1}`,
		`{"type":"potts","q":3,"n":2,"edges":[[0,1e308]],"coupling":1e308,"field":[1e308,0,0]}`,
		`{"type":"rbm","W":[[0.1,-0.2],[0.3,0.4],[0,1]],"b":[0,0.5,-1],"c":[0.2,0]}`,
		`{"type":"rbm","visible":5,"hidden":2,"random":{"w_std":0.5,"bias_std":1,"seed":2}}`,
		`{"type":"rbm","units":"binary","visible":3,"hidden":0,"random":{"w_std":0.5,"bias_std":1,"seed":2}}`,
		`{"type":"categorical","variables":[{"states":[-1,0,1],"probs":[0.2,0.3,0.5]},{"states":[0,1],"probs":[0,1]}]}`,
		`{"type":"ising","grid":{"rows":100000,"cols":100000},"coupling":1}`,
		`{"type":"ising","grid":{"rows":100,"cols":100},"coupling":1}`,
		`{"type":"ising","complete":{"n":300},"coupling":1}`,
		`{"type":"ising","n":2,"edges":[[0,1,1e308]]}`,
		`{"type":"ising","coupling":0.1,"Coupling":3}`,
		"\ufeff{\"type\":\"ising\",\"grid\":{\"rows\":2,\"cols\":2},\"coupling\":1}",
		"\ufeff\ufeff{\"type\":\"ising\"}",
		// Huge and odd numbers where counts, indices and values go.
		`{"type":"ising","grid":{"rows":9223372036854775807,"cols":9223372036854775807},"coupling":1}`,
		`{"type":"ising","grid":{"rows":18446744073709551616,"cols":1},"coupling":1}`,
		`{"type":"ising","complete":{"n":1000000000000},"coupling":1}`,
		`{"type":"ising","n":1000000000000,"edges":[]}`,
		`{"type":"ising","n":9223372036854775807,"edges":[],"field":1}`,
		`{"type":"ising","n":2,"edges":[[0,1e308,1]]}`,
		`{"type":"ising","n":2,"edges":[[-0,1,-0]]}`,
		`{"type":"ising","n":2,"edges":[[0,9223372036854775807,1]]}`,
		`{"type":"ising","n":2,"edges":[[0,18446744073709551616,1]]}`,
		`{"type":"ising","n":2,"edges":[[0,1,1e999]]}`,
		`{"type":"ising","n":2,"edges":[[0,1,1]],"temperature":1e-308}`,
		`{"type":"ising","n":2,"edges":[],"field":1e308}`,
		`{"type":"ising","n":2,"edges":[],"random":{"field_range":1e308,"seed":18446744073709551615}}`,
		`{"type":"rbm","visible":1000000000000,"hidden":1000000000000,"random":{"w_std":1,"bias_std":1,"seed":1}}`,
		`{"type":"rbm","visible":9223372036854775807,"hidden":0,"random":{"w_std":1,"bias_std":1,"seed":1}}`,
		`{"type":"rbm","visible":2,"hidden":1,"random":{"w_std":1e308,"bias_std":-0,"seed":1}}`,
		`{"type":"categorical","variables":[{"states":[0,-0],"probs":[0.5,0.5]}]}`,
		`{"type":"categorical","variables":[{"states":[1e308,-1e308],"probs":[0.` + strings.Repeat("4", 300) + `,0.` + strings.Repeat("5", 300) + `]}]}`,
		`{"type":"categorical","variables":[{"states":[` + strings.Repeat("9", 400) + `],"probs":[1]}]}`,
	} {
		f.Add([]byte(s))
	}
	// Deep nesting where values go: 10 and 100 levels reach the decoder's
	// type errors, 100,000 are refused by the depth scan.
	for _, depth := range []int{10, 100, 100000} {
		arrays := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		objects := strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
		f.Add([]byte(arrays))
		f.Add([]byte(`{"type":"ising","n":2,"edges":` + arrays + `}`))
		f.Add([]byte(`{"type":` + objects + `}`))
		if depth < 1000 {
			f.Add([]byte(`{"type":"rbm","random":` + objects + `}`))
			f.Add([]byte(`{"type":"categorical","variables":` + arrays + `}`))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var err error
		var m model.Model
		if n := allocated(func() { m, err = ParseLimit(data, fuzzBudget) }); n > fuzzAllocBound(len(data), fuzzBudget) {
			t.Fatalf("ParseLimit of %d bytes allocated %d bytes; want at most %d", len(data), n, fuzzAllocBound(len(data), fuzzBudget))
		}
		var ex *memlimit.Exceeded
		if errors.As(err, &ex) {
			return
		}
		// Within the small budget, Parse's larger one changes nothing.
		if m2, err2 := Parse(data); (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() || err == nil && m2.Dim() != m.Dim() {
			t.Fatalf("ParseLimit: %v; Parse: %v", err, err2)
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
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
