package modelfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/dstein/dstein/internal/memlimit"
	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/internal/strictjson"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
)

// MaxFileBytes is the size limit of a model file when no memory budget is
// given (Load, Parse).
const MaxFileBytes = 256 << 20

// Load reads the model file at path (at most MaxFileBytes).
func Load(path string) (model.Model, error) {
	return LoadLimit(context.Background(), path, memlimit.Budget{Limit: MaxFileBytes * 8})
}

// LoadLimit reads the model file at path, refusing a file or a model whose
// memory would exceed the budget (a file may take at most an eighth of it:
// decoding JSON costs several times its size).
func LoadLimit(ctx context.Context, path string, b memlimit.Budget) (model.Model, error) {
	data, err := safeio.ReadFile(path, "model file", fileLimit(b))
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, err := ParseLimit(data, b)
	if err != nil {
		var ex *memlimit.Exceeded
		if errors.As(err, &ex) {
			ex.What = path + ": " + ex.What
			return nil, ex
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// fileLimit is the largest input file a budget allows.
func fileLimit(b memlimit.Budget) int64 {
	if b.Limit <= 0 {
		return 0
	}
	return max(b.Limit/8, 1<<20)
}

// header is read first to dispatch on the type.
type header struct {
	Type string `json:"type"`
}

// Parse builds the model described by a JSON model file (within a budget
// of 8·MaxFileBytes).
func Parse(data []byte) (model.Model, error) {
	return ParseLimit(data, memlimit.Budget{Limit: MaxFileBytes * 8})
}

// ParseLimit builds the model described by a JSON model file, refusing a
// model whose memory would exceed the budget before building it. Keys must
// be spelled exactly and appear once; numbers must be finite; a leading
// UTF-8 byte order mark is ignored, and arrays and objects may nest at most
// strictjson.MaxDepth deep.
func ParseLimit(data []byte, b memlimit.Budget) (model.Model, error) {
	// A leading byte order mark is ignored and deep nesting refused
	// before the header is decoded.
	data, err := strictjson.Prepare(data)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("the model file is empty; want a JSON object with a \"type\" field")
	}
	var h struct {
		Type json.RawMessage `json:"type"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&h); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return nil, errors.New("the model file is not a JSON object; want an object with a \"type\" field")
		}
		return nil, describe(data, err)
	}
	var typ string
	if len(h.Type) > 0 {
		if err := json.Unmarshal(h.Type, &typ); err != nil {
			return nil, errors.New("\"type\" must be a string: categorical, ising or rbm")
		}
	}
	switch typ {
	case "categorical":
		var f categoricalFile
		if err := strictjson.Unmarshal(data, &f); err != nil {
			return nil, err
		}
		return f.build(b)
	case "ising":
		var f isingFile
		if err := strictjson.Unmarshal(data, &f); err != nil {
			return nil, err
		}
		return f.build(b)
	case "rbm":
		var f rbmFile
		if err := strictjson.Unmarshal(data, &f); err != nil {
			return nil, err
		}
		return f.build(b)
	case "":
		return nil, errors.New("the model has no \"type\"; want one of categorical, ising, rbm")
	}
	return nil, fmt.Errorf("unknown model type %q; want one of categorical, ising, rbm", typ)
}

// describe turns a JSON error into one line that names the position.
func describe(data []byte, err error) error {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		// Offset counts the bytes read, the offending one included.
		line, col := position(data, max(syn.Offset-1, 0))
		return fmt.Errorf("line %d, column %d: invalid JSON: %v", line, col, syn)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the JSON ends early: an object or array is not closed")
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "json: ")
	return errors.New(msg)
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

func (f *categoricalFile) build(b memlimit.Budget) (model.Model, error) {
	if len(f.Variables) == 0 {
		return nil, errors.New("categorical model: \"variables\" is missing or empty; want at least one variable")
	}
	var states float64
	for _, v := range f.Variables {
		states += float64(len(v.States))
	}
	if err := b.Check("the categorical model", categoricalBytes(float64(len(f.Variables)), states)); err != nil {
		return nil, err
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

func (f *isingFile) build(b memlimit.Budget) (model.Model, error) {
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
		d := float64(f.Grid.Rows) * float64(f.Grid.Cols)
		if err := b.Check(fmt.Sprintf("the %d×%d Ising grid", f.Grid.Rows, f.Grid.Cols), isingBytes(d, 2*d, gridEdgeBytes)); err != nil {
			return nil, err
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
		d := float64(f.Complete.N)
		if err := b.Check(fmt.Sprintf("the complete Ising graph of %d spins", f.Complete.N), isingBytes(d, d*(d-1)/2, edgeBytes)); err != nil {
			return nil, err
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
		if n < 1 {
			return fail("\"n\" is %d; want at least one spin", n)
		}
		if err := b.Check(fmt.Sprintf("the Ising model of %d spins and %d edges", n, len(f.Edges)), isingBytes(float64(n), float64(len(f.Edges)), edgeBytes)); err != nil {
			return nil, err
		}
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
		r := rng.NewKey(f.Random.Seed).For(rng.Model).Rand()
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
	Type string `json:"type"`
	// Units is "spin" (±1 units, the default) or "binary" ({0, 1} units:
	// W, b and c are then those of p(v, h) ∝ exp(vᵀWh + bᵀv + cᵀh) with
	// v, h ∈ {0, 1}, see rbm.NewBinary).
	Units   string      `json:"units"`
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

func (f *rbmFile) build(b memlimit.Budget) (model.Model, error) {
	fail := func(format string, a ...any) (model.Model, error) {
		return nil, fmt.Errorf("rbm model: "+format, a...)
	}
	var build func(W [][]float64, b, c []float64) (*rbm.RBM, error)
	switch f.Units {
	case "", "spin":
		build = rbm.New
	case "binary":
		build = rbm.NewBinary
	default:
		return fail("\"units\" is %q; want \"spin\" (±1 units, the default) or \"binary\" ({0, 1} units)", f.Units)
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
		if err := b.Check(fmt.Sprintf("the RBM with %d visible and %d hidden units", *f.Visible, *f.Hidden), rbmBytes(float64(*f.Visible), float64(*f.Hidden))); err != nil {
			return nil, err
		}
		W, bv, c, err := rbm.RandomParams(*f.Visible, *f.Hidden, *f.Random.WStd, *f.Random.BiasStd, f.Random.Seed)
		if err != nil {
			return fail("%v", err)
		}
		m, err := build(W, bv, c)
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
	if err := b.Check(fmt.Sprintf("the RBM with %d visible and %d hidden units", len(f.W), len(f.W[0])), rbmBytes(float64(len(f.W)), float64(len(f.W[0])))); err != nil {
		return nil, err
	}
	m, err := build(f.W, f.B, f.C)
	if err != nil {
		return fail("%v", err)
	}
	return m, nil
}

// The estimates below are what building a model allocates in all, garbage
// included (runtime.MemStats.TotalAlloc, measured for each shape from 10³
// to 10⁶ variables, edges or weights, and rounded up): Go's collector lets
// the heap grow to twice what is live before it collects, so what a
// build allocates is close to the memory it takes, and a model file cannot
// make the process allocate more than the budget allows for its model
// (model/modelfile's fuzz test holds ParseLimit to that). The memory of
// the JSON itself, bounded by the file's size, is not included.

// categoricalBytes estimates the memory of a categorical model of v
// variables and s states in all: per variable a map of its states (for
// duplicates), three slices and their growth (about 490 bytes measured),
// per state the copies and the map's slots (at most 62 measured).
func categoricalBytes(v, s float64) float64 { return memlimit.Base + 640*v + 96*s }

const (
	// gridEdgeBytes is what a grid's edge costs: the edges are built
	// twice (GridEdges, and NewGrid's check of them), each with an index
	// map, then New keeps a map of the pairs, the list and the adjacency
	// (at most 740 bytes measured).
	gridEdgeBytes = 800
	// edgeBytes is what an edge of a complete graph or an edge list
	// costs: the list and its growth, New's map of the pairs, the list
	// again and both directions of the adjacency (at most 252 measured).
	edgeBytes = 320
)

// isingBytes estimates the memory of an Ising model of d spins and e edges
// of perEdge bytes each; a spin costs its field (twice), its degree, its
// offset and its place in the fill (at most 56 bytes measured).
func isingBytes(d, e, perEdge float64) float64 { return memlimit.Base + 64*d + perEdge*e }

// rbmBytes estimates the memory of an RBM with d visible and m hidden
// units: W twice (rows and columns) plus its decoded or generated form (16
// bytes a weight measured), and per unit a row of W, the biases and their
// copies (40 bytes measured).
func rbmBytes(d, m float64) float64 { return memlimit.Base + 3*8*d*m + 48*(d+m) }
