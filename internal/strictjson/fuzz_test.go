package strictjson

import (
	"encoding/json"
	"reflect"
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

// FuzzUnmarshal: Unmarshal never panics, and whatever it accepts
// encoding/json accepts too, with the same result.
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
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got fuzzTarget
		if err := Unmarshal(data, &got); err != nil {
			if err.Error() == "" {
				t.Errorf("empty error message for %q", data)
			}
			return
		}
		var want fuzzTarget
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("strictjson accepted %q but encoding/json says %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: strictjson decoded %+v, encoding/json %+v", data, got, want)
		}
	})
}
