package modelfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/internal/strictjson"
	"github.com/dstein/dstein/memlimit"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/model/rbm"
)

// Why one file of about 670 lines: one parser per model kind of the JSON format
// (categorical, Ising, Potts, RBM), each with its checks and messages; they share the
// position-naming and limits above them.

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
	m, _, err := loadJSON(ctx, path, Options{Budget: b})
	return m, err
}

// loadJSON is LoadLimit within the limits of o, with the model's memory.
func loadJSON(ctx context.Context, path string, o Options) (model.Model, Memory, error) {
	data, err := safeio.ReadFile(path, "model file", fileLimit(o.Budget))
	if err != nil {
		return nil, Memory{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, Memory{}, err
	}
	m, mem, err := parse(data, o)
	if err != nil {
		var ex *memlimit.Exceeded
		if errors.As(err, &ex) {
			ex.What = path + ": " + ex.What
			return nil, Memory{}, ex
		}
		return nil, Memory{}, fmt.Errorf("%s: %w", path, err)
	}
	return m, mem, nil
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
	m, _, err := parse(data, Options{Budget: b})
	return m, err
}

// parse is ParseLimit within the limits of o, with the model's memory.
func parse(data []byte, o Options) (model.Model, Memory, error) {
	size := float64(len(data))
	// A leading byte order mark is ignored and deep nesting refused
	// before the header is decoded.
	data, err := strictjson.Prepare(data)
	if err != nil {
		return nil, Memory{}, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, Memory{}, errors.New("the model file is empty; want a JSON object with a \"type\" field")
	}
	// The header is read into a map, whose keys are the file's own:
	// decoded into a struct, "TYPE" would stand for "type" and the last
	// of two such keys would win, so the type-specific decoder below would
	// reject keys of a type the file never names.
	var h map[string]headerValue
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&h); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return nil, Memory{}, errors.New("the model file is not a JSON object; want an object with a \"type\" field")
		}
		return nil, Memory{}, describe(data, err)
	}
	if h == nil {
		return nil, Memory{}, errors.New("the model file is not a JSON object; want an object with a \"type\" field")
	}
	rawType, ok := h["type"]
	if !ok {
		// Sorted, so that the message names the same key every time.
		for _, k := range slices.Sorted(maps.Keys(h)) {
			if strings.EqualFold(k, "type") {
				return nil, Memory{}, fmt.Errorf("key %q must be spelled \"type\"", k)
			}
		}
	}
	var typ string
	if len(rawType) > 0 {
		if err := json.Unmarshal(rawType, &typ); err != nil {
			return nil, Memory{}, errors.New("\"type\" must be a string: categorical, ising, potts or rbm")
		}
	}
	switch typ {
	case "categorical":
		var f categoricalFile
		if err := strictjson.Unmarshal(data, &f); err != nil {
			return nil, Memory{}, err
		}
		return f.build(o, size)
	case "ising":
		var f isingFile
		if err := strictjson.Unmarshal(data, &f); err != nil {
			return nil, Memory{}, err
		}
		return f.build(o, size)
	case "potts":
		var f pottsFile
		if err := strictjson.Unmarshal(data, &f); err != nil {
			return nil, Memory{}, err
		}
		return f.build(o, size)
	case "rbm":
		var f rbmFile
		if err := strictjson.Unmarshal(data, &f); err != nil {
			return nil, Memory{}, err
		}
		return f.build(o, size)
	case "":
		return nil, Memory{}, errors.New("the model has no \"type\"; want one of categorical, ising, potts or rbm")
	}
	return nil, Memory{}, fmt.Errorf("unknown model type %q; want one of categorical, ising, potts or rbm", typ)
}

// headerValue is a top-level value of a model file as the header sees
// it: a string is kept, of anything else only its first byte (enough for
// "type" to be refused as not a string), so that the header does not copy
// a large model's arrays.
type headerValue []byte

// UnmarshalJSON keeps b if it is a string, else its first byte.
func (v *headerValue) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] != '"' {
		b = b[:1]
	}
	*v = append((*v)[:0], b...)
	return nil
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

