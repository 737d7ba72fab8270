package sampler_test

import (
	"encoding/json"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/dstein/dstein/sampler"
	_ "github.com/dstein/dstein/sampler/all" // the registry: methods and their settings
)

// allocated returns the bytes that f allocates (garbage included).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// pipelineAllocBound is the most that parsing a pipeline file of n bytes
// may allocate, garbage included. A file is decoded three times (the key
// check, the decode, each stage's settings again through Stage's
// UnmarshalJSON) at about 170 bytes a byte of input at most each
// (internal/strictjson's measure), so 1024 a byte, plus 1 MiB for fixed
// costs (reflection caches, buffers, the registry's "did you mean"). Costs
// quadratic in the depth or a size read from the file and allocated fail it.
func pipelineAllocBound(n int) uint64 { return 1024*uint64(n) + 1<<20 }

// FuzzParsePipeline: ParsePipeline never panics, allocates at most
// pipelineAllocBound, returns one-line errors, and a pipeline it accepts
// validates, has a finite initial draw with a spread > 0 once resolved,
// and reads back the same from its resolved JSON (what `dstein methods
// --pipeline` writes).
func FuzzParsePipeline(f *testing.F) {
	for _, s := range []string{
		`{"stages":[{"method":"gibbs"}]}`,
		`{"name":"x","description":"d","init":{"mean":-1,"std":2},"stages":[{"method":"gfsvgd","iters":100,"settings":{"learning_rate":0.3}},{"method":"gibbs","iters":30,"settings":{"stratified":true}}]}`,
		`{"stages":[{"method":"pt","settings":{"ladder":4,"beta_min":0.1,"tune":-1}},{"method":"exact"}]}`,
		`{"stages":[{"method":"dhmc","settings":null}]}`,
		`{"init":{"std":0},"stages":[{"method":"gibbs"}]}`,
		`{"init":{"std":-0},"stages":[{"method":"gibbs"}]}`,
		`{"init":{"std":null},"stages":[{"method":"gibbs"}]}`,
		"\ufeff{\"stages\":[{\"method\":\"mh\"}]}",
		`{"stages":[{"method":"gibs"}]}`,
		`{"stages":[{"method":"gibbs","settings":{"scan":"auto","scan":"block"}}]}`,
		`{"stages":[{"method":"gibbs","iters":9223372036854775807}]}`,
		`{"stages":[{"method":"gibbs","iters":18446744073709551616}]}`,
		`{"stages":[{"method":"gibbs","iters":-9223372036854775808}]}`,
		`{"stages":[{"method":"pt","settings":{"ladder":1000000000000}}]}`,
		`{"init":{"mean":1e308,"std":1e308},"stages":[{"method":"gibbs"}]}`,
		`{"init":{"mean":-1e308,"std":4.9e-324},"stages":[{"method":"gibbs"}]}`,
		`{"init":{"mean":1e999},"stages":[{"method":"gibbs"}]}`,
		`{"init":{"mean":-0,"std":0.` + strings.Repeat("0", 300) + `1},"stages":[{"method":"gibbs"}]}`,
		`{"stages":[{"method":"gibbs","iters":` + strings.Repeat("9", 300) + `}]}`,
		`{"stages":[{"method":"` + strings.Repeat("g", 1000) + `"}]}`,
	} {
		f.Add([]byte(s))
	}
	// Deep nesting in each place a value goes: 10 and 100 levels reach
	// the decoder's type errors, 100,000 are refused by the depth scan.
	for _, depth := range []int{10, 100, 100000} {
		arrays := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		objects := strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
		f.Add([]byte(arrays))
		f.Add([]byte(`{"stages":[{"method":"gibbs","settings":` + objects + `}]}`))
		if depth < 1000 {
			f.Add([]byte(`{"init":` + objects + `,"stages":[{"method":"gibbs"}]}`))
			f.Add([]byte(`{"stages":` + arrays + `}`))
			f.Add([]byte(`{"stages":[{"method":"pt","settings":{"ladder":` + arrays + `}}]}`))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p sampler.Pipeline
		var err error
		if n := allocated(func() { p, err = sampler.ParsePipeline(data) }); n > pipelineAllocBound(len(data)) {
			t.Fatalf("ParsePipeline of %d bytes allocated %d bytes; want at most %d", len(data), n, pipelineAllocBound(len(data)))
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("accepted a pipeline that does not validate: %v", err)
		}
		r := p.Resolved()
		if !(r.Init.Std > 0) || math.IsInf(r.Init.Std, 0) || math.IsNaN(r.Init.Mean) || math.IsInf(r.Init.Mean, 0) {
			t.Fatalf("initial draw N(%v, %v²)", r.Init.Mean, r.Init.Std)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("the resolved pipeline does not marshal: %v", err)
		}
		back, err := sampler.ParsePipeline(b)
		if err != nil {
			t.Fatalf("the resolved pipeline %s does not read back: %v", b, err)
		}
		if !reflect.DeepEqual(back.Resolved(), r) {
			t.Fatalf("round trip: %+v became %+v", r, back.Resolved())
		}
	})
}
