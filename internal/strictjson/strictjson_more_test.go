package strictjson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Types for the cases below.

type point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

type nested struct {
	Grid   map[string]map[string]point `json:"grid"`
	Lists  map[string][]point          `json:"lists"`
	Matrix [][]point                   `json:"matrix"`
	Pair   [2]point                    `json:"pair"`
	Ptrs   []*point                    `json:"ptrs"`
	PtrPtr **point                     `json:"pp"`
	Any    any                         `json:"any"`
	Ints   map[int]point               `json:"ints"`
}

// shaped checks its keys against shapedJSON through a value receiver.
type shaped struct{ N int }

type shapedJSON struct {
	Num int `json:"num"`
}

func (shaped) JSONShape() reflect.Type { return reflect.TypeOf(shapedJSON{}) }

func (s *shaped) UnmarshalJSON(b []byte) error {
	var j shapedJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	s.N = j.Num
	return nil
}

// pshaped checks its keys through a pointer receiver, and its shape is
// given as a pointer type.
type pshaped struct{ N int }

func (*pshaped) JSONShape() reflect.Type { return reflect.TypeOf(&shapedJSON{}) }

func (s *pshaped) UnmarshalJSON(b []byte) error {
	var j shapedJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	s.N = j.Num
	return nil
}

type holder struct {
	V  shaped    `json:"v"`
	P  *shaped   `json:"p"`
	S  []shaped  `json:"s"`
	Q  pshaped   `json:"q"`
	QP *pshaped  `json:"qp"`
	QS []pshaped `json:"qs"`
}

// loose decodes itself and is only checked for duplicate keys.
type loose map[string]int

func (l *loose) UnmarshalJSON(b []byte) error {
	m := map[string]int{}
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*l = m
	return nil
}

type withLoose struct {
	L    loose           `json:"l"`
	T    time.Time       `json:"t"`
	Raw  json.RawMessage `json:"raw"`
	RawP *json.RawMessage
}

// Embedding.

type Base struct {
	ID   string `json:"id"`
	Note string `json:"note,omitempty"`
}

type Base2 struct {
	Extra int `json:"extra"`
}

type embedded struct {
	Base
	*Base2
	Own int `json:"own"`
}

type taggedEmbed struct {
	Base `json:"base"`
	Own  int `json:"own"`
}

type deepA struct{ A point }

type deepB struct{ B int }

// shallowFirst declares the shallow X before the embedded struct that has
// another X one level down; encoding/json keeps the shallow one.
type unsignedField struct {
	U uint8 `json:"U"`
}

type shallowFirst struct {
	A int `json:"A"`
	deepA
}

type onlyB struct {
	B int `json:"b"`
}

type deepX struct{ X point }

// shadowStruct's X (an onlyB) hides deepX's X (a point): its keys are
// onlyB's.
type shadowStruct struct {
	X onlyB
	deepX
}

type shallowLast struct {
	deepA
	A int `json:"A"`
}

// Go names that tie: go vet refuses repeated json tags, so the ties
// below are untagged, or one tagged against one untagged.
type conflict1 struct{ Z int }

type conflict2 struct{ Z string }

// ambiguous has two "Z" at the same depth, both untagged: encoding/json
// drops both.
type ambiguous struct {
	conflict1
	conflict2
	K int `json:"k"`
}

type taggedZ struct {
	Z2 int `json:"Z"`
}

// taggedWins has a tagged "Z" and an untagged one at the same depth: the
// tagged one is used.
type taggedWins struct {
	conflict2
	taggedZ
	Q int
}

// selfRef embeds a pointer to itself (a linked structure); encoding/json
// visits each embedded type once.
type selfRef struct {
	*selfRef
	V int `json:"v"`
}

type mutualA struct {
	*mutualB
	A int `json:"a"`
}

type mutualB struct {
	*mutualA
	B int `json:"b"`
}

type tags struct {
	Dash     int `json:"-"`
	DashName int `json:"-,"`
	Renamed  int `json:"renamed"`
	Plain    int
	Omit     int `json:",omitempty"`
	Bad      int `json:"bad\"name"` // not a valid JSON name: encoding/json uses "Bad"
	private  int
	Str      int `json:"str,string"`
}

