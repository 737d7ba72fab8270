package modelfile

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/modeltest"
	"github.com/dstein/dstein/model/potts"
)

// sameModel reports whether two models give the same log p* at every state.
func sameModel(t *testing.T, name string, got model.Model, want *potts.Potts) {
	t.Helper()
	if got.Dim() != want.Dim() {
		t.Fatalf("%s: %d variables; want %d", name, got.Dim(), want.Dim())
	}
	modeltest.ForEachState(want, func(z []int) {
		if a, b := got.LogProb(z), want.LogProb(z); a != b {
			t.Fatalf("%s: log p*(%v) = %v; want %v", name, z, a, b)
		}
	})
}

func TestPottsFiles(t *testing.T) {
	m, err := Load("../../examples/potts5-torus.json")
	if err != nil {
		t.Fatal(err)
	}
	p, ok := m.(*potts.Potts)
	if !ok {
		t.Fatalf("the example loads as %T", m)
	}
	if r, c, per, ok := p.GridShape(); r != 5 || c != 5 || !per || !ok || p.Q() != 3 || len(p.Edges()) != 50 || p.Edges()[0].Coupling != 1 {
		t.Errorf("the example: %d×%d periodic %v (%v), q = %d, %d edges", r, c, per, ok, p.Q(), len(p.Edges()))
	}
	if !slices.Equal(p.StateNames(0), []string{"red", "green", "blue"}) || slices.ContainsFunc(p.Fields(), func(h float64) bool { return h != 0 }) {
		t.Errorf("the example: names %v, fields %v", p.StateNames(0), p.Fields())
	}

	grid, _ := potts.Grid(2, 3, false, 3, 0.5, []float64{0.1, -0.2, 0.3, 0.1, -0.2, 0.3, 0.1, -0.2, 0.3, 0.1, -0.2, 0.3, 0.1, -0.2, 0.3, 0.1, -0.2, 0.3})
	edges := []potts.Edge{{I: 0, J: 1, Coupling: 0.25}, {I: 1, J: 2, Coupling: -0.4}, {I: 2, J: 3, Coupling: 0.25}}
	list, _ := potts.New(4, 2, edges, []float64{0.1, 0, 0, 0.2, -0.3, 0, 0, 0})
	hot, _ := potts.Grid(2, 2, true, 4, 1.0/4, nil)
	for _, c := range []struct {
		name, json string
		want       *potts.Potts
	}{
		{"grid with a field per state", `{"type":"potts","q":3,"grid":{"rows":2,"cols":3},"coupling":0.5,"field":[0.1,-0.2,0.3]}`, grid},
		{"edge list, coupling and per-edge", `{"type":"potts","q":2,"n":4,"edges":[[0,1],[1,2,-0.4],[2,3]],"coupling":0.25,"fields":[[0.1,0],[0,0.2],[-0.3,0],[0,0]]}`, list},
		{"edge list, per-edge only", `{"type":"potts","q":2,"n":4,"edges":[[0,1,0.25],[1,2,-0.4],[2,3,0.25]],"fields":[[0.1,0],[0,0.2],[-0.3,0],[0,0]]}`, list},
		{"temperature", `{"type":"potts","q":4,"grid":{"rows":2,"cols":2,"periodic":true},"coupling":1,"temperature":4}`, hot},
	} {
		m, err := Parse([]byte(c.json))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sameModel(t, c.name, m, c.want)
		if m.(*potts.Potts).StateNames(0) != nil {
			t.Errorf("%s: names without \"states\"", c.name)
		}
	}
	// Temperature divides the fields too.
	m, err = Parse([]byte(`{"type":"potts","q":2,"n":2,"edges":[[0,1,1]],"field":[0,1],"temperature":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if p := m.(*potts.Potts); p.Fields()[1] != 0.5 || p.Edges()[0].Coupling != 0.5 {
		t.Errorf("temperature 2: fields %v, edges %v", p.Fields(), p.Edges())
	}
	// An edge list needs no edges.
	if m, err := Parse([]byte(`{"type":"potts","q":3,"n":2}`)); err != nil || m.Dim() != 2 {
		t.Errorf("two free variables: %v", err)
	}
}

func TestBadPottsFiles(t *testing.T) {
	cases := map[string]struct{ json, want string }{
		"no q":           {`{"type":"potts","grid":{"rows":2,"cols":2},"coupling":1}`, `potts model: "q" is missing; want the number of states of each variable, at least 2`},
		"q=1":            {`{"type":"potts","q":1,"grid":{"rows":2,"cols":2},"coupling":1}`, `"q" is 1; want at least 2`},
		"q fraction":     {`{"type":"potts","q":2.5,"n":2}`, "2.5"},
		"no shape":       {`{"type":"potts","q":3,"coupling":1}`, `exactly one of "grid", or "n" with "edges"`},
		"two shapes":     {`{"type":"potts","q":3,"n":4,"grid":{"rows":2,"cols":2},"coupling":1}`, `exactly one of "grid", or "n" with "edges"`},
		"edges alone":    {`{"type":"potts","q":3,"edges":[[0,1,1]]}`, `an edge list needs "n"`},
		"n=0":            {`{"type":"potts","q":3,"n":0,"edges":[]}`, `"n" is 0; want at least one variable`},
		"grid size":      {`{"type":"potts","q":3,"grid":{"rows":0,"cols":2},"coupling":1}`, "grid is 0×2; want rows and cols ≥ 1"},
		"grid coupling":  {`{"type":"potts","q":3,"grid":{"rows":2,"cols":2}}`, `a grid needs "coupling"`},
		"edge 2 no J":    {`{"type":"potts","q":3,"n":3,"edges":[[0,1]]}`, `edge 0 has 2 entries and there is no "coupling"`},
		"edge shape":     {`{"type":"potts","q":3,"n":3,"edges":[[0,1,1,2]]}`, "edge 0 has 4 entries; want [i, j, coupling], or [i, j] with \"coupling\""},
		"edge empty":     {`{"type":"potts","q":3,"n":3,"coupling":1,"edges":[[0,1],[]]}`, "edge 1 has 0 entries"},
		"edge fraction":  {`{"type":"potts","q":3,"n":3,"edges":[[0.5,1,1]]}`, "edge 0 names variable 0.5; want an integer index in [0, 3)"},
		"edge range":     {`{"type":"potts","q":3,"n":3,"edges":[[0,3,1]]}`, "edge 0 names variable 3; want an integer index in [0, 3)"},
		"edge huge":      {`{"type":"potts","q":3,"n":3,"edges":[[0,1e300,1]]}`, "want an integer index in [0, 3)"},
		"edge negative":  {`{"type":"potts","q":3,"n":3,"edges":[[-1,1,1]]}`, "want an integer index in [0, 3)"},
		"self loop":      {`{"type":"potts","q":3,"n":3,"edges":[[1,1,1]]}`, "joins variable 1 to itself"},
		"duplicate edge": {`{"type":"potts","q":3,"n":3,"edges":[[0,1,1],[1,0,1]]}`, "both join variables 0 and 1"},
		"field length":   {`{"type":"potts","q":3,"n":2,"field":[1,2]}`, `"field" has 2 entries; want q = 3, one per state`},
		"fields rows":    {`{"type":"potts","q":2,"n":3,"fields":[[0,1],[1,0]]}`, `the model has 3 variables but "fields" has 2 rows`},
		"fields row":     {`{"type":"potts","q":2,"n":2,"fields":[[0,1],[1,0,2]]}`, `row 1 of "fields" has 3 entries; want q = 2`},
		"fields scalar":  {`{"type":"potts","q":2,"n":2,"fields":[0,1]}`, "fields"},
		"field+fields":   {`{"type":"potts","q":2,"n":1,"field":[0,1],"fields":[[0,1]]}`, `at most one of "field"`},
		"temperature":    {`{"type":"potts","q":2,"n":2,"temperature":0}`, "temperature is 0; want a finite number > 0"},
		"states count":   {`{"type":"potts","q":3,"n":2,"states":["a","b"]}`, `"states" has 2 names; want q = 3`},
		"states dup":     {`{"type":"potts","q":2,"n":2,"states":["a","a"]}`, `"states": states 0 and 1 are both named "a"`},
		"states empty":   {`{"type":"potts","q":2,"n":2,"states":["a",""]}`, `"states": state 1 has an empty name`},
		"states control": {`{"type":"potts","q":2,"n":2,"states":["a","b\tc"]}`, "unprintable"},
		"states number":  {`{"type":"potts","q":2,"n":2,"states":["a",1]}`, "states"},
		"huge":           {`{"type":"potts","q":2,"n":2,"edges":[[0,1,1e308]],"field":[1e308,0]}`, "rescale"},
		"random":         {`{"type":"potts","q":2,"n":2,"random":{"field_range":1}}`, `unknown key "random"`},
		"complete":       {`{"type":"potts","q":2,"complete":{"n":3},"coupling":1}`, `unknown key "complete"`},
		"too many cells": {`{"type":"potts","q":9223372036854775807,"n":9223372036854775807}`, "too many to hold"},
	}
	for name, c := range cases {
		_, err := Parse([]byte(c.json))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q; want one containing %q", name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error spans lines: %q", name, err)
		}
	}
}

// A Potts model over the budget is refused before anything as large as it
// is allocated, by its variables, its states or its edges.
func TestPottsOverBudget(t *testing.T) {
	b := memlimit.Budget{Limit: memlimit.Base + 1<<20}
	for _, in := range []string{
		`{"type":"potts","q":3,"grid":{"rows":1000,"cols":1000,"periodic":true},"coupling":1}`,
		`{"type":"potts","q":100000000000,"grid":{"rows":2,"cols":2},"coupling":1}`,
		`{"type":"potts","q":1000000,"n":1,"edges":[]}`,
		`{"type":"potts","q":3,"n":10000000,"edges":[]}`,
	} {
		var err error
		n := allocated(func() { _, err = ParseLimit([]byte(in), b) })
		var ex *memlimit.Exceeded
		if !errors.As(err, &ex) || !strings.Contains(err.Error(), "Potts") {
			t.Errorf("%s: %v; want a refusal for memory", in, err)
		}
		if n > 1<<20 {
			t.Errorf("%s: refusing it allocated %d bytes", in, n)
		}
	}
	// Within the budget, the estimate covers what the model holds.
	m, mem, err := parse([]byte(`{"type":"potts","q":7,"grid":{"rows":30,"cols":20,"periodic":true},"coupling":1}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if held := float64(m.(*potts.Potts).Bytes()); mem.Held < 0.9*held || mem.Held > 1.1*held || mem.Peak < mem.Held {
		t.Errorf("estimate held %v, peak %v; the model holds %v", mem.Held, mem.Peak, held)
	}
}

// The command's share (Options.Extra) sees the model's shape before it is
// built: its variables and their q states.
func TestPottsShape(t *testing.T) {
	var shapes []Shape
	o := Options{Extra: func(s Shape) float64 { shapes = append(shapes, s); return 0 }}
	if _, _, err := parse([]byte(`{"type":"potts","q":4,"grid":{"rows":3,"cols":5},"coupling":1}`), o); err != nil {
		t.Fatal(err)
	}
	if len(shapes) == 0 {
		t.Fatal("Extra was not called")
	}
	s := shapes[0].Model
	if s.Dim() != 15 || !slices.Equal(s.States(14), []float64{0, 1, 2, 3}) {
		t.Errorf("shape of %d variables, states %v", s.Dim(), s.States(14))
	}
}
