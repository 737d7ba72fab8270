package bif

import (
	"os"
	"strings"
	"testing"

	"github.com/dstein/dstein/model/factorgraph"
)

// FuzzRead: any input gives a network or an error, never a panic, and a
// network read is a valid factor graph whose tables match its states.
func FuzzRead(f *testing.F) {
	if data, err := os.ReadFile("testdata/asia.bif"); err == nil {
		f.Add(string(data))
	}
	f.Add("variable a { type discrete [ 2 ] { x, y }; }\nprobability ( a ) { table 0.5, 0.5; }")
	f.Add("variable a { type discrete [ 1 ] { x }; }\nvariable b { type discrete [ 2 ] { x, y }; }\nprobability ( a ) { table 1; }\nprobability ( b | a ) { default 0.2, 0.8; }")
	f.Add("/* */ network n { } variable \"a b\" { type discrete [ 2 ] { \"x\", y }; } probability ( \"a b\" ) { table 1, 0; }")
	f.Fuzz(func(t *testing.T, src string) {
		g, net, err := Read(strings.NewReader(src))
		checkRead(t, g, net, err)
	})
}

// FuzzReadXML: any input gives a network or an error, never a panic, and a
// network read is a valid factor graph whose tables match its states.
func FuzzReadXML(f *testing.F) {
	if data, err := os.ReadFile("testdata/sachs.xml"); err == nil {
		f.Add(string(data))
	}
	f.Add(`<BIF><NETWORK><VARIABLE><NAME>a</NAME><OUTCOME>x</OUTCOME><OUTCOME>y</OUTCOME></VARIABLE><DEFINITION><FOR>a</FOR><TABLE>0.5 0.5</TABLE></DEFINITION></NETWORK></BIF>`)
	f.Fuzz(func(t *testing.T, src string) {
		g, net, err := ReadXML(strings.NewReader(src))
		checkRead(t, g, net, err)
	})
}

// checkRead checks a reader's answer: an error, or a graph whose
// variables and states are the network's.
func checkRead(t *testing.T, g *factorgraph.Graph, net *Network, err error) {
	if err != nil {
		return
	}
	if g.Dim() != len(net.Variables) {
		t.Fatalf("%d variables in the graph, %d in the network", g.Dim(), len(net.Variables))
	}
	for i, st := range net.States {
		if len(g.States(i)) != len(st) || len(g.StateNames(i)) != len(st) {
			t.Fatalf("variable %d: %d states, %d names", i, len(g.States(i)), len(st))
		}
	}
}