func TestUnmarshalGood(t *testing.T) {
	cases := []struct {
		name string
		in   string
		v    func() any
		want any
	}{
		{"nested maps", `{"grid": {"r": {"c": {"x": 1, "y": 2}}}}`,
			func() any { return new(nested) },
			&nested{Grid: map[string]map[string]point{"r": {"c": {1, 2}}}}},
		{"map of arrays", `{"lists": {"a": [{"x": 1}, {"y": 2}]}}`,
			func() any { return new(nested) },
			&nested{Lists: map[string][]point{"a": {{X: 1}, {Y: 2}}}}},
		{"array of arrays of structs", `{"matrix": [[{"x": 1}], [], [{"y": 3}, {"x": 4}]]}`,
			func() any { return new(nested) },
			&nested{Matrix: [][]point{{{X: 1}}, {}, {{Y: 3}, {X: 4}}}}},
		{"fixed array", `{"pair": [{"x": 1}, {"y": 2}]}`,
			func() any { return new(nested) },
			&nested{Pair: [2]point{{X: 1}, {Y: 2}}}},
		{"int-keyed map", `{"ints": {"1": {"x": 1}, "2": {"y": 2}}}`,
			func() any { return new(nested) },
			&nested{Ints: map[int]point{1: {X: 1}, 2: {Y: 2}}}},
		{"any holds anything", `{"any": {"Whatever": [1, {"k": null}]}}`,
			func() any { return new(nested) },
			&nested{Any: map[string]any{"Whatever": []any{1.0, map[string]any{"k": nil}}}}},
		{"embedded flattened", `{"id": "a", "note": "n", "extra": 2, "own": 3}`,
			func() any { return new(embedded) },
			&embedded{Base: Base{"a", "n"}, Base2: &Base2{2}, Own: 3}},
		{"tagged embedded is an object", `{"base": {"id": "a"}, "own": 1}`,
			func() any { return new(taggedEmbed) },
			&taggedEmbed{Base: Base{ID: "a"}, Own: 1}},
		{"shallow field hides a deeper one (declared first)", `{"A": 1}`,
			func() any { return new(shallowFirst) },
			&shallowFirst{A: 1}},
		{"shallow field hides a deeper one (declared last)", `{"A": 2}`,
			func() any { return new(shallowLast) },
			&shallowLast{A: 2}},
		{"shallow struct field's keys, not the hidden one's", `{"X": {"b": 1}}`,
			func() any { return new(shadowStruct) },
			&shadowStruct{X: onlyB{1}}},
		{"tagged field wins a tie", `{"Z": 5, "Q": 1}`,
			func() any { return new(taggedWins) },
			&taggedWins{taggedZ: taggedZ{5}, Q: 1}},
		{"self-referencing embedded pointer", `{"v": 1}`,
			func() any { return new(selfRef) },
			&selfRef{V: 1}},
		{"mutually embedded pointers", `{"a": 1}`,
			func() any { return new(mutualA) },
			&mutualA{A: 1}},
		{"tag names", `{"-": 1, "renamed": 2, "Plain": 3, "Omit": 4, "Bad": 5, "str": "6"}`,
			func() any { return new(tags) },
			&tags{DashName: 1, Renamed: 2, Plain: 3, Omit: 4, Bad: 5, Str: 6}},
		{"checker, value receiver, top level", `{"num": 7}`,
			func() any { return new(shaped) },
			&shaped{N: 7}},
		{"checker, pointer receiver, top level", `{"num": 8}`,
			func() any { return new(pshaped) },
			&pshaped{N: 8}},
		{"checkers in fields", `{"v": {"num": 1}, "p": {"num": 2}, "s": [{"num": 3}], "q": {"num": 4}, "qp": {"num": 5}, "qs": [{"num": 6}]}`,
			func() any { return new(holder) },
			func() any {
				two, five := shaped{2}, pshaped{5}
				return &holder{V: shaped{1}, P: &two, S: []shaped{{3}}, Q: pshaped{4}, QP: &five, QS: []pshaped{{6}}}
			}()},
		{"unmarshalers check duplicates only", `{"l": {"Any": 1, "any": 2}, "t": "2024-01-02T03:04:05Z", "raw": {"A": 1, "a": 2}, "RawP": [1]}`,
			func() any { return new(withLoose) },
			func() any {
				raw := json.RawMessage(`[1]`)
				return &withLoose{L: loose{"Any": 1, "any": 2}, T: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), Raw: json.RawMessage(`{"A": 1, "a": 2}`), RawP: &raw}
			}()},
		{"null everywhere", `{"grid": null, "matrix": [null, [null]], "pp": null}`,
			func() any { return new(nested) },
			&nested{Matrix: [][]point{nil, {{}}}}},
		{"pointer to pointer", `{"pp": {"x": 1}}`,
			func() any { return new(nested) },
			func() any { p := &point{X: 1}; return &nested{PtrPtr: &p} }()},
		{"trailing whitespace", "{\"x\": 1}\n\t \n",
			func() any { return new(point) },
			&point{X: 1}},
		{"map at top level", `{"a": {"x": 1}, "A": {"y": 1}}`,
			func() any { return new(map[string]point) },
			&map[string]point{"a": {X: 1}, "A": {Y: 1}}},
		{"slice at top level", `[{"x": 1}, {"y": 2}]`,
			func() any { return new([]point) },
			&[]point{{X: 1}, {Y: 2}}},
		{"scalar", ` 42 `,
			func() any { return new(int) },
			func() any { n := 42; return &n }()},
		{"same key in different objects", `{"grid": {"a": {"p": {"x": 1}}, "b": {"p": {"x": 2}}}}`,
			func() any { return new(nested) },
			&nested{Grid: map[string]map[string]point{"a": {"p": {X: 1}}, "b": {"p": {X: 2}}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := c.v()
			if err := Unmarshal([]byte(c.in), v); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !reflect.DeepEqual(v, c.want) {
				t.Errorf("got %+v, want %+v", v, c.want)
			}
			// encoding/json agrees.
			w := c.v()
			if err := json.Unmarshal([]byte(c.in), w); err != nil {
				t.Errorf("encoding/json: %v", err)
			} else if !reflect.DeepEqual(v, w) {
				t.Errorf("encoding/json decoded %+v, strictjson %+v", w, v)
			}
		})
	}
}

