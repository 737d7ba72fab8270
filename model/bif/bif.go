// Package bif reads Bayesian networks in the Bayesian Interchange Format
// (BIF, the text format of bnlearn's network repository and of pgmpy's
// readers and writers) into factor graphs whose variables and states keep
// their names: one factor per conditional probability table, the child
// varying fastest, so that exact inference (variable elimination), every
// sampler and every output work on them as on UAI networks.
//
// The grammar read:
//
//	network NAME { property …; }
//	variable NAME { type discrete [ K ] { s1, s2, …, sK }; property …; }
//	probability ( CHILD ) { table p1, …, pK; }
//	probability ( CHILD | P1, P2, … ) { (v1, v2, …) p1, …, pK; … default p1, …, pK; }
//
// Comments (// and /* */) and property lines are skipped; names may be
// quoted. A table over parents ("probability ( C | P ) { table … }") is
// refused: tools lay it out differently, so the rows say it unambiguously.
// Each row of probabilities must be non-negative and sum to 1 within 1e-6
// (it is then renormalised); every parent configuration needs a row or a
// default.
package bif

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/dstein/dstein/model/factorgraph"
)

// Why one file of about 620 lines: the BIF tokenizer, parser and table assembly are one
// grammar; the network's graph and cycle check sit with the type they belong to.

// Network is a Bayesian network read from a BIF file.
type Network struct {
	Name      string
	Variables []string   // in the file's order: variable i of the graph
	States    [][]string // each variable's state names
	Parents   [][]int    // each variable's parents (indices)
	// CPT[i] lists P(child = s | parents = a) with the parents' states
	// in row-major order (last parent fastest) and the child fastest.
	CPT [][]float64
}

// Read reads a BIF network and returns its factor graph (with names) and
// the network.
func Read(r io.Reader) (*factorgraph.Graph, *Network, error) {
	data, err := io.ReadAll(bufio.NewReader(r))
	if err != nil {
		return nil, nil, err
	}
	// A leading UTF-8 byte order mark is ignored, as in every other input.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	p := &parser{toks: tokenize(string(data))}
	return withGraph(p.network())
}

// withGraph returns a network read without error with its factor graph.
func withGraph(net *Network, err error) (*factorgraph.Graph, *Network, error) {
	if err != nil {
		return nil, nil, err
	}
	g, err := net.Graph()
	if err != nil {
		return nil, nil, err
	}
	return g, net, nil
}

// Graph returns the network as a factor graph with names. It refuses a
// variable among its own parents, a parent named twice, and a cycle of
// parents: the product of the tables is then not a distribution.
func (n *Network) Graph() (*factorgraph.Graph, error) {
	if err := n.acyclic(); err != nil {
		return nil, err
	}
	card := make([]int, len(n.Variables))
	for i, st := range n.States {
		card[i] = len(st)
	}
	factors := make([]factorgraph.Factor, len(n.Variables))
	for i := range n.Variables {
		scope := append(append([]int(nil), n.Parents[i]...), i)
		lt := make([]float64, len(n.CPT[i]))
		for k, p := range n.CPT[i] {
			lt[k] = math.Log(p) // log 0 = −Inf: an impossible state
		}
		factors[i] = factorgraph.Factor{Scope: scope, LogTable: lt}
	}
	g, err := factorgraph.NewOwned(card, factors)
	if err != nil {
		return nil, err
	}
	return g.Named(n.Variables, n.States)
}

