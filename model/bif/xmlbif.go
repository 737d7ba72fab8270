package bif

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/dstein/dstein/model/factorgraph"
)

// ReadXML reads a Bayesian network in XMLBIF (version 0.3, the XML format
// of F. Cozman's interchange proposal that pgmpy, Weka and JavaBayes write)
// and returns its factor graph (with names) and the network:
//
//	<BIF VERSION="0.3"><NETWORK><NAME>…</NAME>
//	  <VARIABLE TYPE="nature"><NAME>x</NAME><OUTCOME>a</OUTCOME>…</VARIABLE>
//	  <DEFINITION><FOR>x</FOR><GIVEN>p</GIVEN>…<TABLE>p1 p2 …</TABLE></DEFINITION>
//	</NETWORK></BIF>
//
// A TABLE lists P(FOR | GIVEN…) with FOR varying fastest and the GIVEN
// variables in row-major order (the last fastest), as Network.CPT holds
// them; numbers are separated by white space (commas are accepted too).
// PROBABILITY is read as DEFINITION (older files), PROPERTY elements are
// skipped, and only variables of TYPE "nature" (or no type) are read: a
// decision or utility node belongs to an influence diagram. Rows are
// checked as in Read. Errors name the line of the element at fault.
func ReadXML(r io.Reader) (*factorgraph.Graph, *Network, error) {
	return withGraph(parseXML(bufio.NewReader(r)))
}

// xmlVariable and xmlDefinition are the two elements of a NETWORK that
// carry the network.
type xmlVariable struct {
	Type     string   `xml:"TYPE,attr"`
	Name     string   `xml:"NAME"`
	Outcomes []string `xml:"OUTCOME"`
}

type xmlDefinition struct {
	For   []string `xml:"FOR"`
	Given []string `xml:"GIVEN"`
	Table []string `xml:"TABLE"`
}

