package uai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/modeltest"
)

func logs(xs ...float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}

func TestReadSmall(t *testing.T) {
	g, err := ReadFile("testdata/small.uai")
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Cards(); !reflect.DeepEqual(got, []int{2, 3, 1}) {
		t.Fatalf("cardinalities %v; want [2 3 1]", got)
	}
	want := []struct {
		scope []int
		table []float64
	}{
		{[]int{0}, logs(0.5, 5)},
		{[]int{1, 0}, logs(1, 2, 3, 4, 5, 6)},
		{[]int{2, 1}, logs(1e-3, 0, 2.5)},
		{nil, logs(7)},
	}
	fs := g.Factors()
	if len(fs) != len(want) {
		t.Fatalf("%d factors; want %d", len(fs), len(want))
	}
	for k, w := range want {
		if !reflect.DeepEqual(fs[k].Scope, w.scope) || !reflect.DeepEqual(fs[k].LogTable, w.table) {
			t.Errorf("factor %d: scope %v, log-table %v; want %v, %v", k, fs[k].Scope, fs[k].LogTable, w.scope, w.table)
		}
	}
	// The layout: factor 1 over (variable 1, variable 0) holds the value at
	// z1 = a, z0 = b at entry 2a + b.
	modeltest.Check(t, g, modeltest.Options{Reference: func(z []int) float64 {
		f0 := []float64{0.5, 5}[z[0]]
		f1 := float64(1 + 2*z[1] + z[0])
		f2 := []float64{1e-3, 0, 2.5}[z[1]]
		return math.Log(f0 * f1 * f2 * 7)
	}})
	if g.Possible(1, 1) || !g.Possible(1, 0) || !g.Possible(2, 0) {
		t.Errorf("state 1 of variable 1 has a zero unary factor; Possible says %v %v %v", g.Possible(1, 0), g.Possible(1, 1), g.Possible(1, 2))
	}
}

func TestReadBayes(t *testing.T) {
	g, err := ReadFile("testdata/bayes.uai")
	if err != nil {
		t.Fatal(err)
	}
	res, err := exact.Enumerate(g, 0)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.LogZ) > 1e-12 {
		t.Errorf("log Z = %v; a Bayesian network is normalised", res.LogZ)
	}
	pa, pb := []float64{0.3, 0.7}, []float64{0.6, 0.4}
	cpt := [2][2][3]float64{{{0.1, 0.2, 0.7}, {0.5, 0.5, 0}}, {{0.2, 0.2, 0.6}, {1, 0, 0}}}
	for c := range 3 {
		var want float64
		for a := range 2 {
			for b := range 2 {
				want += pa[a] * pb[b] * cpt[a][b][c]
			}
		}
		if got := res.Marginals[2][c]; math.Abs(got-want) > 1e-12 {
			t.Errorf("P(C = %d) = %v; want %v", c, got, want)
		}
	}
}

func TestReadIsingAgainstModel(t *testing.T) {
	fields := []float64{0.1, -0.2, 0.3, 0}
	m, err := ising.Grid(2, 2, false, 0.4, fields)
	if err != nil {
		t.Fatal(err)
	}
	g, err := ReadFile("testdata/ising2x2.uai")
	if err != nil {
		t.Fatal(err)
	}
	// Ising state 0 is −1 and state 1 is +1, as in the file.
	modeltest.Check(t, g, modeltest.Options{Reference: m.LogProb, Tol: 1e-12})
}

