package modelfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
)

// Load reads the model file at path.
func Load(path string) (model.Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the model file: %w", err)
	}
	m, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// header is read first to dispatch on the type.
type header struct {
	Type string `json:"type"`
}

// Parse builds the model described by a JSON model file.
func Parse(data []byte) (model.Model, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("the model file is empty; want a JSON object with a \"type\" field")
	}
	var h header
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, describe(data, err)
	}
	switch h.Type {
	case "categorical":
		var f categoricalFile
		if err := strictDecode(data, &f); err != nil {
			return nil, err
		}
		return f.build()
	case "ising":
		var f isingFile
		if err := strictDecode(data, &f); err != nil {
			return nil, err
		}
		return f.build()
	case "rbm":
		var f rbmFile
		if err := strictDecode(data, &f); err != nil {
			return nil, err
		}
		return f.build()
	case "":
		return nil, errors.New("the model has no \"type\"; want one of categorical, ising, rbm")
	}
	return nil, fmt.Errorf("unknown model type %q; want one of categorical, ising, rbm", h.Type)
}

func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return describe(data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the model's JSON object")
	}
	return nil
}

// describe turns a JSON error into one line that names the position.
func describe(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		// Offset counts the bytes read, the offending one included.
		line, col := position(data, max(syn.Offset-1, 0))
		return fmt.Errorf("line %d, column %d: invalid JSON: %v", line, col, syn)
	case errors.As(err, &typ):
		line, col := position(data, typ.Offset)
		what := typ.Value
		if strings.HasPrefix(what, "number") {
			what = strings.TrimSpace("the " + what + " (out of range or not an integer)")
		} else {
			what = "a " + what
		}
		field := typ.Field
		if field == "" {
			field = "the model"
		}
		return fmt.Errorf("line %d, column %d: field %q: got %s, want %s", line, col, field, what, jsonKind(typ.Type.String()))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the JSON ends early: an object or array is not closed")
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "json: ")
	return errors.New(msg)
}

func jsonKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case goType == "float64":
		return "a finite number"
	case goType == "int", goType == "uint64":
		return "an integer"
	case goType == "bool":
		return "true or false"
	case goType == "string":
		return "a string"
	}
	return "an object"
}

func position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line, col = 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

type categoricalFile struct {
	Type      string `json:"type"`
	Variables []struct {
		States []float64 `json:"states"`
		Probs  []float64 `json:"probs"`
	} `json:"variables"`
}

func (f *categoricalFile) build() (model.Model, error) {
	if len(f.Variables) == 0 {
		return nil, errors.New("categorical model: \"variables\" is missing or empty; want at least one variable")
	}
	vars := make([]categorical.Variable, len(f.Variables))
	for i, v := range f.Variables {
		vars[i] = categorical.Variable{States: v.States, Probs: v.Probs}
	}
	m, err := categorical.New(vars)
	if err != nil {
		return nil, fmt.Errorf("categorical model: %w", err)
	}
	return m, nil
}

type isingFile struct {
	Type string `json:"type"`
	Grid *struct {
		Rows     int  `json:"rows"`
		Cols     int  `json:"cols"`
		Periodic bool `json:"periodic"`
	} `json:"grid"`
	Complete *struct {
		N int `json:"n"`
	} `json:"complete"`
	N           *int        `json:"n"`
	Edges       [][]float64 `json:"edges"`
	Coupling    *float64    `json:"coupling"`
	Field       *float64    `json:"field"`
	Fields      []float64   `json:"fields"`
	Temperature *float64    `json:"temperature"`
	Random      *struct {
		FieldRange float64 `json:"field_range"`
		Seed       uint64  `json:"seed"`
	} `json:"random"`
}

