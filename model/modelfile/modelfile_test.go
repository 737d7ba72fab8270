package modelfile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/modeltest"
	"github.com/dstein/dstein/model/rbm"
)

func TestExamplesLoad(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.json")
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v %v", files, err)
	}
	dims := map[string]int{"categorical.json": 1, "ising-grid.json": 100, "ising-edges.json": 3, "ising-complete.json": 8, "rbm-small.json": 3, "rbm-random.json": 100, "potts5-torus.json": 25}
	for _, f := range files {
		m, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if want, ok := dims[filepath.Base(f)]; ok && m.Dim() != want {
			t.Errorf("%s: dimension %d; want %d", f, m.Dim(), want)
		}
	}
}

func TestIssueForms(t *testing.T) {
	m, err := Parse([]byte(`{"type":"ising","grid":{"rows":10,"cols":10,"periodic":false},"coupling":0.1,"field":0.0}`))
	if err != nil {
		t.Fatal(err)
	}
	if g := m.(*ising.Ising); len(g.Edges()) != 180 || g.Edges()[0].Coupling != 0.1 {
		t.Errorf("grid: %d edges, first %+v", len(g.Edges()), g.Edges()[0])
	}
	m, err = Parse([]byte(`{"type":"ising","n":3,"edges":[[0,1,0.5],[1,2,-0.3]],"fields":[0.1,0,0]}`))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ising.New(3, []ising.Edge{{I: 0, J: 1, Coupling: 0.5}, {I: 1, J: 2, Coupling: -0.3}}, []float64{0.1, 0, 0})
	modeltest.ForEachState(m, func(z []int) {
		if m.LogProb(z) != want.LogProb(z) {
			t.Errorf("edge-list model differs at %v", z)
		}
	})
	m, err = Parse([]byte(`{"type":"rbm","visible":100,"hidden":25,"random":{"w_std":0.2236,"bias_std":1,"seed":7}}`))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := rbm.Random(100, 25, 0.2236, 1, 7)
	if m.(*rbm.RBM).Weight(3, 4) != r.Weight(3, 4) || m.(*rbm.RBM).HiddenBias()[24] != r.HiddenBias()[24] {
		t.Error("a seed does not name the same RBM in the file and the library")
	}
	// Temperature divides couplings and fields.
	m, err = Parse([]byte(`{"type":"ising","grid":{"rows":2,"cols":2},"coupling":1,"field":0.5,"temperature":20}`))
	if err != nil {
		t.Fatal(err)
	}
	if g := m.(*ising.Ising); g.Edges()[0].Coupling != 1.0/20 || g.Fields()[0] != 0.5/20 {
		t.Errorf("temperature: coupling %v field %v", g.Edges()[0].Coupling, g.Fields()[0])
	}
}