func TestNotations(t *testing.T) {
	cases := map[string]float64{
		"1e-3": 1e-3, "1E+2": 100, ".5": 0.5, "5.": 5, "+2.5": 2.5, "0.25": 0.25,
		"3": 3, "007": 7, "1.5e0": 1.5, "2.2250738585072014e-308": 0x1p-1022,
	}
	for tok, want := range cases {
		got, err := logValue(tok)
		if err != nil || math.Abs(got-math.Log(want)) > 1e-15*math.Max(1, math.Abs(math.Log(want))) {
			t.Errorf("logValue(%q) = %v, %v; want %v", tok, got, err, math.Log(want))
		}
	}
	for _, zero := range []string{"0", "0.0", "-0", ".0e5", "0e-999", "00"} {
		if got, err := logValue(zero); err != nil || !math.IsInf(got, -1) {
			t.Errorf("logValue(%q) = %v, %v; want −Inf", zero, got, err)
		}
	}
	// Beyond float64's range the logarithm is still exact.
	beyond := map[string]float64{
		"1e-400":                              -400 * math.Ln10,
		"2.5E+400":                            math.Log(2.5) + 400*math.Ln10,
		"0.00012e-320":                        math.Log(1.2) - 324*math.Ln10,
		"4.9e-324":                            math.Log(4.9) - 324*math.Ln10,
		"123456789012345678901234567890e-340": math.Log(1.2345678901234567890) - 311*math.Ln10,
	}
	for tok, want := range beyond {
		if got, err := logValue(tok); err != nil || math.Abs(got-want) > 1e-13*math.Abs(want) {
			t.Errorf("logValue(%q) = %v, %v; want %v", tok, got, err, want)
		}
	}
	bad := map[string]string{
		"-0.5":   "-0.5; want a number ≥ 0",
		"nan":    "NaN; want a finite number ≥ 0",
		"NaN":    "NaN; want a finite number ≥ 0",
		"inf":    "inf; want a finite number ≥ 0",
		"-Inf":   "-Inf; want a finite number ≥ 0",
		"0x1p-2": `"0x1p-2", not a number`,
		"1e":     "not a number",
		"e5":     "not a number",
		".":      "not a number",
		"1.2.3":  "not a number",
		"1e+-3":  "not a number",
		"1_000":  "not a number",
		"1e99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999": "beyond the range",
	}
	for tok, want := range bad {
		if _, err := logValue(tok); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("logValue(%q): error %v; want one containing %q", tok, err, want)
		}
	}
}

// cards16 is the preamble of a 16-variable binary network up to its cards.
const cards16 = "MARKOV\n16\n2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2\n"