func (f *isingFile) build() (model.Model, error) {
	fail := func(format string, a ...any) (model.Model, error) {
		return nil, fmt.Errorf("ising model: "+format, a...)
	}
	shapes := 0
	for _, set := range []bool{f.Grid != nil, f.Complete != nil, f.N != nil || f.Edges != nil} {
		if set {
			shapes++
		}
	}
	if shapes != 1 {
		return fail("give exactly one of \"grid\", \"complete\", or \"n\" with \"edges\"")
	}
	temp := 1.0
	if f.Temperature != nil {
		temp = *f.Temperature
		if !(temp > 0) || math.IsInf(temp, 0) {
			return fail("temperature is %v; want a finite number > 0", temp)
		}
	}
	var n int
	var edges []ising.Edge
	switch {
	case f.Grid != nil:
		if f.Grid.Rows < 1 || f.Grid.Cols < 1 {
			return fail("grid is %d×%d; want rows and cols ≥ 1", f.Grid.Rows, f.Grid.Cols)
		}
		if f.Coupling == nil {
			return fail("a grid needs \"coupling\"")
		}
		n = f.Grid.Rows * f.Grid.Cols
		edges = ising.GridEdges(f.Grid.Rows, f.Grid.Cols, f.Grid.Periodic, *f.Coupling)
	case f.Complete != nil:
		if f.Complete.N < 1 {
			return fail("complete graph has n = %d; want n ≥ 1", f.Complete.N)
		}
		if f.Coupling == nil {
			return fail("a complete graph needs \"coupling\"")
		}
		n = f.Complete.N
		for i := range n {
			for j := i + 1; j < n; j++ {
				edges = append(edges, ising.Edge{I: i, J: j, Coupling: *f.Coupling})
			}
		}
	default:
		if f.N == nil {
			return fail("an edge list needs \"n\", the number of spins")
		}
		if f.Coupling != nil {
			return fail("\"coupling\" goes with \"grid\" or \"complete\"; an edge list gives each edge's coupling as [i, j, J]")
		}
		n = *f.N
		for k, e := range f.Edges {
			if len(e) != 3 {
				return fail("edge %d has %d entries; want [i, j, coupling]", k, len(e))
			}
			if e[0] != math.Trunc(e[0]) || e[1] != math.Trunc(e[1]) {
				return fail("edge %d names spins %v and %v; want integer indices", k, e[0], e[1])
			}
			edges = append(edges, ising.Edge{I: int(e[0]), J: int(e[1]), Coupling: e[2]})
		}
	}
	if n < 1 {
		return fail("the model has no spins")
	}
	fieldSources := 0
	for _, set := range []bool{f.Field != nil, f.Fields != nil, f.Random != nil} {
		if set {
			fieldSources++
		}
	}
	if fieldSources > 1 {
		return fail("give at most one of \"field\", \"fields\" and \"random\"")
	}
	fields := make([]float64, n)
	switch {
	case f.Field != nil:
		for i := range fields {
			fields[i] = *f.Field
		}
	case f.Fields != nil:
		if len(f.Fields) != n {
			return fail("the model has %d spins but \"fields\" has %d entries", n, len(f.Fields))
		}
		copy(fields, f.Fields)
	case f.Random != nil:
		a := f.Random.FieldRange
		if !(a >= 0) || math.IsInf(a, 0) {
			return fail("random field_range is %v; want a finite number ≥ 0", a)
		}
		r := rng.New(f.Random.Seed, rng.StreamModel)
		for i := range fields {
			fields[i] = -a + 2*a*r.Float64()
		}
	}
	for k := range edges {
		edges[k].Coupling /= temp
	}
	for i := range fields {
		fields[i] /= temp
	}
	var m *ising.Ising
	var err error
	if f.Grid != nil {
		m, err = ising.NewGrid(f.Grid.Rows, f.Grid.Cols, f.Grid.Periodic, edges, fields)
	} else {
		m, err = ising.New(n, edges, fields)
	}
	if err != nil {
		return fail("%v", err)
	}
	return m, nil
}

type rbmFile struct {
	Type    string      `json:"type"`
	W       [][]float64 `json:"W"`
	B       []float64   `json:"b"`
	C       []float64   `json:"c"`
	Visible *int        `json:"visible"`
	Hidden  *int        `json:"hidden"`
	Random  *struct {
		WStd    *float64 `json:"w_std"`
		BiasStd *float64 `json:"bias_std"`
		Seed    uint64   `json:"seed"`
	} `json:"random"`
}

func (f *rbmFile) build() (model.Model, error) {
	fail := func(format string, a ...any) (model.Model, error) {
		return nil, fmt.Errorf("rbm model: "+format, a...)
	}
	if f.Random != nil {
		if f.W != nil || f.B != nil || f.C != nil {
			return fail("give either \"random\" or \"W\" (with \"b\" and \"c\"), not both")
		}
		if f.Visible == nil || f.Hidden == nil {
			return fail("\"random\" needs \"visible\" and \"hidden\"")
		}
		if *f.Visible < 1 || *f.Hidden < 0 {
			return fail("visible = %d and hidden = %d; want visible ≥ 1 and hidden ≥ 0", *f.Visible, *f.Hidden)
		}
		if f.Random.WStd == nil || f.Random.BiasStd == nil {
			return fail("\"random\" needs \"w_std\" and \"bias_std\"")
		}
		m, err := rbm.Random(*f.Visible, *f.Hidden, *f.Random.WStd, *f.Random.BiasStd, f.Random.Seed)
		if err != nil {
			return fail("%v", err)
		}
		return m, nil
	}
	if len(f.W) == 0 {
		return fail("\"W\" is missing or empty; want a visible × hidden matrix (or \"random\")")
	}
	if f.Visible != nil && *f.Visible != len(f.W) {
		return fail("\"visible\" is %d but W has %d rows", *f.Visible, len(f.W))
	}
	if f.Hidden != nil && *f.Hidden != len(f.W[0]) {
		return fail("\"hidden\" is %d but W has %d columns", *f.Hidden, len(f.W[0]))
	}
	m, err := rbm.New(f.W, f.B, f.C)
	if err != nil {
		return fail("%v", err)
	}
	return m, nil
}
