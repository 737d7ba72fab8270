package bif_test

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/bif"
	"github.com/dstein/dstein/model/uai"
)

// P(variable = yes) in the Asia network, by enumerating its 2^8 states in
// a short Python script independent of dstein (the same script wrote
// testdata/asia.uai from the published tables); they are the published
// marginals (Lauritzen and Spiegelhalter 1988).
var asiaYes = map[string]float64{"asia": 0.01, "tub": 0.0104, "smoke": 0.5, "lung": 0.055, "bronc": 0.45, "either": 0.064828, "xray": 0.11029004, "dysp": 0.4359706}

func TestAsiaAgainstUAIAndEnumeration(t *testing.T) {
	f, err := os.Open("testdata/asia.bif")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, net, err := bif.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if net.Name != "asia" || len(net.Variables) != 8 {
		t.Fatalf("network %q with %d variables", net.Name, len(net.Variables))
	}
	ve, err := exact.ForFactorGraph(g, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := ve.Result()
	u, err := os.Open("testdata/asia.uai")
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ug, err := uai.Read(u)
	if err != nil {
		t.Fatal(err)
	}
	uve, err := exact.ForFactorGraph(ug, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := uve.Result()
	if math.Abs(got.LogZ) > 1e-12 || math.Abs(want.LogZ) > 1e-12 {
		t.Errorf("log Z %v (BIF), %v (UAI); a Bayesian network's is 0", got.LogZ, want.LogZ)
	}
	for i, name := range net.Variables {
		if model.VariableName(g, i) != name {
			t.Errorf("variable %d is named %q, want %q", i, model.VariableName(g, i), name)
		}
		if sn := g.StateNames(i); len(sn) != 2 || sn[0] != "yes" || sn[1] != "no" {
			t.Errorf("%s: state names %v", name, sn)
		}
		for s := range 2 {
			if d := math.Abs(got.Marginals[i][s] - want.Marginals[i][s]); d > 1e-10 {
				t.Errorf("%s state %d: %v from the BIF file, %v from the UAI file", name, s, got.Marginals[i][s], want.Marginals[i][s])
			}
		}
		if d := math.Abs(got.Marginals[i][0] - asiaYes[name]); d > 1e-10 {
			t.Errorf("P(%s = yes) = %v; enumeration gives %v", name, got.Marginals[i][0], asiaYes[name])
		}
	}
}

func TestReadErrors(t *testing.T) {
	head := "variable a { type discrete [ 2 ] { x, y }; }\nvariable b { type discrete [ 2 ] { x, y }; }\n"
	for _, c := range []struct{ body, want string }{
		{head + "probability ( a ) { table 0.5, 0.6; }\nprobability ( b | a ) { (x) 0.5, 0.5; (y) 0.5, 0.5; }", "sums to 1.1"},
		{head + "probability ( a ) { table 0.5, 0.5; }\nprobability ( b | a ) { table 0.5, 0.5, 0.5, 0.5; }", "over parents"},
		{head + "probability ( a ) { table 0.5, 0.5; }\nprobability ( b | a ) { (x) 0.5, 0.5; }", "no row for its parents at (y)"},
		{head + "probability ( a ) { table 0.5, 0.5; }\nprobability ( b | a ) { (z) 0.5, 0.5; (x) 0.5, 0.5; }", `"z" is not a state of "a"`},
		{head + "probability ( a ) { table 0.5, 0.5; }\nprobability ( c | a ) { (x) 0.5, 0.5; }", `undefined variable "c"`},
		{head + "probability ( a ) { table 0.5, 0.5; }", `"b" has no probability block`},
		{"variable a { type discrete [ 3 ] { x, y }; }", "declares 3 states and names 2"},
		{head + "probability ( a ) { table 0.5, -0.5, 1; }", "has 3 probabilities"},
		{head + "probability ( a ) { table 0.5, 0.5;", "ends in the middle"},
		{"", "defines no variable"},
		// A second table or default row would replace the first in silence.
		{head + "probability ( a ) { table 0.3, 0.7; table 0.5, 0.5; }\nprobability ( b ) { table 0.5, 0.5; }", `line 3: the probability block of "a" has a second table`},
		{head + "probability ( a ) { table 0.5, 0.5; }\nprobability ( b | a ) { (x) 1, 0; default 0.2, 0.8; default 0.5, 0.5; }", `line 4: the probability block of "b" has a second default row`},
	} {
		_, _, err := bif.Read(strings.NewReader(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v; want one with %q", c.body, err, c.want)
		}
	}
	// default rows, comments, properties and quoted names.
	ok := `/* a comment */ network "n" { property x y; }
variable a { type discrete [ 2 ] { x, y }; property p; }
variable b { type discrete [ 2 ] { x, y }; }
probability ( a ) { table 0.25, 0.75; } // rows
probability ( b | a ) { (x) 1, 0; default 0.5, 0.5; }`
	g, _, err := bif.Read(strings.NewReader("\ufeff" + ok)) // a byte order mark is ignored
	if err != nil {
		t.Fatal(err)
	}
	ve, err := exact.ForFactorGraph(g, 0)
	if err != nil {
		t.Fatal(err)
	}
	// P(b = x) = 0.25·1 + 0.75·0.5.
	if p := ve.Result().Marginals[1][0]; math.Abs(p-0.625) > 1e-12 {
		t.Errorf("P(b = x) = %v, want 0.625", p)
	}
}