func TestReadErrors(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"empty", "", "line 1: the file ends early; want MARKOV or BAYES"},
		{"header", "GRAPH 1", `line 1: want MARKOV or BAYES, got "GRAPH"`},
		{"no variables", "MARKOV\n0\n", "line 2: the number of variables is 0; want an integer ≥ 1"},
		{"card 0", "MARKOV\n2\n2 0\n", "line 3: the cardinality of variable 1 is 0; want an integer ≥ 1"},
		{"card word", "MARKOV\n2\n2 x\n", `line 3: want the cardinality of variable 1 (an integer ≥ 1), got "x"`},
		{"card float", "MARKOV\n2\n2 2.0\n", `line 3: want the cardinality of variable 1 (an integer ≥ 1), got "2.0"`},
		{"card negative", "MARKOV\n2\n2 -2\n", `line 3: want the cardinality of variable 1 (an integer ≥ 1), got "-2"`},
		{"card huge", "MARKOV\n1\n2000000\n", "line 3: variable 0 has 2000000 states; at most 65536 are supported"},
		{"states", "MARKOV\n257\n" + strings.Repeat("65536 ", 257), "line 3: the variables have more than 16777216 states in all"},
		{"count huge", "MARKOV\n99999999999999999999\n", "line 2: the number of variables is 99999999999999999999, too large"},
		{"scope range", cards16 + "3\n1 0  1 1  2 0 19\n", "line 5: scope of factor 2 names variable 19; the network has 16 variables"},
		{"scope twice", "MARKOV\n2\n2 2\n1\n2 1 1\n", "line 5: scope of factor 0 names variable 1 twice"},
		{"scope size", "MARKOV\n2\n2 2\n1\n3 0 1 0\n", "line 5: scope of factor 0 has 3 variables; the network has 2"},
		{"table size", "MARKOV\n2\n2 2\n4\n1 0 1 1 1 0 2 0 1\n2 1 1 2 1 1 2 1 1\n3 1 1 1\n", "line 7: table of factor 3 has 3 entries, want 4"},
		{"table too big", "MARKOV\n3\n2000 2000 2000\n1\n3 0 1 2\n5\n", "line 6: table of factor 0 would have more than 2147483647 entries"},
		{"negative", "MARKOV\n1\n2\n1\n1 0\n2\n0.5 -0.5\n", "line 7: entry 1 of the table of factor 0 is -0.5; want a number ≥ 0"},
		{"NaN", "MARKOV\n1\n2\n1\n1 0\n2 nan 1\n", "line 6: entry 0 of the table of factor 0 is NaN; want a finite number ≥ 0"},
		{"Inf", "MARKOV\n1\n2\n1\n1 0\n2 1\ninf\n", "line 7: entry 1 of the table of factor 0 is inf; want a finite number ≥ 0"},
		{"word", "MARKOV\n1\n2\n1\n1 0\n2 1 0x1p-1\n", `line 6: entry 1 of the table of factor 0 is "0x1p-1", not a number`},
		{"overflow", "MARKOV\n1\n2\n1\n1 0\n2 1 1e999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999\n", "line 6: entry 1 of the table of factor 0 is 1e9"},
		{"ends in table", "MARKOV\n1\n2\n1\n1 0\n2 0.5\n\n", "line 6: the file ends early; want entry 1 of the table of factor 0 (2 entries)"},
		{"ends in preamble", "MARKOV\n1\n2\n", "line 3: the file ends early; want the number of factors"},
		{"ends in scope", "MARKOV\n2\n2 2\n1\n2 0", "line 5: the file ends early; want variable 1 of the scope of factor 0"},
		{"ends before tables", "MARKOV\n2\n2 2\n1\n2 0 1\n", "line 5: the file ends early; want the number of entries of the table of factor 0"},
		{"trailing", "MARKOV\n1\n2\n1\n1 0\n2 1 1\nextra\n", `line 7: unexpected "extra" after the last table`},
		{"trailing number", "MARKOV\n1\n2\n1\n1 0\n2 1 1 0.5\n", `line 6: unexpected "0.5" after the last table`},
		{"all zero", "MARKOV\n1\n2\n1\n1 0\n2\n0 0\n", "line 6: table of factor 0 is zero everywhere, so every configuration has probability zero"},
		{"long word", "MARKOV\n" + strings.Repeat("1", 2000), "line 2: a word longer than 1024 characters"},
		{"no state", "MARKOV\n2\n2 2\n2\n1 0\n2 0 1\n2 0 1\n4 1 1 0 0\n", "the factors' zero entries rule out every state of variable 0"},
	}
	for _, c := range cases {
		_, err := Read(strings.NewReader(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v; want one starting %q", c.name, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error spans lines: %q", c.name, err)
		}
		var e *Error
		if c.name != "no state" && !errors.As(err, &e) {
			t.Errorf("%s: error %T is not an *Error", c.name, err)
		}
	}
}

func TestReadPassesOnReadErrors(t *testing.T) {
	r := io.MultiReader(strings.NewReader("MARKOV\n1\n"), iotest.ErrReader(errors.New("disk on fire")))
	if _, err := Read(r); err == nil || err.Error() != "line 3: reading: disk on fire" {
		t.Errorf("error %v; want line 3: reading: disk on fire", err)
	}
	r = io.MultiReader(strings.NewReader("1 2"), iotest.ErrReader(errors.New("gone")))
	if _, err := ReadEvidence(r); err == nil || !strings.Contains(err.Error(), "reading: gone") {
		t.Errorf("evidence: error %v", err)
	}
}