func (f *categoricalFile) build(o Options, size float64) (model.Model, Memory, error) {
	if len(f.Variables) == 0 {
		return nil, Memory{}, errors.New("categorical model: \"variables\" is missing or empty; want at least one variable")
	}
	var states float64
	for _, v := range f.Variables {
		states += float64(len(v.States))
	}
	v := float64(len(f.Variables))
	mem := categoricalMemory(size, v, states)
	s := Shape{Model: categoricalShape(f)}
	if err := o.check("the categorical model", mem, s); err != nil {
		return nil, Memory{}, err
	}
	vars := make([]categorical.Variable, len(f.Variables))
	for i, v := range f.Variables {
		vars[i] = categorical.Variable{States: v.States, Probs: v.Probs}
	}
	m, err := categorical.New(vars)
	if err != nil {
		return nil, Memory{}, fmt.Errorf("categorical model: %w", err)
	}
	return m, mem, nil
}

// categoricalShape stands for the categorical model of f (see Shape): its
// variables' state values as the file gives them.
func categoricalShape(f *categoricalFile) model.Model {
	m := &listModel{states: make([][]float64, len(f.Variables))}
	for i, v := range f.Variables {
		m.states[i] = v.States
	}
	return m
}

// listModel stands for a model whose variables' states are listed.
type listModel struct{ states [][]float64 }

