package strictjson

import (
	"encoding/json"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

type inner struct {
	A float64 `json:"a"`
}

type outer struct {
	Name  string            `json:"name"`
	In    inner             `json:"in"`
	List  []inner           `json:"list"`
	Map   map[string]inner  `json:"map"`
	Raw   json.RawMessage   `json:"raw"`
	Ptr   *inner            `json:"ptr"`
	Extra map[string]string `json:"extra,omitempty"`
}

func TestUnmarshal(t *testing.T) {
	good := `{"name": "x", "in": {"a": 1}, "list": [{"a": 2}], "map": {"k": {"a": 3}}, "raw": {"A": 1, "B": 2}, "ptr": {"a": 4}}`
	var o outer
	if err := Unmarshal([]byte(good), &o); err != nil {
		t.Fatal(err)
	}
	if o.In.A != 1 || o.List[0].A != 2 || o.Map["k"].A != 3 || o.Ptr.A != 4 {
		t.Errorf("decoded %+v", o)
	}
	bad := map[string]string{
		`{"name": "x", "Name": "y"}`:     `must be spelled "name"`,
		`{"name": "x", "name": "y"}`:     `appears twice`,
		`{"in": {"a": 1, "a": 2}}`:       `"in.a" appears twice`,
		`{"in": {"A": 1}}`:               `"in.A" must be spelled "a"`,
		`{"list": [{"a": 1}, {"b": 1}]}`: `unknown key "list[1].b"`,
		`{"map": {"k": 1, "k": 2}}`:      `appears twice`,
		`{"nme": 1}`:                     `unknown key "nme"`,
		`{"raw": {"A": 1, "A": 2}}`:      `"raw.A" appears twice`,
		`{"in": {"a": 1e999}}`:           `in.a`,
		"{\n\"in\": {\"a\": \"x\"}}":     `line 2`,
		`{"name": "x"} {}`:               `more than one`,
		`{"name": "x"`:                   `ends early`,
		`{"in": {"a": 1}`:                `ends early`,
	}
	for in, want := range bad {
		var o outer
		err := Unmarshal([]byte(in), &o)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", in, err, want)
		}
	}
}

// allocated returns the bytes that f allocates (garbage included).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func deepArrays(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// rec is a recursive type: its keys are checked at every depth.
type rec struct {
	A *rec `json:"a"`
	B int  `json:"b"`
}

func deepObjects(n int, inner string) string {
	return strings.Repeat(`{"a":`, n-1) + "{" + inner + "}" + strings.Repeat("}", n-1)
}

// Nesting is bounded by MaxDepth before anything is decoded, with an error
// naming the line and column of the first bracket too deep; brackets inside
// strings do not count.
func TestDepthLimit(t *testing.T) {
	var v any
	if err := Unmarshal([]byte(deepArrays(MaxDepth)), &v); err != nil {
		t.Errorf("depth %d: %v", MaxDepth, err)
	}
	var r rec
	if err := Unmarshal([]byte(deepObjects(MaxDepth, `"b":1`)), &r); err != nil {
		t.Errorf("objects of depth %d: %v", MaxDepth, err)
	}
	for in, want := range map[string]string{
		deepArrays(MaxDepth + 1):                  "line 1, column 1001: arrays and objects nest more than 1000 deep; want at most 1000 levels",
		"{\n\"x\": " + deepArrays(100000):         "line 2, column 1005: ",
		deepObjects(MaxDepth+1, ""):               "line 1, column 5001: ",
		`{"s": "` + deepArrays(5000) + `"}]]]`:    "unexpected data after the JSON value",
		`["\"` + strings.Repeat("[", 2000) + `"]`: "",
	} {
		var v any
		err := Unmarshal([]byte(in), &v)
		if want == "" {
			if err != nil {
				t.Errorf("%.40s…: %v", in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40s…: got %v, want an error containing %q", in, err, want)
		}
		if err := Check([]byte(in), nil); strings.HasPrefix(want, "line") && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("Check(%.40s…): got %v, want an error containing %q", in, err, want)
		}
	}
}

// The cost of a deep file is linear in its size: the key paths of errors
// are built only for an error (they used to be built at every level,
// quadratic in the depth: 152 MB for 20 KB of nested arrays), and a file
// too deep is refused by a scan that allocates nothing.
func TestDeepCostLinear(t *testing.T) {
	for _, in := range []string{
		deepArrays(MaxDepth),
		deepObjects(MaxDepth, `"b":1`),
		deepObjects(MaxDepth, `"c":1`), // unknown key at the bottom: one path of 1000 steps
		deepObjects(MaxDepth, `"b":1,"b":2`),
		deepArrays(100000),
		deepObjects(100000, ""),
	} {
		var r rec
		var v any
		n := allocated(func() {
			Unmarshal([]byte(in), &v)
			Unmarshal([]byte(in), &r)
		})
		// Decoding into any costs about 100 bytes a byte of input at
		// most; 256 leaves room.
		if bound := 256*uint64(len(in)) + 1<<16; n > bound {
			t.Errorf("%.20s… (%d bytes): allocated %d bytes; want at most %d", in, len(in), n, bound)
		}
	}
	in := []byte(deepArrays(100000))
	var v any
	if n := allocated(func() { Unmarshal(in, &v) }); n > 4096 {
		t.Errorf("refusing %d bytes too deep allocated %d bytes; want none beyond the error", len(in), n)
	}
}

// A leading UTF-8 byte order mark is ignored (RFC 8259 §8.1 allows it), and
// positions count from after it; one anywhere else is an error.
func TestBOM(t *testing.T) {
	var o outer
	if err := Unmarshal([]byte("\ufeff{\"name\": \"x\"}"), &o); err != nil || o.Name != "x" {
		t.Errorf("with a BOM: %+v, %v", o, err)
	}
	err := Unmarshal([]byte("\ufeff{\"name\": 1, \"name\": 2}"), &o)
	plain := Unmarshal([]byte("{\"name\": 1, \"name\": 2}"), &o)
	if err == nil || plain == nil || err.Error() != plain.Error() {
		t.Errorf("with a BOM: %v; without: %v", err, plain)
	}
	if err := Check([]byte("\ufeff{\"name\": 1}"), reflect.TypeOf(o)); err != nil {
		t.Errorf("Check with a BOM: %v", err)
	}
	for _, in := range []string{"{\"name\": \"x\"}\ufeff", "\ufeff\ufeff{}", " \ufeff{}"} {
		if err := Unmarshal([]byte(in), &o); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}