func TestReadFreeLayout(t *testing.T) {
	// The same network as a single line, with tabs, CRLF line ends, a byte
	// order mark and lower-case header.
	one := "\xef\xbb\xbfmarkov 2 2 3 2 1 0 2 0 1 2 0.5 .5 6 1 2 3 4 5 6"
	crlf := "MARKOV\r\n2\r\n2\t3\r\n2\r\n1 0\r\n2 0\r\n1\r\n2\r\n0.5\r\n.5\r\n6 1 2 3\r\n4 5 6"
	a, err := Read(strings.NewReader(one))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Read(strings.NewReader(crlf))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Factors(), b.Factors()) || !reflect.DeepEqual(a.Cards(), b.Cards()) {
		t.Errorf("layouts differ: %v %v vs %v %v", a.Cards(), a.Factors(), b.Cards(), b.Factors())
	}
}

func TestReadFileNamesThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.uai")
	if err := os.WriteFile(path, []byte("MARKOV\n1\n2\n1\n1 0\n3 1 1 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(path)
	if want := path + ": line 6: table of factor 0 has 3 entries, want 2"; err == nil || err.Error() != want {
		t.Errorf("error %v; want %q", err, want)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing.uai")); err == nil || !strings.Contains(err.Error(), "missing.uai") {
		t.Errorf("missing file: error %v", err)
	}
}

func TestReadEvidence(t *testing.T) {
	for _, path := range []string{"testdata/small.evid", "testdata/old.evid"} {
		ev, err := ReadEvidenceFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[int]int{0: 1, 2: 0}; !reflect.DeepEqual(ev, want) {
			t.Errorf("%s: %v; want %v", path, ev, want)
		}
	}
	for _, none := range []string{"", "\n\n", "0", "0\n", "1 0", "1\n0\n"} {
		ev, err := ReadEvidence(strings.NewReader(none))
		if err != nil || len(ev) != 0 {
			t.Errorf("ReadEvidence(%q) = %v, %v; want no evidence", none, ev, err)
		}
	}
	spread := "3\n29\n1 36\n1\n\n219 1"
	ev, err := ReadEvidence(strings.NewReader(spread))
	if want := map[int]int{29: 1, 36: 1, 219: 1}; err != nil || !reflect.DeepEqual(ev, want) {
		t.Errorf("ReadEvidence(%q) = %v, %v; want %v", spread, ev, err, want)
	}
	bad := map[string]string{
		"3 29 1 36 1":        "line 1: evidence count is 3, but 2 variable–value pairs follow",
		"1\n1 29 1 36 1":     "line 2: evidence count is 1, but 2 variable–value pairs follow",
		"3 29 1 36 1 219":    "line 1: evidence starts with 3 and has 6 numbers",
		"2\n3 1\n3 0":        "line 3: variable 3 is observed twice",
		"1 x 1":              `line 1: want an integer ≥ 0, got "x"`,
		"1 -1 0":             `line 1: want an integer ≥ 0, got "-1"`,
		"1 2 0.5":            `line 1: want an integer ≥ 0, got "0.5"`,
		"1 2 99999999999999": "line 1: 99999999999999 is too large",
	}
	for in, want := range bad {
		_, err := ReadEvidence(strings.NewReader(in))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ReadEvidence(%q): error %v; want one starting %q", in, err, want)
		}
	}
	path := filepath.Join(t.TempDir(), "x.evid")
	os.WriteFile(path, []byte("2 1 1"), 0o644)
	if _, err := ReadEvidenceFile(path); err == nil || !strings.HasPrefix(err.Error(), path+": line 1: ") {
		t.Errorf("ReadEvidenceFile: error %v; want it to start with the path", err)
	}
}

