package strictjson

import (
	"encoding/json"
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