func (l *listModel) Dim() int               { return len(l.states) }
func (l *listModel) States(i int) []float64 { return l.states[i] }
func (l *listModel) LogProb(z []int) float64 {
	panic("modelfile: a model's shape has no probabilities")
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

// named puts prefix before a model package's error unless the error
// already names the model in its first words ("the Ising model: …",
// "rbm W row 2 …"), so that no message says it twice.
func named(prefix, word string, err error) error {
	head := strings.ToLower(err.Error())
	if len(head) > 20 {
		head = head[:20]
	}
	if strings.Contains(head, word) {
		return err
	}
	return fmt.Errorf("%s: %w", prefix, err)
}

func (f *isingFile) build(o Options, size float64) (model.Model, Memory, error) {
	fail := func(format string, a ...any) (model.Model, Memory, error) {
		return nil, Memory{}, fmt.Errorf("ising model: "+format, a...)
	}
	var mem Memory
	spins := func(d float64, edges int, degree func(int) int) Shape {
		return Shape{Model: &spinShape{shapeModel: shapeModel{d: int(d), vals: spinStates}, edges: edges, degree: degree}}
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
		mem = isingMemory(size, d, 2*d, true)
		rows, cols := f.Grid.Rows, f.Grid.Cols
		// Neighbours along a line of k sites: distinct sites other than
		// the site itself (GridEdges merges the wrap of a line of 2).
		line := func(k, at int) int {
			switch {
			case f.Grid.Periodic:
				return min(k-1, 2)
			case k == 1:
				return 0
			case at == 0 || at == k-1:
				return 1
			}
			return 2
		}
		lineEdges := func(k int) int {
			switch {
			case !f.Grid.Periodic || k == 1:
				return k - 1
			case k == 2:
				return 1
			}
			return k
		}
		gridEdges := rows*lineEdges(cols) + cols*lineEdges(rows)
		degree := func(i int) int { return line(cols, i%cols) + line(rows, i/cols) }
		if err := o.check(fmt.Sprintf("the %d×%d Ising grid", f.Grid.Rows, f.Grid.Cols), mem, spins(d, gridEdges, degree)); err != nil {
			return nil, Memory{}, err
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
		mem = isingMemory(size, d, d*(d-1)/2, false)
		cn := f.Complete.N
		if err := o.check(fmt.Sprintf("the complete Ising graph of %d spins", f.Complete.N), mem, spins(d, cn*(cn-1)/2, func(int) int { return cn - 1 })); err != nil {
			return nil, Memory{}, err
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
		mem = isingMemory(size, float64(n), float64(len(f.Edges)), false)
		if err := o.check(fmt.Sprintf("the Ising model of %d spins and %d edges", n, len(f.Edges)), mem, spins(float64(n), len(f.Edges), nil)); err != nil {
			return nil, Memory{}, err
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
		r, err := ising.UniformFields(n, a, f.Random.Seed)
		if err != nil {
			return fail("%v", err)
		}
		copy(fields, r)
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
		return nil, Memory{}, named("ising model", "ising", err)
	}
	return m, mem, nil
}

type pottsFile struct {
	Type string `json:"type"`
	Q    *int   `json:"q"`
	Grid *struct {
		Rows     int  `json:"rows"`
		Cols     int  `json:"cols"`
		Periodic bool `json:"periodic"`
	} `json:"grid"`
	N           *int        `json:"n"`
	Edges       [][]float64 `json:"edges"`
	Coupling    *float64    `json:"coupling"`
	Field       []float64   `json:"field"`
	Fields      [][]float64 `json:"fields"`
	Temperature *float64    `json:"temperature"`
	States      []string    `json:"states"`
}

func (f *pottsFile) build(o Options, size float64) (model.Model, Memory, error) {
	fail := func(format string, a ...any) (model.Model, Memory, error) {
		return nil, Memory{}, fmt.Errorf("potts model: "+format, a...)
	}
	if f.Q == nil {
		return fail("\"q\" is missing; want the number of states of each variable, at least 2")
	}
	q := *f.Q
	if q < 2 {
		return fail("\"q\" is %d; want at least 2 states", q)
	}
	if (f.Grid != nil) == (f.N != nil || f.Edges != nil) {
		return fail("give exactly one of \"grid\", or \"n\" with \"edges\"")
	}
	temp := 1.0
	if f.Temperature != nil {
		temp = *f.Temperature
		if !(temp > 0) || math.IsInf(temp, 0) {
			return fail("temperature is %v; want a finite number > 0", temp)
		}
	}
	if f.Field != nil && f.Fields != nil {
		return fail("give at most one of \"field\" (one value per state, at every variable) and \"fields\" (per variable)")
	}
	if f.States != nil && len(f.States) != q {
		return fail("\"states\" has %d names; want q = %d", len(f.States), q)
	}
	var n int
	var what string
	var mem Memory
	if f.Grid != nil {
		rows, cols := f.Grid.Rows, f.Grid.Cols
		if rows < 1 || cols < 1 {
			return fail("grid is %d×%d; want rows and cols ≥ 1", rows, cols)
		}
		if f.Coupling == nil {
			return fail("a grid needs \"coupling\"")
		}
		d := float64(rows) * float64(cols)
		mem = pottsMemory(size, d, float64(q), gridEdgeCount(rows, cols, f.Grid.Periodic), false, f.Fields != nil)
		what = fmt.Sprintf("the %d×%d Potts grid of %d states", rows, cols, q)
	} else {
		if f.N == nil {
			return fail("an edge list needs \"n\", the number of variables")
		}
		n = *f.N
		if n < 1 {
			return fail("\"n\" is %d; want at least one variable", n)
		}
		mem = pottsMemory(size, float64(n), float64(q), float64(len(f.Edges)), true, f.Fields != nil)
		what = fmt.Sprintf("the Potts model of %d variables of %d states and %d edges", n, q, len(f.Edges))
	}
	cells := float64(n) * float64(q)
	if f.Grid != nil {
		cells = float64(f.Grid.Rows) * float64(f.Grid.Cols) * float64(q)
	}
	if cells > math.MaxInt/16 {
		return fail("%.4g fields (variables × states) are too many to hold", cells)
	}
	if f.Grid != nil {
		n = f.Grid.Rows * f.Grid.Cols // fits: cells does
	}
	// The budget first, without the command's share: the shape's state
	// values (q of them) are allocated only once the model's memory fits.
	if err := (Options{Budget: o.Budget}).check(what, mem, Shape{}); err != nil {
		return nil, Memory{}, err
	}
	vals := make([]float64, q)
	for s := range vals {
		vals[s] = float64(s)
	}
	if err := o.check(what, mem, Shape{Model: uniformModel(n, vals)}); err != nil {
		return nil, Memory{}, err
	}
	var edges []potts.Edge
	if f.Grid != nil {
		edges = potts.GridEdges(f.Grid.Rows, f.Grid.Cols, f.Grid.Periodic, *f.Coupling)
	} else {
		edges = make([]potts.Edge, 0, len(f.Edges))
		for k, e := range f.Edges {
			switch {
			case len(e) == 2 && f.Coupling == nil:
				return fail("edge %d has 2 entries and there is no \"coupling\"; want [i, j, coupling], or [i, j] with \"coupling\"", k)
			case len(e) != 2 && len(e) != 3:
				return fail("edge %d has %d entries; want [i, j, coupling], or [i, j] with \"coupling\"", k, len(e))
			}
			for _, v := range e[:2] {
				if v != math.Trunc(v) || v < 0 || v >= float64(n) {
					return fail("edge %d names variable %v; want an integer index in [0, %d)", k, v, n)
				}
			}
			c := 0.0
			if len(e) == 3 {
				c = e[2]
			} else {
				c = *f.Coupling
			}
			edges = append(edges, potts.Edge{I: int(e[0]), J: int(e[1]), Coupling: c})
		}
	}
	fields := make([]float64, n*q)
	switch {
	case f.Field != nil:
		if len(f.Field) != q {
			return fail("\"field\" has %d entries; want q = %d, one per state", len(f.Field), q)
		}
		for i := range n {
			copy(fields[i*q:(i+1)*q], f.Field)
		}
	case f.Fields != nil:
		if len(f.Fields) != n {
			return fail("the model has %d variables but \"fields\" has %d rows", n, len(f.Fields))
		}
		for i, row := range f.Fields {
			if len(row) != q {
				return fail("row %d of \"fields\" has %d entries; want q = %d, one per state", i, len(row), q)
			}
			copy(fields[i*q:(i+1)*q], row)
		}
	}
	for k := range edges {
		edges[k].Coupling /= temp
	}
	for k := range fields {
		fields[k] /= temp
	}
	var m *potts.Potts
	var err error
	if f.Grid != nil {
		m, err = potts.NewGrid(f.Grid.Rows, f.Grid.Cols, f.Grid.Periodic, q, edges, fields)
	} else {
		m, err = potts.New(n, q, edges, fields)
	}
	if err != nil {
		return nil, Memory{}, named("potts model", "potts", err)
	}
	if f.States != nil {
		if m, err = m.WithStateNames(f.States); err != nil {
			return fail("\"states\": %v", err)
		}
	}
	return m, mem, nil
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

func (f *rbmFile) build(o Options, size float64) (model.Model, Memory, error) {
	fail := func(format string, a ...any) (model.Model, Memory, error) {
		return nil, Memory{}, fmt.Errorf("rbm model: "+format, a...)
	}
	units := spinStates
	if f.Units == "binary" {
		units = binaryStates
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
		mem := rbmMemory(size, float64(*f.Visible), float64(*f.Hidden), true)
		if err := o.check(fmt.Sprintf("the RBM with %d visible and %d hidden units", *f.Visible, *f.Hidden), mem, Shape{Model: uniformModel(*f.Visible, units)}); err != nil {
			return nil, Memory{}, err
		}
		W, bv, c, err := rbm.RandomParams(*f.Visible, *f.Hidden, *f.Random.WStd, *f.Random.BiasStd, f.Random.Seed)
		if err != nil {
			return nil, Memory{}, named("rbm model", "rbm", err)
		}
		m, err := build(W, bv, c)
		if err != nil {
			return nil, Memory{}, named("rbm model", "rbm", err)
		}
		return m, mem, nil
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
	mem := rbmMemory(size, float64(len(f.W)), float64(len(f.W[0])), false)
	if err := o.check(fmt.Sprintf("the RBM with %d visible and %d hidden units", len(f.W), len(f.W[0])), mem, Shape{Model: uniformModel(len(f.W), units)}); err != nil {
		return nil, Memory{}, err
	}
	m, err := build(f.W, f.B, f.C)
	if err != nil {
		return nil, Memory{}, named("rbm model", "rbm", err)
	}
	return m, mem, nil
}

// The memory of a JSON model, for the budget: what it takes at its peak
// (the text, its decoded form and the model being built) and what the
// model holds afterwards (its Bytes). Measured with runtime/metrics (the
// live heap sampled every 0.1 ms under GOGC=1, and what stays live after a
// collection) on files of 10⁵–5·10⁵ variables, edges or 10⁶ weights; the
// comments give the measured peak as a share of the estimate. Building a
// model allocates more than its peak in all, garbage that the collector
// frees as it goes (a grid's maps: about five times its peak); the fuzz
// test holds ParseLimit's allocations to allocPerPeak times the budget.