func TestMAR(t *testing.T) {
	marg := [][]float64{{0.25, 0.75}, {0.1, 0, 0.9}, {1}, {1e-05, 0.99999}, {1.0 / 3, 2.0 / 3}}
	var buf bytes.Buffer
	if err := WriteMAR(&buf, marg); err != nil {
		t.Fatal(err)
	}
	want := "MAR\n5 2 0.25 0.75 3 0.1 0 0.9 1 1 2 1e-05 0.99999 2 0.3333333333333333 0.6666666666666666\n"
	if buf.String() != want {
		t.Errorf("WriteMAR wrote %q; want %q", buf.String(), want)
	}
	got, err := ReadMAR(&buf)
	if err != nil || !reflect.DeepEqual(got, marg) {
		t.Errorf("ReadMAR(WriteMAR(m)) = %v, %v; want %v", got, err, marg)
	}
	small := [][]float64{{0.25, 0.75}, {0.1, 0, 0.9}, {1}}
	if got, err := ReadMARFile("testdata/small.MAR"); err != nil || !reflect.DeepEqual(got, small) {
		t.Errorf("small.MAR: %v, %v", got, err)
	}
	forms := map[string]string{
		"no header":   "3 2 0.25 0.75\n3 0.1 0 0.9\n1 1\n",
		"spread":      "MAR\n3\n2\n0.25\n0.75 3 .1 0 9e-1\n1\n1\n",
		"older":       "MAR\n1\n3 2 0.25 0.75 3 0.1 0 0.9 1 1\n",
		"anytime":     "MAR\n3 2 0.5 0.5 3 0.3 0.3 0.4 1 1\n-BEGIN-\n3 2 0.25 0.75 3 0.1 0 0.9 1 1\n",
		"anytime old": "MAR\n1\n3 2 0.5 0.5 3 0.3 0.3 0.4 1 1\n-BEGIN-\n1\n3 2 0.25 0.75 3 0.1 0 0.9 1 1\n",
	}
	for name, in := range forms {
		if got, err := ReadMAR(strings.NewReader(in)); err != nil || !reflect.DeepEqual(got, small) {
			t.Errorf("%s: %v, %v; want %v", name, got, err, small)
		}
	}
	// One variable with one state: "1 1 1" in the current layout.
	if got, err := ReadMAR(strings.NewReader("MAR\n1 1 1\n")); err != nil || !reflect.DeepEqual(got, [][]float64{{1}}) {
		t.Errorf("MAR 1 1 1: %v, %v", got, err)
	}
	bad := map[string]string{
		"":                            "line 1: the file ends early; want the number of variables",
		"MAR\n":                       "line 1: the file ends early; want the number of variables",
		"MAR\n2 2 0.5 0.5\n":          "line 2: the file ends early; want the number of states of variable 1",
		"MAR\n1 3 0.5 0.5\n":          "line 2: variable 0 has 3 states, but only 2 numbers follow",
		"MAR\n1 2 0.5 -0.5\n":         "line 2: probability of state 1 of variable 0 is -0.5; want a number ≥ 0",
		"MAR\n1 2 0.5 nan\n":          "line 2: probability of state 1 of variable 0 is nan; want a finite number ≥ 0",
		"MAR\n1 2 0.5 0.5 0.1\n":      `line 2: unexpected "0.1" after the marginals of all 1 variables`,
		"MAR\n1 0\n":                  `line 2: want the number of states of variable 0 (an integer ≥ 1), got "0"`,
		"MAR\n1\n2 2 0.5 0.5 2\n":     "line 3: variable 1 has 2 states, but only 0 numbers follow",
		"MAR\n1 2 0.5 0.5\n-BEGIN-\n": "line 3: the file ends early; want the number of variables",
		"PR\n-0.2\n":                  `line 1: want the number of variables (an integer ≥ 1), got "PR"`,
	}
	for in, want := range bad {
		_, err := ReadMAR(strings.NewReader(in))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ReadMAR(%q): error %v; want one starting %q", in, err, want)
		}
	}
	for _, m := range [][][]float64{nil, {{}}, {{0.5, math.NaN()}}, {{-0.1, 1.1}}, {{math.Inf(1)}}} {
		if err := WriteMAR(&buf, m); err == nil {
			t.Errorf("WriteMAR(%v) succeeded", m)
		}
	}
}