func parseXML(r io.Reader) (*Network, error) {
	d := xml.NewDecoder(r)
	d.Strict = true
	net := &Network{}
	index := map[string]int{}
	type def struct {
		line int
		xmlDefinition
	}
	var defs []def
	sawBIF, sawNetwork, closed := false, false, false
	depth := 0 // depth inside NETWORK (1: its direct children)
	for {
		line, _ := d.InputPos()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return nil, fmt.Errorf("line %d: not well-formed XML: %s", se.Line, se.Msg)
			}
			return nil, err
		}
		if closed {
			// After </BIF>: white space, comments and processing
			// instructions only, as text BIF allows nothing after its
			// last block.
			switch t := tok.(type) {
			case xml.CharData:
				trimmed := bytes.TrimLeftFunc(t, unicode.IsSpace)
				if len(trimmed) == 0 {
					continue
				}
				// The text's own line: after the line breaks before it.
				line += bytes.Count(t[:len(t)-len(trimmed)], []byte{'\n'})
			case xml.Comment, xml.ProcInst:
				continue
			}
			return nil, fmt.Errorf("line %d: content after </BIF>; an XMLBIF file ends with it", line)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			switch {
			case !sawBIF:
				if name != "BIF" {
					return nil, fmt.Errorf("line %d: the document's element is <%s>; an XMLBIF file starts with <BIF>", line, name)
				}
				sawBIF = true
			case depth == 0 && name == "NETWORK":
				if sawNetwork {
					return nil, fmt.Errorf("line %d: a second <NETWORK>; a file holds one network", line)
				}
				sawNetwork, depth = true, 1
			case depth == 1 && name == "NAME":
				var s string
				if err := d.DecodeElement(&s, &t); err != nil {
					return nil, xmlErr(line, err)
				}
				net.Name = strings.TrimSpace(s)
			case depth == 1 && name == "VARIABLE":
				var v xmlVariable
				if err := d.DecodeElement(&v, &t); err != nil {
					return nil, xmlErr(line, err)
				}
				if ty := strings.ToLower(strings.TrimSpace(v.Type)); ty != "" && ty != "nature" {
					return nil, fmt.Errorf("line %d: variable %q has TYPE %q; only chance (\"nature\") variables make a Bayesian network", line, v.Name, v.Type)
				}
				name := strings.TrimSpace(v.Name)
				if name == "" {
					return nil, fmt.Errorf("line %d: a <VARIABLE> without a <NAME>", line)
				}
				if _, dup := index[name]; dup {
					return nil, fmt.Errorf("line %d: variable %q is defined twice", line, name)
				}
				if len(v.Outcomes) == 0 {
					return nil, fmt.Errorf("line %d: variable %q has no <OUTCOME>", line, name)
				}
				states := make([]string, len(v.Outcomes))
				seen := map[string]bool{}
				for k, o := range v.Outcomes {
					o = strings.TrimSpace(o)
					if o == "" || seen[o] {
						return nil, fmt.Errorf("line %d: variable %q has an empty or repeated outcome %q", line, name, o)
					}
					seen[o], states[k] = true, o
				}
				index[name] = len(net.Variables)
				net.Variables = append(net.Variables, name)
				net.States = append(net.States, states)
			case depth == 1 && (name == "DEFINITION" || name == "PROBABILITY"):
				var x xmlDefinition
				if err := d.DecodeElement(&x, &t); err != nil {
					return nil, xmlErr(line, err)
				}
				defs = append(defs, def{line, x})
			case depth >= 1:
				// PROPERTY and anything else: skipped with its content.
				if err := d.Skip(); err != nil {
					return nil, xmlErr(line, err)
				}
			default:
				if err := d.Skip(); err != nil {
					return nil, xmlErr(line, err)
				}
			}
		case xml.EndElement:
			if depth == 1 && t.Name.Local == "NETWORK" {
				depth = 0
			}
			if depth == 0 && t.Name.Local == "BIF" {
				closed = true
			}
		}
	}
	if !sawBIF || !sawNetwork {
		return nil, fmt.Errorf("no <BIF><NETWORK> element; want an XMLBIF file (version 0.3)")
	}
	if len(net.Variables) == 0 {
		return nil, fmt.Errorf("the network defines no variable")
	}
	net.Parents = make([][]int, len(net.Variables))
	net.CPT = make([][]float64, len(net.Variables))
	done := make([]bool, len(net.Variables))
	lookup := func(line int, role, s string) (int, error) {
		v, ok := index[strings.TrimSpace(s)]
		if !ok {
			return 0, fmt.Errorf("line %d: %s %q is not a variable of the network", line, role, strings.TrimSpace(s))
		}
		return v, nil
	}
	for _, x := range defs {
		if len(x.For) != 1 {
			return nil, fmt.Errorf("line %d: a definition has %d <FOR> elements; want one", x.line, len(x.For))
		}
		c, err := lookup(x.line, "<FOR>", x.For[0])
		if err != nil {
			return nil, err
		}
		name := net.Variables[c]
		if done[c] {
			return nil, fmt.Errorf("line %d: a second definition for %q", x.line, name)
		}
		done[c] = true
		configs := 1
		for _, gv := range x.Given {
			p, err := lookup(x.line, "<GIVEN>", gv)
			if err != nil {
				return nil, err
			}
			net.Parents[c] = append(net.Parents[c], p)
			configs *= len(net.States[p])
			if configs > maxTable {
				return nil, fmt.Errorf("line %d: the table of %q has more than %d rows", x.line, name, maxTable)
			}
		}
		if len(x.Table) != 1 {
			return nil, fmt.Errorf("line %d: the definition of %q has %d <TABLE> elements; want one", x.line, name, len(x.Table))
		}
		vals, err := tableNumbers(x.Table[0], x.line, name)
		if err != nil {
			return nil, err
		}
		k := len(net.States[c])
		if len(vals) != configs*k {
			return nil, fmt.Errorf("line %d: the table of %q has %d numbers; want %d (%d states × %d parent configurations)", x.line, name, len(vals), configs*k, k, configs)
		}
		for r := range configs {
			if err := checkRow(vals[r*k:(r+1)*k], k, x.line, name); err != nil {
				return nil, err
			}
		}
		net.CPT[c] = vals
	}
	for i, ok := range done {
		if !ok {
			return nil, fmt.Errorf("variable %q has no <DEFINITION>", net.Variables[i])
		}
	}
	return net, nil
}

// maxTable bounds the rows of one table before it is allocated (a table
// that large would not fit in memory anyway).
const maxTable = 1 << 26

// tableNumbers parses a TABLE's numbers.
func tableNumbers(s string, line int, name string) ([]float64, error) {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' })
	out := make([]float64, len(f))
	for k, w := range f {
		v, err := strconv.ParseFloat(w, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("line %d: %q in the table of %q is not a finite number", line, w, name)
		}
		out[k] = v
	}
	return out, nil
}

// xmlErr names the line of the element whose content failed to decode.
func xmlErr(line int, err error) error {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("line %d: not well-formed XML: %s", se.Line, se.Msg)
	}
	return fmt.Errorf("line %d: %v", line, err)
}