func TestUnmarshalBad(t *testing.T) {
	cases := []struct {
		name string
		in   string
		v    func() any
		want []string // substrings of the error
	}{
		{"duplicate in nested map", `{"grid": {"r": {"c": {"x": 1}, "c": {"x": 2}}}}`,
			func() any { return new(nested) }, []string{`"grid.r.c" appears twice`}},
		{"duplicate outer map key", `{"grid": {"r": {}, "r": {}}}`,
			func() any { return new(nested) }, []string{`"grid.r" appears twice`}},
		{"case mismatch deep in maps", `{"grid": {"r": {"c": {"X": 1}}}}`,
			func() any { return new(nested) }, []string{`"grid.r.c.X" must be spelled "x"`}},
		{"unknown key in map of arrays", `{"lists": {"a": [{"x": 1}, {"z": 2}]}}`,
			func() any { return new(nested) }, []string{`unknown key "lists.a[1].z"`, "want one of x, y"}},
		{"unknown key in array of arrays", `{"matrix": [[{"x": 1}], [{"y": 1}, {"w": 1}]]}`,
			func() any { return new(nested) }, []string{`"matrix[1][1].w"`}},
		{"duplicate in fixed array element", `{"pair": [{"x": 1}, {"y": 1, "y": 2}]}`,
			func() any { return new(nested) }, []string{`"pair[1].y" appears twice`}},
		{"duplicate through pointers", `{"ptrs": [{"x": 1, "x": 1}]}`,
			func() any { return new(nested) }, []string{`"ptrs[0].x" appears twice`}},
		{"case through pointer to pointer", `{"pp": {"Y": 1}}`,
			func() any { return new(nested) }, []string{`"pp.Y" must be spelled "y"`}},
		{"duplicate inside any", `{"any": {"k": 1, "k": 2}}`,
			func() any { return new(nested) }, []string{`"any.k" appears twice`}},
		{"duplicate inside array inside any", `{"any": [{"k": 1, "k": 2}]}`,
			func() any { return new(nested) }, []string{`"any[0].k" appears twice`}},
		{"duplicate via escape", `{"x": 1, "\u0078": 2}`,
			func() any { return new(point) }, []string{`"x" appears twice`}},
		{"unknown key lists allowed names sorted", `{"q": 1}`,
			func() any { return new(nested) }, []string{`unknown key "q"; want one of any, grid, ints, lists, matrix, pair, pp, ptrs`}},
		{"embedded field misspelled", `{"ID": "a"}`,
			func() any { return new(embedded) }, []string{`"ID" must be spelled "id"`}},
		{"embedded struct name is not a key", `{"Base": {"id": "a"}}`,
			func() any { return new(embedded) }, []string{`unknown key "Base"`}},
		{"tagged embedded fields are not flattened", `{"id": "a"}`,
			func() any { return new(taggedEmbed) }, []string{`unknown key "id"`}},
		{"tagged embedded object checked", `{"base": {"Id": "a"}}`,
			func() any { return new(taggedEmbed) }, []string{`"base.Id" must be spelled "id"`}},
		{"hidden deeper field's shape not used", `{"A": {"X": 1}}`,
			func() any { return new(shallowFirst) }, []string{"A is a JSON object; want a whole number in range"}},
		// A whole number written with a decimal point or an exponent:
		// the message shows it in plain digits.
		{"whole number as 3.0", `{"A": 3.0}`,
			func() any { return new(shallowFirst) }, []string{"A is the JSON number 3.0; want a whole number in plain digits (3)"}},
		{"whole number as 1e3", `{"A": 1e3}`,
			func() any { return new(shallowFirst) }, []string{"A is the JSON number 1e3; want a whole number in plain digits (1000)"}},
		{"negative for an unsigned number", `{"U": -1}`,
			func() any { return new(unsignedField) }, []string{"U is a JSON number -1; want a whole number in range"}},
		{"whole but out of range, written 3e2", `{"U": 3e2}`,
			func() any { return new(unsignedField) }, []string{"U is a JSON number 3e2; want a whole number in range"}},
		{"fraction for a whole number", `{"A": 3.5}`,
			func() any { return new(shallowFirst) }, []string{"A is a JSON number 3.5; want a whole number in range"}},
		{"ambiguous embedded names are unknown", `{"Z": 1}`,
			func() any { return new(ambiguous) }, []string{`unknown key "Z"; want one of k`}},
		{"self reference: unknown key", `{"w": 1}`,
			func() any { return new(selfRef) }, []string{`unknown key "w"; want one of v`}},
		{"json:\"-\" field is unknown", `{"Dash": 1}`,
			func() any { return new(tags) }, []string{`unknown key "Dash"`}},
		{"unexported field is unknown", `{"private": 1}`,
			func() any { return new(tags) }, []string{`unknown key "private"`}},
		{"renamed field's Go name is unknown", `{"Renamed": 1}`,
			func() any { return new(tags) }, []string{`"Renamed" must be spelled "renamed"`}},
		{"invalid tag name is not used", `{"bad\"name": 1}`,
			func() any { return new(tags) }, []string{`unknown key "bad\"name"`}},
		{"checker value receiver: wrong key", `{"N": 1}`,
			func() any { return new(shaped) }, []string{`unknown key "N"; want one of num`}},
		{"checker value receiver: case", `{"Num": 1}`,
			func() any { return new(shaped) }, []string{`"Num" must be spelled "num"`}},
		{"checker pointer receiver with pointer shape", `{"NUM": 1}`,
			func() any { return new(pshaped) }, []string{`"NUM" must be spelled "num"`}},
		{"checker in slice", `{"s": [{"num": 1}, {"n": 1}]}`,
			func() any { return new(holder) }, []string{`unknown key "s[1].n"`}},
		{"checker behind pointer field", `{"p": {"num": 1, "num": 2}}`,
			func() any { return new(holder) }, []string{`"p.num" appears twice`}},
		{"checker pointer receiver in slice", `{"qs": [{"nu": 1}]}`,
			func() any { return new(holder) }, []string{`unknown key "qs[0].nu"`}},
		{"unmarshaler duplicate", `{"l": {"a": 1, "a": 2}}`,
			func() any { return new(withLoose) }, []string{`"l.a" appears twice`}},
		{"raw message duplicate deep", `{"raw": [{"a": {"b": 1, "b": 1}}]}`,
			func() any { return new(withLoose) }, []string{`"raw[0].a.b" appears twice`}},
		{"text unmarshaler refuses object", `{"t": {"a": 1}}`,
			func() any { return new(withLoose) }, []string{"t"}},
		{"top-level map duplicate", `{"a": {}, "a": {}}`,
			func() any { return new(map[string]point) }, []string{`"a" appears twice`}},
		{"top-level slice element", `[{"x": 1}, {"X": 1}]`,
			func() any { return new([]point) }, []string{`"[1].X" must be spelled "x"`}},
		{"type error names the field and position", "{\n  \"x\": \"one\"\n}",
			func() any { return new(point) }, []string{"line 2, column", "x is a JSON string; want a finite number"}},
		{"whole number wanted", `{"ints": {"1": {"x": 1}}, "pp": 1}`,
			func() any { return new(nested) }, []string{"pp is a JSON number; want an object"}},
		{"int map key not a number", `{"ints": {"one": {}}}`,
			func() any { return new(nested) }, nil},
		{"position of a duplicate", "{\n\"x\": 1,\n\"x\": 2}",
			func() any { return new(point) }, []string{"line 3, column", `"x" appears twice`}},
		{"position of an unknown key", "{\"x\": 1,\n   \"w\": 2}",
			func() any { return new(point) }, []string{"line 2, column 7"}},
		{"syntax error position", "{\"x\": 1,\n  \"y\" 2}",
			func() any { return new(point) }, []string{"line 2, column", "invalid character"}},
		{"trailing value", `{"x": 1} {"y": 2}`,
			func() any { return new(point) }, []string{"more than one JSON value"}},
		{"trailing scalar", `{"x": 1} 5`,
			func() any { return new(point) }, []string{"more than one JSON value"}},
		{"trailing close bracket", `{"x": 1} ]`,
			func() any { return new(point) }, []string{"unexpected data after the JSON value"}},
		{"trailing close brace", `{"x": 1}}`,
			func() any { return new(point) }, []string{"unexpected data after the JSON value"}},
		{"trailing garbage", `{"x": 1}x`,
			func() any { return new(point) }, nil},
		{"empty", ``,
			func() any { return new(point) }, []string{"ends early"}},
		{"only whitespace", " \n ",
			func() any { return new(point) }, []string{"line 2: the JSON ends early"}},
		{"cut in an array", `{"matrix": [[{"x": 1}`,
			func() any { return new(nested) }, []string{"ends early"}},
		{"overflow", `{"x": 1e400}`,
			func() any { return new(point) }, []string{"x"}},
		{"not a pointer", `{"x": 1}`,
			func() any { return point{} }, []string{"non-pointer"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Unmarshal([]byte(c.in), c.v())
			if err == nil {
				t.Fatalf("no error for %s", c.in)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestCheckerReceivers: a value-receiver JSONShape must not be called on a
// nil pointer (Unmarshal(data, &v) has type *T, which has the method too).
func TestCheckerReceivers(t *testing.T) {
	for _, v := range []any{new(shaped), new(*shaped), new(pshaped), new(*pshaped), new([]*shaped)} {
		in := `{"num": 1, "num": 2}`
		if reflect.TypeOf(v).Elem().Kind() == reflect.Slice {
			in = "[" + in + "]"
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%T: panic %v", v, r)
				}
			}()
			err := Unmarshal([]byte(in), v)
			if err == nil || !strings.Contains(err.Error(), "appears twice") {
				t.Errorf("%T: got %v, want a duplicate key error", v, err)
			}
		}()
	}
}

// checkerIface is an interface that embeds Checker: a field of this type
// must not make the checker call a method on a nil interface.
type checkerIface interface {
	Checker
	Foo()
}

func TestCheckerInterfaceField(t *testing.T) {
	var v struct {
		C checkerIface `json:"c"`
	}
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v", r)
		}
	}()
	if err := Check([]byte(`{"c": {"a": 1, "a": 2}}`), reflect.TypeOf(&v)); err == nil || !strings.Contains(err.Error(), "appears twice") {
		t.Errorf("got %v, want a duplicate key error", err)
	}
}

func TestCheck(t *testing.T) {
	typ := reflect.TypeOf(point{})
	if err := Check([]byte(`{"x": 1, "y": "not checked here"}`), typ); err != nil {
		t.Errorf("Check checks keys only: %v", err)
	}
	if err := Check([]byte(`{"x": 1, "x": 1}`), typ); err == nil {
		t.Error("duplicate not reported")
	}
	if err := Check([]byte(`{"X": 1}`), nil); err != nil {
		t.Errorf("nil type means any shape: %v", err)
	}
	if err := Check([]byte(`{"X": 1, "X": 1}`), nil); err == nil {
		t.Error("nil type: duplicate not reported")
	}
	var p point
	if err := Check([]byte(`{"x": 1}`), reflect.TypeOf(&p)); err != nil {
		t.Error(err)
	}
	if p != (point{}) {
		t.Error("Check decoded")
	}
}

// TestUnmarshalNoPartialState: an error from the key check comes before
// anything is decoded into v.
func TestUnmarshalNoPartialState(t *testing.T) {
	p := point{X: 9, Y: 9}
	if err := Unmarshal([]byte(`{"x": 1, "y": 2, "z": 3}`), &p); err == nil {
		t.Fatal("no error")
	}
	if p != (point{9, 9}) {
		t.Errorf("v changed to %+v", p)
	}
}