// acyclic checks that the parents make a directed acyclic graph.
func (n *Network) acyclic() error {
	for c, ps := range n.Parents {
		for j, p := range ps {
			if p == c {
				return fmt.Errorf("%q is among its own parents", n.Variables[c])
			}
			for _, q := range ps[:j] {
				if q == p {
					return fmt.Errorf("%q names parent %q twice", n.Variables[c], n.Variables[p])
				}
			}
		}
	}
	// Depth-first search from each variable along its parents: 1 marks a
	// variable on the current path, 2 one whose ancestors are done.
	mark := make([]byte, len(n.Variables))
	var path []int
	var visit func(v int) error
	visit = func(v int) error {
		mark[v] = 1
		path = append(path, v)
		for _, p := range n.Parents[v] {
			switch mark[p] {
			case 1:
				// path[k+1] is a parent of path[k]; v's parent p is on it.
				k := len(path) - 1
				for path[k] != p {
					k--
				}
				var names []string
				for _, u := range path[k:] {
					names = append(names, n.Variables[u])
				}
				names = append(names, n.Variables[p])
				return fmt.Errorf("the parents form a cycle, %s (each variable has the next as a parent): a Bayesian network's graph must be acyclic", strings.Join(names, " ← "))
			case 0:
				if err := visit(p); err != nil {
					return err
				}
			}
		}
		path = path[:len(path)-1]
		mark[v] = 2
		return nil
	}
	for v := range n.Variables {
		if mark[v] == 0 {
			if err := visit(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// token is a word, a number, a quoted name or one punctuation character,
// with its line.
type token struct {
	s    string
	line int
}

func tokenize(src string) []token {
	var out []token
	line := 1
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || unicode.IsSpace(rune(c)):
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			i += 2
			for i+1 < len(src) && !(src[i] == '*' && src[i+1] == '/') {
				if src[i] == '\n' {
					line++
				}
				i++
			}
			i += 2
		case c == '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				j++
			}
			out = append(out, token{src[i+1 : min(j, len(src))], line})
			i = j + 1
		case strings.ContainsRune("{}()[]|,;", rune(c)):
			out = append(out, token{string(c), line})
			i++
		default:
			j := i
			for j < len(src) && !unicode.IsSpace(rune(src[j])) && !strings.ContainsRune("{}()[]|,;\"", rune(src[j])) {
				j++
			}
			if j == i {
				j++ // a byte no rule takes: a token of its own, so that the scan moves on
			}
			out = append(out, token{src[i:j], line})
			i = j
		}
	}
	return out
}

type parser struct {
	toks []token
	pos  int
}

func (p *parser) peek() (token, bool) {
	if p.pos >= len(p.toks) {
		return token{}, false
	}
	return p.toks[p.pos], true
}

func (p *parser) next() (token, error) {
	t, ok := p.peek()
	if !ok {
		line := 0
		if len(p.toks) > 0 {
			line = p.toks[len(p.toks)-1].line
		}
		return t, fmt.Errorf("line %d: the file ends in the middle of a block", line)
	}
	p.pos++
	return t, nil
}

func (p *parser) expect(s string) error {
	t, err := p.next()
	if err != nil {
		return err
	}
	if t.s != s {
		return fmt.Errorf("line %d: %q where %q was expected", t.line, t.s, s)
	}
	return nil
}

// skipBlock skips to the "}" that closes the block just opened.
func (p *parser) skipBlock() error {
	depth := 1
	for depth > 0 {
		t, err := p.next()
		if err != nil {
			return err
		}
		switch t.s {
		case "{":
			depth++
		case "}":
			depth--
		}
	}
	return nil
}

// skipStatement skips to the ";" that ends the statement.
func (p *parser) skipStatement() error {
	for {
		t, err := p.next()
		if err != nil {
			return err
		}
		if t.s == ";" {
			return nil
		}
	}
}

func (p *parser) network() (*Network, error) {
	net := &Network{}
	index := map[string]int{}
	type prob struct {
		line    int
		child   int
		parents []int
		rows    map[string][]float64 // parent states joined by ","
		dflt    []float64
		table   []float64
	}
	var probs []prob
	for {
		t, ok := p.peek()
		if !ok {
			break
		}
		p.pos++
		switch t.s {
		case "network":
			name, err := p.next()
			if err != nil {
				return nil, err
			}
			net.Name = name.s
			if err := p.expect("{"); err != nil {
				return nil, err
			}
			if err := p.skipBlock(); err != nil {
				return nil, err
			}
		case "variable":
			name, err := p.next()
			if err != nil {
				return nil, err
			}
			if _, dup := index[name.s]; dup {
				return nil, fmt.Errorf("line %d: variable %q is defined twice", name.line, name.s)
			}
			states, err := p.variableBody(name)
			if err != nil {
				return nil, err
			}
			index[name.s] = len(net.Variables)
			net.Variables = append(net.Variables, name.s)
			net.States = append(net.States, states)
		case "probability":
			pr := prob{line: t.line, rows: map[string][]float64{}}
			if err := p.expect("("); err != nil {
				return nil, err
			}
			var names []token
			for {
				n, err := p.next()
				if err != nil {
					return nil, err
				}
				if n.s == ")" {
					break
				}
				if n.s == "|" || n.s == "," {
					continue
				}
				names = append(names, n)
			}
			if len(names) == 0 {
				return nil, fmt.Errorf("line %d: a probability block names no variable", t.line)
			}
			for k, n := range names {
				v, ok := index[n.s]
				if !ok {
					return nil, fmt.Errorf("line %d: probability of undefined variable %q (variables must be defined before their tables)", n.line, n.s)
				}
				if k == 0 {
					pr.child = v
				} else {
					pr.parents = append(pr.parents, v)
				}
			}
			if err := p.expect("{"); err != nil {
				return nil, err
			}
			if err := p.probabilityBody(net, &pr.rows, &pr.dflt, &pr.table, pr.child, pr.parents); err != nil {
				return nil, err
			}
			probs = append(probs, pr)
		default:
			return nil, fmt.Errorf("line %d: %q where network, variable or probability was expected", t.line, t.s)
		}
	}
	if len(net.Variables) == 0 {
		return nil, fmt.Errorf("the file defines no variable")
	}
	net.Parents = make([][]int, len(net.Variables))
	net.CPT = make([][]float64, len(net.Variables))
	done := make([]bool, len(net.Variables))
	for _, pr := range probs {
		c := pr.child
		if done[c] {
			return nil, fmt.Errorf("line %d: a second probability block for %q", pr.line, net.Variables[c])
		}
		done[c] = true
		net.Parents[c] = pr.parents
		k := len(net.States[c])
		if pr.table != nil {
			if len(pr.parents) > 0 {
				return nil, fmt.Errorf("line %d: a table for %q over parents; write one row per parent configuration, (state, …) p1, …", pr.line, net.Variables[c])
			}
			if err := checkRow(pr.table, k, pr.line, net.Variables[c]); err != nil {
				return nil, err
			}
			net.CPT[c] = pr.table
			continue
		}
		configs := 1
		for _, q := range pr.parents {
			configs *= len(net.States[q])
		}
		cpt := make([]float64, 0, configs*k)
		a := make([]int, len(pr.parents))
		for range configs {
			key := make([]string, len(a))
			for j, q := range pr.parents {
				key[j] = net.States[q][a[j]]
			}
			row, ok := pr.rows[strings.Join(key, ",")]
			if !ok {
				row = pr.dflt
			}
			if row == nil {
				return nil, fmt.Errorf("line %d: %q has no row for its parents at (%s) and no default", pr.line, net.Variables[c], strings.Join(key, ", "))
			}
			cpt = append(cpt, row...)
			for j := len(a) - 1; j >= 0; j-- {
				a[j]++
				if a[j] < len(net.States[pr.parents[j]]) {
					break
				}
				a[j] = 0
			}
		}
		net.CPT[c] = cpt
	}
	for i, d := range done {
		if !d {
			return nil, fmt.Errorf("variable %q has no probability block", net.Variables[i])
		}
	}
	return net, nil
}

// variableBody reads "{ type discrete [ K ] { s1, …, sK }; property …; }".
func (p *parser) variableBody(name token) ([]string, error) {
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	var states []string
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		switch t.s {
		case "}":
			if states == nil {
				return nil, fmt.Errorf("line %d: variable %q has no type discrete line", name.line, name.s)
			}
			return states, nil
		case "type":
			kind, err := p.next()
			if err != nil {
				return nil, err
			}
			if kind.s != "discrete" {
				return nil, fmt.Errorf("line %d: variable %q is of type %q; only discrete variables are read", kind.line, name.s, kind.s)
			}
			if err := p.expect("["); err != nil {
				return nil, err
			}
			kt, err := p.next()
			if err != nil {
				return nil, err
			}
			k, err := strconv.Atoi(kt.s)
			if err != nil || k < 1 {
				return nil, fmt.Errorf("line %d: variable %q has %q states; want a whole number ≥ 1", kt.line, name.s, kt.s)
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			if err := p.expect("{"); err != nil {
				return nil, err
			}
			seen := map[string]bool{}
			for {
				st, err := p.next()
				if err != nil {
					return nil, err
				}
				if st.s == "}" {
					break
				}
				if st.s == "," {
					continue
				}
				if seen[st.s] {
					return nil, fmt.Errorf("line %d: variable %q names state %q twice", st.line, name.s, st.s)
				}
				seen[st.s] = true
				states = append(states, st.s)
			}
			if len(states) != k {
				return nil, fmt.Errorf("line %d: variable %q declares %d states and names %d", kt.line, name.s, k, len(states))
			}
			if err := p.expect(";"); err != nil {
				return nil, err
			}
		default:
			if err := p.skipStatement(); err != nil {
				return nil, err
			}
		}
	}
}

// probabilityBody reads the rows, default and table of a probability
// block up to its "}".
func (p *parser) probabilityBody(net *Network, rows *map[string][]float64, dflt, table *[]float64, child int, parents []int) error {
	k := len(net.States[child])
	name := net.Variables[child]
	numbers := func() ([]float64, int, error) {
		var out []float64
		line := 0
		for {
			t, err := p.next()
			if err != nil {
				return nil, line, err
			}
			line = t.line
			if t.s == ";" {
				return out, line, nil
			}
			if t.s == "," {
				continue
			}
			v, err := strconv.ParseFloat(t.s, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, t.line, fmt.Errorf("line %d: %q in the table of %q is not a finite number", t.line, t.s, name)
			}
			out = append(out, v)
		}
	}
	for {
		t, err := p.next()
		if err != nil {
			return err
		}
		switch t.s {
		case "}":
			return nil
		case "table":
			if *table != nil {
				return fmt.Errorf("line %d: the probability block of %q has a second table; want one", t.line, name)
			}
			v, line, err := numbers()
			if err != nil {
				return err
			}
			if len(parents) == 0 {
				if err := checkRow(v, k, line, name); err != nil {
					return err
				}
			}
			*table = v
		case "default":
			if *dflt != nil {
				return fmt.Errorf("line %d: the probability block of %q has a second default row; want at most one", t.line, name)
			}
			v, line, err := numbers()
			if err != nil {
				return err
			}
			if err := checkRow(v, k, line, name); err != nil {
				return err
			}
			*dflt = v
		case "(":
			var key []string
			for {
				s, err := p.next()
				if err != nil {
					return err
				}
				if s.s == ")" {
					break
				}
				if s.s != "," {
					key = append(key, s.s)
				}
			}
			if len(key) != len(parents) {
				return fmt.Errorf("line %d: a row of %q names %d parent states; it has %d parents", t.line, name, len(key), len(parents))
			}
			for j, s := range key {
				found := false
				for _, st := range net.States[parents[j]] {
					found = found || st == s
				}
				if !found {
					return fmt.Errorf("line %d: %q is not a state of %q (its states: %s)", t.line, s, net.Variables[parents[j]], strings.Join(net.States[parents[j]], ", "))
				}
			}
			v, line, err := numbers()
			if err != nil {
				return err
			}
			if err := checkRow(v, k, line, name); err != nil {
				return err
			}
			jk := strings.Join(key, ",")
			if _, dup := (*rows)[jk]; dup {
				return fmt.Errorf("line %d: %q has two rows for (%s)", t.line, name, strings.Join(key, ", "))
			}
			(*rows)[jk] = v
		default:
			if err := p.skipStatement(); err != nil {
				return err
			}
		}
	}
}

// checkRow checks that a row holds k probabilities summing to 1 within
// 1e-6 and renormalises it.
func checkRow(v []float64, k, line int, name string) error {
	if len(v) != k {
		return fmt.Errorf("line %d: a row of %q has %d probabilities; %q has %d states", line, name, len(v), name, k)
	}
	var sum float64
	for _, x := range v {
		if x < 0 {
			return fmt.Errorf("line %d: a probability of %q is %v; want ≥ 0", line, name, x)
		}
		sum += x
	}
	if math.Abs(sum-1) > 1e-6 {
		return fmt.Errorf("line %d: a row of %q sums to %v; want 1 (within 1e-6)", line, name, sum)
	}
	for j := range v {
		v[j] /= sum
	}
	return nil
}