func TestBadFilesGiveClearErrors(t *testing.T) {
	cases := map[string]struct{ json, want string }{
		"malformed":       {`{"type": "ising", "grid": {"rows": 2,}`, "line 1, column 38: invalid JSON"},
		"truncated":       {`{"type": "ising", "grid": {"rows": 2`, "ends early"},
		"empty":           {"  \n", "empty"},
		"unknown type":    {`{"type":"clock"}`, `unknown model type "clock"; want one of categorical, ising, potts or rbm`},
		"type not string": {`{"type":3}`, `"type" must be a string: categorical, ising, potts or rbm`},
		"no type":         {`{"n":3}`, `no "type"; want one of categorical, ising, potts or rbm`},
		"unknown field":   {`{"type":"ising","grid":{"rows":2,"cols":2},"coupling":1,"feild":0}`, `unknown key "feild"`},
		"case mismatch":   {`{"type":"ising","n":2,"edges":[],"coupling":0.1,"Coupling":3}`, `key "Coupling" must be spelled "coupling"`},
		// Two spellings of "type": the file's own key decides the type,
		// and the other is named (the header once took the last of them
		// case-insensitively and rejected the file's real keys).
		"type case":        {`{"type":"categorical","variables":[{"states":[0,1],"probs":[0.5,0.5]}],"TYPE":"ising"}`, `key "TYPE" must be spelled "type"`},
		"type case alone":  {`{"Type":"ising","TYPE":"potts","n":1,"edges":[]}`, `key "TYPE" must be spelled "type"`},
		"duplicate key":    {`{"type":"ising","grid":{"rows":2,"cols":2},"coupling":0.1,"coupling":3}`, `key "coupling" appears twice`},
		"neg prob":         {`{"type":"categorical","variables":[{"states":[0,1],"probs":[1.2,-0.2]}]}`, "want a finite number ≥ 0"},
		"sum":              {`{"type":"categorical","variables":[{"states":[0,1],"probs":[0.5,0.6]}]}`, "sum to 1.1"},
		"lengths":          {`{"type":"categorical","variables":[{"states":[0,1,2],"probs":[0.5,0.5]}]}`, "3 states but 2 probabilities"},
		"no variables":     {`{"type":"categorical","variables":[]}`, "missing or empty"},
		"huge state":       {`{"type":"categorical","variables":[{"states":[-1e308,1e308],"probs":[0.5,0.5]}]}`, "want at most 1e+150 in magnitude"},
		"overflow":         {`{"type":"categorical","variables":[{"states":[0,1e999],"probs":[0.5,0.5]}]}`, "number 1e999"},
		"string number":    {`{"type":"categorical","variables":[{"states":[0,"NaN"],"probs":[0.5,0.5]}]}`, "is a JSON string; want a finite number"},
		"fields length":    {`{"type":"ising","n":3,"edges":[[0,1,0.5]],"fields":[0,0]}`, "3 spins but \"fields\" has 2"},
		"edge range":       {`{"type":"ising","n":3,"edges":[[0,3,0.5]]}`, "outside [0, 3)"},
		"edge shape":       {`{"type":"ising","n":3,"edges":[[0,1]]}`, "want [i, j, coupling]"},
		"edge fraction":    {`{"type":"ising","n":3,"edges":[[0.5,1,1]]}`, "integer indices"},
		"no spins":         {`{"type":"ising","n":0,"edges":[]}`, "want at least one spin"},
		"two shapes":       {`{"type":"ising","n":4,"grid":{"rows":2,"cols":2},"coupling":1}`, "exactly one of"},
		"grid coupling":    {`{"type":"ising","grid":{"rows":2,"cols":2}}`, `needs "coupling"`},
		"rbm shape":        {`{"type":"rbm","W":[[0.1,0.2],[0.3]],"b":[0,0],"c":[0,0]}`, "row 1 has 1 entries"},
		"rbm b":            {`{"type":"rbm","W":[[0.1],[0.3]],"b":[0],"c":[0]}`, "b has 1 entries"},
		"rbm empty":        {`{"type":"rbm","W":[]}`, "missing or empty"},
		"rbm random+W":     {`{"type":"rbm","visible":2,"hidden":1,"W":[[1],[1]],"random":{"w_std":1,"bias_std":1}}`, "not both"},
		"rbm random sizes": {`{"type":"rbm","visible":0,"hidden":1,"random":{"w_std":1,"bias_std":1}}`, "visible ≥ 1"},
		"rbm neg std":      {`{"type":"rbm","visible":2,"hidden":1,"random":{"w_std":-1,"bias_std":1}}`, "finite and ≥ 0"},
		"trailing":         {`{"type":"ising","n":1,"edges":[]} {}`, "more than one JSON value"},
		"negative temp":    {`{"type":"ising","n":2,"edges":[],"temperature":-1}`, "temperature is -1"},
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

func TestLoadNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(p, []byte(`{"type":"x"}`), 0o644)
	_, err := Load(p)
	if err == nil || !strings.HasPrefix(err.Error(), p+": ") {
		t.Fatalf("error %q does not start with the file name", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Fatal("missing file accepted")
	}
}

var _ model.Model = (*ising.Ising)(nil)

// What building each shape allocates in all, garbage included, beyond the
// JSON (at most 512 bytes a byte of it), stays within allocPerPeak times
// its peak estimate: the bound the fuzz test holds ParseLimit to, for a
// model the budget admits.
func TestEstimatesCoverBuild(t *testing.T) {
	for _, c := range []struct {
		in  string
		mem Memory
	}{
		{`{"type":"ising","grid":{"rows":100,"cols":100},"coupling":0.3}`, isingMemory(0, 1e4, 2e4, true)},
		{`{"type":"ising","grid":{"rows":1,"cols":10000,"periodic":true},"coupling":0.3,"field":1}`, isingMemory(0, 1e4, 1e4, true)},
		{`{"type":"ising","complete":{"n":300},"coupling":0.3}`, isingMemory(0, 300, 300*299/2, false)},
		{`{"type":"ising","n":100000,"edges":[],"random":{"field_range":1}}`, isingMemory(0, 1e5, 0, false)},
		{`{"type":"potts","q":3,"grid":{"rows":100,"cols":100,"periodic":true},"coupling":0.3}`, pottsMemory(0, 1e4, 3, 2e4, false, false)},
		{`{"type":"potts","q":50,"grid":{"rows":1,"cols":10000},"coupling":0.3,"field":[` + strings.Repeat("0.1,", 49) + `0]}`, pottsMemory(0, 1e4, 50, 9999, false, false)},
		{`{"type":"potts","q":3,"n":20000,"edges":[[0,1,1]],"fields":[` + strings.Repeat("[0,1,2],", 19999) + `[0,1,2]]}`, pottsMemory(0, 2e4, 3, 1, true, true)},
		{`{"type":"rbm","visible":100000,"hidden":0,"random":{"w_std":1,"bias_std":1}}`, rbmMemory(0, 1e5, 0, true)},
		{`{"type":"rbm","visible":300,"hidden":300,"random":{"w_std":1,"bias_std":1}}`, rbmMemory(0, 300, 300, true)},
		{`{"type":"categorical","variables":[` + strings.Repeat(`{"states":[0],"probs":[1]},`, 9999) + `{"states":[0,1],"probs":[0.5,0.5]}]}`, categoricalMemory(0, 1e4, 10001)},
	} {
		var err error
		n := allocated(func() { _, err = Parse([]byte(c.in)) })
		if err != nil {
			t.Errorf("%.50s: %v", c.in, err)
			continue
		}
		if limit := allocPerPeak*c.mem.Peak + 512*float64(len(c.in)); float64(n) > limit {
			t.Errorf("%.50s: allocated %d bytes; the estimate allows %.0f", c.in, n, limit)
		}
	}
}

// A leading byte order mark is ignored; nesting beyond strictjson.MaxDepth
// is refused, naming the line and column, before anything is decoded.
func TestBOMAndDepth(t *testing.T) {
	m, err := Parse([]byte("\ufeff{\"type\":\"ising\",\"grid\":{\"rows\":2,\"cols\":2},\"coupling\":0.1}"))
	if err != nil || m.Dim() != 4 {
		t.Errorf("with a BOM: %v", err)
	}
	deep := []byte(`{"type":"ising","n":2,"edges":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "}")
	n := allocated(func() { _, err = Parse(deep) })
	if err == nil || !strings.Contains(err.Error(), "line 1, column 1030: arrays and objects nest more than 1000 deep") {
		t.Errorf("100,000 levels: %v", err)
	}
	if n > 1<<16 {
		t.Errorf("refusing 100,000 levels allocated %d bytes", n)
	}
}

// The shape of an Ising model file (before the model is built) gives the
// spin kernels' memory estimate that the built model gives: the same
// number of edges and table entries for grids (open and periodic, lines
// of 1, 2 and 3 sites included) and complete graphs, an upper bound of
// them for edge lists.
func TestSpinShapeMatchesModel(t *testing.T) {
	files := []string{
		`{"type":"ising","grid":{"rows":5,"cols":7},"coupling":0.3}`,
		`{"type":"ising","grid":{"rows":5,"cols":7,"periodic":true},"coupling":0.3}`,
		`{"type":"ising","grid":{"rows":1,"cols":6,"periodic":true},"coupling":0.3}`,
		`{"type":"ising","grid":{"rows":2,"cols":3,"periodic":true},"coupling":0.3}`,
		`{"type":"ising","grid":{"rows":1,"cols":1},"coupling":0.3}`,
		`{"type":"ising","grid":{"rows":2,"cols":1,"periodic":true},"coupling":0.3}`,
		`{"type":"ising","complete":{"n":9},"coupling":0.1}`,
		`{"type":"ising","n":6,"edges":[[0,1,0.5],[1,2,0.5],[2,0,0.5],[3,4,1],[0,3,0.2],[0,4,0.2],[0,5,0.2]]}`,
	}
	for k, text := range files {
		path := filepath.Join(t.TempDir(), "m.json")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		var shapes []Shape
		lm, err := OpenOptions(context.Background(), path, "", Options{Extra: func(s Shape) float64 { shapes = append(shapes, s); return 0 }})
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		built, ok := lm.Model.(model.SpinShape)
		if !ok || len(shapes) == 0 {
			t.Fatalf("%s: the model (%T) or its shape is no SpinShape", text, lm.Model)
		}
		sh, ok := shapes[0].Model.(model.SpinShape)
		if !ok {
			t.Fatalf("%s: the shape %T is no SpinShape", text, shapes[0].Model)
		}
		bound := k == len(files)-1
		for _, deg := range []int{0, 2, 3, 6} {
			se, be := sh.SpinTableEntries(deg), built.SpinTableEntries(deg)
			if (!bound && se != be) || se < be {
				t.Errorf("%s: table entries up to degree %d: shape %v, model %v", text, deg, se, be)
			}
		}
		if sh.SpinEdges() != built.SpinEdges() {
			t.Errorf("%s: shape has %d edges, model %d", text, sh.SpinEdges(), built.SpinEdges())
		}
	}
}

// --given takes names and states that hold a comma or =, escaped with a
// backslash; a state may hold an unescaped = after the name's; a lone
// trailing backslash is refused.
func TestParseGivenEscapes(t *testing.T) {
	g, err := factorgraph.New([]int{2, 2}, []factorgraph.Factor{{Scope: []int{0, 1}, LogTable: []float64{0, 0, 0, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	g, err = g.Named([]string{"a,b", "c=d"}, [][]string{{"x=1", "off"}, {"lo", "hi,er"}})
	if err != nil {
		t.Fatal(err)
	}
	for spec, want := range map[string]map[int]int{
		`a\,b=x\=1,c\=d=hi\,er`: {0: 0, 1: 1},
		`a\,b=x=1`:              {0: 0},
		` c\=d = lo `:           {1: 0},
	} {
		got, err := ParseGiven(g, spec)
		if err != nil || len(got) != len(want) {
			t.Errorf("%q: %v, %v; want %v", spec, got, err, want)
			continue
		}
		for v, s := range want {
			if got[v] != s {
				t.Errorf("%q: %v; want %v", spec, got, want)
			}
		}
	}
	for spec, msg := range map[string]string{
		`a\,b=off\`: "a backslash at the end escapes nothing",
		`a,b=off`:   "want NAME=STATE pairs",
		`c=d=lo`:    `the network has no variable "c"`,
	} {
		if _, err := ParseGiven(g, spec); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v; want an error saying %q", spec, err, msg)
		}
	}
}

// Errors of the model packages reach the user with the model named once:
// "ising model: the Ising model: its parameters are so large…" said it
// twice.
func TestErrorsNameTheModelOnce(t *testing.T) {
	cases := map[string]struct{ json, word string }{
		"ising bound": {`{"type":"ising","grid":{"rows":3,"cols":3},"coupling":1e300}`, "ising"},
		"ising edges": {`{"type":"ising","n":3,"edges":[[0,1,1],[1,0,1]]}`, "ising"},
		"potts bound": {`{"type":"potts","q":3,"grid":{"rows":3,"cols":3},"coupling":1e300}`, "potts"},
		"rbm bound":   {`{"type":"rbm","W":[[1e300],[1]],"b":[0,0],"c":[0]}`, "rbm"},
		"rbm row":     {`{"type":"rbm","W":[[0.1,0.2],[0.3]],"b":[0,0],"c":[0,0]}`, "rbm"},
		"rbm random":  {`{"type":"rbm","visible":2,"hidden":1,"random":{"w_std":-1,"bias_std":1}}`, "rbm"},
	}
	for name, c := range cases {
		_, err := Parse([]byte(c.json))
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		msg := strings.ToLower(err.Error())
		if n := strings.Count(msg, c.word); n != 1 {
			t.Errorf("%s: %q names %q %d times; want once", name, err, c.word, n)
		}
	}
}
