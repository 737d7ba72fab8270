package modelfile

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/internal/suggest"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model/bif"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/model/uai"
)

// Loaded is a model read from a file, with the evidence of a UAI network
// clamped: Model is over the free variables, File over every variable of
// the file.
type Loaded struct {
	Model, File model.Model
	// Free[i] is the file's index of Model's variable i; nil without
	// evidence.
	Free []int
	// Evidence holds the observed state of each evidence variable.
	Evidence map[int]int
	// Memory is the estimate of what reading the file took and what the
	// model holds.
	Memory Memory
	// Warnings say what is odd about the file without stopping the
	// work, a line each: a BAYES network whose tables are not
	// conditional distributions (uai.CheckBayes).
	Warnings []string
}

// Memory is the estimate of a loaded model's memory, in bytes, without
// memlimit.Base.
type Memory struct {
	// Peak is the most that reading the file and building the model
	// takes: the model and, at the same time, the file's text and its
	// decoded form (a JSON model) or the build's transients (a network).
	Peak float64
	// Held is what the model holds afterwards: both graphs of a network
	// with evidence, the file's and the clamped one.
	Held float64
}

// Need returns the memory of loading the model and then running work that
// needs extra bytes besides it: the larger of Peak and Held + extra.
func (m Memory) Need(extra float64) float64 { return max(m.Peak, m.Held+extra) }

// Shape is what a command's estimate may depend on before a model is
// built: Model stands for the model (its Dim and States are the model's;
// it has no probabilities: LogProb panics), and a UAI network's numbers of
// factors and scope entries.
type Shape struct {
	Model                 model.Model
	Factors, ScopeEntries int
}

// Options are OpenOptions' limits.
type Options struct {
	Budget memlimit.Budget
	// Extra, when not nil, estimates the bytes the command needs besides
	// the model, from its shape: the checks made while the file is read
	// (before a network's tables, before a JSON model is built) refuse
	// memlimit.Base + Memory.Need(Extra(shape)) over the budget, so that a
	// model that leaves too little room for the command is refused before
	// it is read or built. The command checks its estimate again with the
	// model.
	Extra func(Shape) float64
	// What says what the command does with the model, for a refusal
	// ("exact inference"); empty: reading the model.
	What string
	// Given is evidence by name, "rain=yes,sprinkler=off" (--given): a
	// variable's name (a BIF network's, or z3 in a UAI network) and a
	// state's name (a BIF network's, or the state index in a UAI
	// network), joined with any evidence file's.
	Given string
}

// extra returns o.Extra(s), or 0.
func (o Options) extra(s Shape) float64 {
	if o.Extra == nil {
		return 0
	}
	return o.Extra(s)
}

// check refuses a model whose memory (Base added) is over the budget,
// naming what, then one that leaves too little room for the command.
func (o Options) check(what string, mem Memory, s Shape) error {
	if err := o.Budget.Check(what, memlimit.Base+mem.Need(0)); err != nil || o.Extra == nil {
		return err
	}
	if o.What != "" {
		what += " and " + o.What
	}
	return o.Budget.Check(what, memlimit.Base+mem.Need(o.extra(s)))
}

// FlagError is an error in what a command line gave (--given's pairs,
// evidence for a model that takes none), not in a file: a command reports
// it as a usage error.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }

// Unwrap returns the error behind the flag's.
func (e *FlagError) Unwrap() error { return e.Err }

func flagErrorf(format string, a ...any) error {
	return &FlagError{fmt.Errorf(format, a...)}
}

// IsUAI reports whether path names a UAI network (by its .uai suffix).
func IsUAI(path string) bool { return strings.HasSuffix(strings.ToLower(path), ".uai") }

// IsBIF reports whether path names a Bayesian network in the BIF format
// (by its .bif suffix) or in XMLBIF (IsXMLBIF).
func IsBIF(path string) bool {
	return strings.HasSuffix(strings.ToLower(path), ".bif") || IsXMLBIF(path)
}

// IsXMLBIF reports whether path names a Bayesian network in XMLBIF (by
// its .xml or .xmlbif suffix).
func IsXMLBIF(path string) bool {
	p := strings.ToLower(path)
	return strings.HasSuffix(p, ".xml") || strings.HasSuffix(p, ".xmlbif")
}

// IsNetwork reports whether path names a network file (UAI or BIF), the
// files that evidence goes with.
func IsNetwork(path string) bool { return IsUAI(path) || IsBIF(path) }

// Open reads a JSON model file or a UAI network (by its .uai suffix) and,
// for a UAI network, clamps the evidence file when one is given.
func Open(path, evidence string) (*Loaded, error) {
	return OpenLimit(context.Background(), path, evidence, memlimit.Budget{Limit: MaxFileBytes * 8})
}

// OpenLimit is Open within a memory budget; it stops with ctx's error when
// ctx is canceled.
func OpenLimit(ctx context.Context, path, evidence string, b memlimit.Budget) (*Loaded, error) {
	return OpenOptions(ctx, path, evidence, Options{Budget: b})
}

