package strictjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

type fuzzInner struct {
	E bool    `json:"e"`
	F float64 `json:"f,omitempty"`
}

type fuzzTarget struct {
	A int                  `json:"a"`
	B []string             `json:"b"`
	C map[string]fuzzInner `json:"c"`
	D *fuzzInner           `json:"d"`
	R json.RawMessage      `json:"r"`
	I any                  `json:"i"`
	fuzzEmbedded
}

type fuzzEmbedded struct {
	G [2]int `json:"g"`
}

// fuzzAllocBound is the most that one Unmarshal of n bytes may allocate,
// garbage included: about 170 bytes a byte of input was the most measured
// (a long array of one-digit numbers, each a token of the key check and a
// value of the decoder), so 512 a byte leaves room, plus 1 MiB for the
// fixed costs (reflection caches, buffers, an error). A cost quadratic in
// the depth (152 MB for 20 KB of nested arrays before the fix) fails it.
func fuzzAllocBound(n int) uint64 { return 512*uint64(n) + 1<<20 }

// FuzzUnmarshal: Unmarshal never panics, allocates at most fuzzAllocBound,
// and whatever it accepts encoding/json accepts too (after a leading byte
// order mark, which encoding/json refuses), with the same result.
func FuzzUnmarshal(f *testing.F) {
	for _, seed := range []string{
		`{"a": 1, "b": ["x"], "c": {"k": {"e": true, "f": 1.5}}, "d": {"e": false}, "r": {"A": 1}, "i": [1, "s", null], "g": [1, 2]}`,
		`{"a": 1, "a": 2}`,
		`{"A": 1}`,
		`{"c": {"k": {"E": true}}}`,
		`{"z": 1}`,
		`{} {}`,
		`{"b": [`,
		"{\n\"d\": {\"e\": \"no\"}\n}",
		`null`,
		`[]`,
		`{"r": {"x": 1, "x": 2}}`,
		`{"i": {"\u0061": 1, "a": 2}}`,
		`{"a": 1e400}`,
		`{"g": [1, 2, 3]}`,
		"\ufeff{\"a\": 1}",
		"\ufeff\ufeff{}",
		`{"a": 9223372036854775807}`,
		`{"a": 9223372036854775808}`,
		`{"a": 18446744073709551616}`,
		`{"a": -0, "d": {"f": -0}}`,
		`{"d": {"f": 1e308}}`,
		`{"d": {"f": -1e308}}`,
		`{"d": {"f": 1e999}}`,
		`{"d": {"f": 4.9e-324}}`,
		`{"d": {"f": 1e-999}}`,
		`{"a": 1000000000000}`,
		`{"a": ` + strings.Repeat("9", 400) + `}`,
		`{"d": {"f": 0.` + strings.Repeat("1", 400) + `}}`,
		`{"i": ` + strings.Repeat("1", 400) + `e-400}`,
	} {
		f.Add([]byte(seed))
	}
	// Deep nesting: 10 and 100 levels are accepted, 100,000 refused (a
	// scan of 200 KB that allocates nothing), in every slot of the type.
	for _, depth := range []int{10, 100, 100000} {
		arrays := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		objects := strings.Repeat(`{"k":`, depth) + "1" + strings.Repeat("}", depth)
		f.Add([]byte(arrays))
		f.Add([]byte(`{"i": ` + arrays + `}`))
		f.Add([]byte(`{"r": ` + objects + `}`))
		if depth < 1000 {
			f.Add([]byte(`{"b": ` + arrays + `}`))
			f.Add([]byte(`{"c": {"x": ` + objects + `}}`))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got fuzzTarget
		var err error
		if n := allocated(func() { err = Unmarshal(data, &got) }); n > fuzzAllocBound(len(data)) {
			t.Fatalf("Unmarshal of %d bytes allocated %d bytes; want at most %d", len(data), n, fuzzAllocBound(len(data)))
		}
		if err != nil {
			if err.Error() == "" || strings.Contains(err.Error(), "\n") {
				t.Errorf("error message %q for %q; want one line", err, data)
			}
			return
		}
		var want fuzzTarget
		if err := json.Unmarshal(bytes.TrimPrefix(data, []byte("\ufeff")), &want); err != nil {
			t.Fatalf("strictjson accepted %q but encoding/json says %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: strictjson decoded %+v, encoding/json %+v", data, got, want)
		}
	})
}