// TestClampWithEvidenceFile reads a network and its evidence and conditions
// on it, the way a UAI task is set up.
func TestClampWithEvidenceFile(t *testing.T) {
	g, err := ReadFile("testdata/small.uai")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := ReadEvidenceFile("testdata/small.evid")
	if err != nil {
		t.Fatal(err)
	}
	c, free, err := g.Clamp(ev)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(free, []int{1}) {
		t.Fatalf("free variables %v; want [1]", free)
	}
	res, err := exact.Enumerate(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	// P(z1 | z0 = 1, z2 = 0) ∝ f1(z1, 1) f2(z1) = (2, 4·0, 6·2.5).
	want := []float64{2 * 1e-3 / (2*1e-3 + 15), 0, 15 / (2*1e-3 + 15)}
	for s, w := range want {
		if math.Abs(res.Marginals[0][s]-w) > 1e-12 {
			t.Errorf("P(z1 = %d | evidence) = %v; want %v", s, res.Marginals[0][s], w)
		}
	}
}

// Evidence and MAR files may start with a byte order mark too (as networks
// and the samples CSV may), a comment line after it included; one anywhere
// else is an error.
func TestEvidenceAndMARWithBOM(t *testing.T) {
	for _, in := range []string{"\ufeff1 0 1", "\ufeffc written by an editor\n1 0 1", "\ufeff1\n1 0 1"} {
		ev, err := ReadEvidence(strings.NewReader(in))
		if err != nil || !reflect.DeepEqual(ev, map[int]int{0: 1}) {
			t.Errorf("evidence %q: %v, %v", in, ev, err)
		}
	}
	for _, in := range []string{"\ufeffMAR\n1 2 0.25 0.75\n", "\ufeffc x\nMAR 1 2 0.25 0.75"} {
		m, err := ReadMAR(strings.NewReader(in))
		if err != nil || !reflect.DeepEqual(m, [][]float64{{0.25, 0.75}}) {
			t.Errorf("MAR %q: %v, %v", in, m, err)
		}
	}
	if _, err := ReadEvidence(strings.NewReader("1 0\ufeff 1")); err == nil {
		t.Error("a BOM inside the evidence was accepted")
	}
	if _, err := ReadMAR(strings.NewReader("MAR\n\ufeff1 1 1")); err == nil {
		t.Error("a BOM inside the marginals was accepted")
	}
}

// A table read from a file is allocated once, at its size, which the
// file's size bounds: appending 177,147 entries (11 ternary variables)
// grew it through copies that held 1.7 times the table at once, beyond
// the memory estimate. The table's capacity is its length.
func TestTableAllocatedOnce(t *testing.T) {
	const vars = 11
	var b strings.Builder
	fmt.Fprintf(&b, "MARKOV\n%d\n%s\n1\n%d", vars, strings.TrimSpace(strings.Repeat("3 ", vars)), vars)
	for i := range vars {
		fmt.Fprintf(&b, " %d", i)
	}
	size := 1
	for range vars {
		size *= 3
	}
	fmt.Fprintf(&b, "\n%d\n", size)
	for i := range size {
		fmt.Fprintf(&b, "%d ", 1+i%3)
	}
	path := filepath.Join(t.TempDir(), "dense.uai")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := ReadFileLimit(context.Background(), path, 0)
	if err != nil {
		t.Fatal(err)
	}
	tab := g.Factors()[0].LogTable
	if len(tab) != size || cap(tab) != size {
		t.Errorf("table of %d entries has capacity %d; want %d", len(tab), cap(tab), size)
	}
}