// OpenOptions is Open within the limits of o (see Options); it stops with
// ctx's error when ctx is canceled.
func OpenOptions(ctx context.Context, path, evidence string, o Options) (*Loaded, error) {
	if IsBIF(path) {
		if evidence != "" {
			return nil, flagErrorf("an evidence file (.evid) goes with a UAI network; give a BIF network's evidence by name with --given (rain=yes,sprinkler=off)")
		}
		g, err := readBIF(path, o)
		if err != nil {
			return nil, err
		}
		gs := g.Shape()
		l := &Loaded{Model: g, File: g, Memory: Memory{Peak: uai.ReadBytes(gs), Held: gs.Bytes()}}
		return l.clamp(path, "--given", nil, o)
	}
	if !IsUAI(path) {
		if evidence != "" || o.Given != "" {
			return nil, flagErrorf("evidence goes with a network (a UAI network .uai or a BIF network .bif); %s is a JSON model file", path)
		}
		m, mem, err := loadJSON(ctx, path, o)
		if err != nil {
			return nil, err
		}
		return &Loaded{Model: m, File: m, Memory: mem}, nil
	}
	// The network is refused before its tables are read when the graph,
	// or the command with it, would not fit.
	bayes := false
	check := func(h *uai.Header) error {
		bayes = h.Bayes
		mem := Memory{Peak: uai.ReadBytes(h.Shape), Held: h.Shape.Bytes()}
		s := Shape{Model: headerModel(h), Factors: h.Shape.Factors, ScopeEntries: h.Shape.ScopeEntries}
		what := fmt.Sprintf("%s: the network of %d variables and %d factors", path, h.Shape.Variables, h.Shape.Factors)
		return o.check(what, mem, s)
	}
	g, err := uai.ReadFileCheck(ctx, path, fileLimit(o.Budget), check)
	if err != nil {
		return nil, err
	}
	gs := g.Shape()
	l := &Loaded{Model: g, File: g, Memory: Memory{Peak: uai.ReadBytes(gs), Held: gs.Bytes()}}
	if bayes {
		if w := uai.CheckBayes(g); w != "" {
			l.Warnings = append(l.Warnings, path+": "+w)
		}
	}
	var ev map[int]int
	if evidence != "" {
		if ev, err = uai.ReadEvidenceFileLimit(evidence, fileLimit(o.Budget)); err != nil {
			return nil, err
		}
	}
	what := evidence
	if what == "" {
		what = "--given"
	}
	return l.clamp(path, what, ev, o)
}

// clamp clamps the network l holds to the evidence of an evidence file
// (ev) and of o.Given, and checks the memory first.
func (l *Loaded) clamp(path, what string, ev map[int]int, o Options) (*Loaded, error) {
	g := l.File.(*factorgraph.Graph)
	given, err := ParseGiven(g, o.Given)
	if err != nil {
		return nil, err
	}
	for v, s := range given {
		if old, ok := ev[v]; ok && old != s {
			return nil, fmt.Errorf("--given sets %s to state %d and the evidence file to %d", model.VariableName(g, v), s, old)
		}
		if ev == nil {
			ev = map[int]int{}
		}
		ev[v] = s
	}
	if len(ev) == 0 {
		return l, nil
	}
	gs := g.Shape()
	// The clamped graph is at most the file's: check the two before
	// clamping.
	shape := Shape{Model: g, Factors: gs.Factors, ScopeEntries: gs.ScopeEntries}
	if err := o.check(fmt.Sprintf("%s with the evidence of %s", path, what), clampMemory(gs, gs), shape); err != nil {
		return nil, err
	}
	free, idx, err := g.Clamp(ev)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	l.Model, l.Free, l.Evidence = free, idx, ev
	l.Memory = clampMemory(gs, free.Shape())
	return l, nil
}

// ParseGiven reads evidence by name, "rain=yes,sprinkler=off", against a
// network: each variable by its name (model.VariableName: a BIF network's
// own, z3 in a UAI network) and each state by its name, or by its index
// when the states are unnamed. A backslash makes the next character part
// of the name or state, so that names holding a comma or = can be given
// ("a\,b=x\=1" is variable "a,b" in state "x=1"). It returns the state
// index of each variable named; an empty spec gives none.
func ParseGiven(g *factorgraph.Graph, spec string) (map[int]int, error) {
	out := map[int]int{}
	if strings.TrimSpace(spec) == "" {
		return out, nil
	}
	byName := map[string]int{}
	var names []string
	for i := range g.Dim() {
		n := model.VariableName(g, i)
		byName[n] = i
		names = append(names, n)
	}
	parts, err := splitEscaped(spec, ',')
	if err != nil {
		return nil, flagErrorf("--given %q: %v", spec, err)
	}
	for _, part := range parts {
		// The first unescaped = ends the name (a state may hold more).
		pair, _ := splitEscaped(strings.TrimSpace(part), '=')
		ok := len(pair) >= 2
		name, state := "", ""
		if ok {
			name, state = strings.TrimSpace(unescape(pair[0])), strings.TrimSpace(unescape(strings.Join(pair[1:], "=")))
		}
		if strings.TrimSpace(part) == "" {
			return nil, flagErrorf("--given %q has an empty pair (a comma too many); want NAME=STATE pairs separated by commas (rain=yes,sprinkler=off)", spec)
		}
		if !ok || name == "" || state == "" {
			return nil, flagErrorf("--given %q: want NAME=STATE pairs separated by commas (rain=yes,sprinkler=off)", part)
		}
		v, ok := byName[name]
		if !ok {
			return nil, flagErrorf("--given: the network has no variable %q%s", name, suggest.Hint(name, names))
		}
		if _, dup := out[v]; dup {
			return nil, flagErrorf("--given names %s twice", name)
		}
		s := -1
		if sn := g.StateNames(v); sn != nil {
			for k, n := range sn {
				if n == state {
					s = k
				}
			}
			if s < 0 {
				return nil, flagErrorf("--given: %q is not a state of %s; its states are %s", state, name, strings.Join(sn, ", "))
			}
		} else {
			k, err := strconv.Atoi(state)
			if err != nil || k < 0 || k >= len(g.States(v)) {
				return nil, flagErrorf("--given: %s has states 0 to %d (by index); got %q", name, len(g.States(v))-1, state)
			}
			s = k
		}
		out[v] = s
	}
	return out, nil
}

// splitEscaped splits s at each sep not preceded by a backslash, keeping
// the escapes (unescape removes them); a trailing lone backslash is an
// error.
func splitEscaped(s string, sep byte) ([]string, error) {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 == len(s) {
				return nil, fmt.Errorf("a backslash at the end escapes nothing; want \\, or \\= or \\\\ inside a name or state")
			}
			i++
		case sep:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:]), nil
}

// unescape removes the backslashes of splitEscaped's escapes.
func unescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// readBIF reads a Bayesian network in the BIF or XMLBIF format, refusing a file
// over the budget's file limit before it reads it.
func readBIF(path string, o Options) (*factorgraph.Graph, error) {
	f, err := safeio.Open(path, "network file", fileLimit(o.Budget))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	read := bif.Read
	if IsXMLBIF(path) {
		read = bif.ReadXML
	}
	g, _, err := read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	gs := g.Shape()
	s := Shape{Model: g, Factors: gs.Factors, ScopeEntries: gs.ScopeEntries}
	if err := o.check(fmt.Sprintf("%s: the network of %d variables and %d factors", path, gs.Variables, gs.Factors), Memory{Peak: uai.ReadBytes(gs), Held: gs.Bytes()}, s); err != nil {
		return nil, err
	}
	return g, nil
}

// clampMemory estimates the memory of a network of shape file and its graph
// clamped to shape free: Clamp holds two maps of the file's variables (16
// bytes a variable) while it builds the clamped graph.
func clampMemory(file, free factorgraph.Shape) Memory {
	held := file.Bytes() + free.Bytes()
	return Memory{Peak: max(uai.ReadBytes(file), file.Bytes()+16*float64(file.Variables)+uai.ReadBytes(free)), Held: held}
}

// headerModel stands for the network of a header (see Shape).
func headerModel(h *uai.Header) model.Model {
	maxK := 0
	for i := range h.Shape.Variables {
		maxK = max(maxK, h.Card(i))
	}
	vals := make([]float64, maxK)
	for s := range vals {
		vals[s] = float64(s)
	}
	return &shapeModel{d: h.Shape.Variables, card: h.Card, vals: vals}
}

// uniformModel stands for a model of d variables, each with the states of
// vals.
func uniformModel(d int, vals []float64) model.Model { return &shapeModel{d: d, vals: vals} }

// spinShape is a pairwise ±1 model's shape (model.SpinShape): its number
// of edges and its spins' degrees, exact for grids and complete graphs,
// bounded for edge lists (whose degrees are not counted before the model
// is built: Σ 2^min(deg, k) ≤ d + (2^k − 1)/k · 2E, the chord of a convex
// function).
type spinShape struct {
	shapeModel
	edges  int
	degree func(i int) int // nil: the bound
}

func (s *spinShape) SpinEdges() int { return s.edges }

func (s *spinShape) SpinTableEntries(maxDeg int) float64 {
	if s.degree == nil {
		if maxDeg < 1 {
			return float64(s.d)
		}
		return float64(s.d) + float64(int(1)<<maxDeg-1)/float64(maxDeg)*2*float64(s.edges)
	}
	var e float64
	for i := range s.d {
		if deg := s.degree(i); deg <= maxDeg {
			e += float64(int(1) << deg)
		}
	}
	return e
}

// shapeModel is a model's shape: its variables and their states, nothing
// else.
type shapeModel struct {
	d    int
	card func(i int) int // each variable's number of states; nil: all of vals
	vals []float64
}

func (s *shapeModel) Dim() int { return s.d }

func (s *shapeModel) States(i int) []float64 {
	if s.card != nil {
		k := s.card(i)
		return s.vals[:k:k]
	}
	return s.vals
}

func (s *shapeModel) LogProb([]int) float64 {
	panic("modelfile: a model's shape has no probabilities")
}
