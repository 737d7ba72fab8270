package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model/uai"
)

// A small Markov network: variables of 2, 3 and 2 states, a unary factor,
// two pairwise factors (one with a zero entry).
const tinyUAI = `MARKOV
3
2 3 2
3
1 0
2 0 1
2 1 2
2
 0.3 0.7
6
 1.0 2.0 0.5
 0.5 1.5 3.0
6
 1.0 0.0
 2.0 1.0
 0.5 2.5
`

func writeTestFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExactOnUAI(t *testing.T) {
	dir := t.TempDir()
	net := writeTestFile(t, dir, "tiny.uai", tinyUAI)
	mar, js := filepath.Join(dir, "out.MAR"), filepath.Join(dir, "out.json")
	code, out, errs := dstein(t, "exact", "--model", net, "--mar", mar, "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "variable elimination") || !strings.Contains(out, "log Z") {
		t.Errorf("output:\n%s", out)
	}
	g, err := uai.ReadFile(net)
	if err != nil {
		t.Fatal(err)
	}
	brute, err := exact.Enumerate(g, 100)
	if err != nil {
		t.Fatal(err)
	}
	var sum struct{ LogZ, Log10Z float64 }
	raw, _ := os.ReadFile(js)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	sum.LogZ, sum.Log10Z = m["log_z"].(float64), m["log10_z"].(float64)
	if math.Abs(sum.LogZ-brute.LogZ) > 1e-12 || math.Abs(sum.Log10Z-brute.LogZ/math.Ln10) > 1e-12 {
		t.Errorf("log Z %v (log10 %v), brute force %v", sum.LogZ, sum.Log10Z, brute.LogZ)
	}
	got, err := uai.ReadMARFile(mar)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range brute.Marginals {
		for s := range p {
			if math.Abs(got[i][s]-p[s]) > 1e-12 {
				t.Fatalf("MAR P(z%d = %d) = %v, brute force %v", i, s, got[i][s], p[s])
			}
		}
	}
}

func TestEvidenceClampsAndExpands(t *testing.T) {
	dir := t.TempDir()
	net := writeTestFile(t, dir, "tiny.uai", tinyUAI)
	ev := writeTestFile(t, dir, "tiny.uai.evid", "1\n1 1 2\n")
	mar, samples := filepath.Join(dir, "e.MAR"), filepath.Join(dir, "s.csv")
	if code, _, errs := dstein(t, "exact", "--model", net, "--evidence", ev, "--mar", mar); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got, err := uai.ReadMARFile(mar)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[1][2] != 1 || got[1][0] != 0 {
		t.Fatalf("MAR with evidence z1 = 2: %v", got)
	}
	// P(z0 | z1 = 2) ∝ 0.3·0.5, 0.7·3.0 summed over z2 with the third factor's row z1 = 2: (0.5 + 2.5).
	w0, w1 := 0.3*0.5, 0.7*3.0
	if want := w0 / (w0 + w1); math.Abs(got[0][0]-want) > 1e-12 {
		t.Errorf("P(z0 = 0 | z1 = 2) = %v, want %v", got[0][0], want)
	}
	if want := 0.5 / 3.0; math.Abs(got[2][0]-want) > 1e-12 {
		t.Errorf("P(z2 = 0 | z1 = 2) = %v, want %v", got[2][0], want)
	}
	code, _, errs := dstein(t, "sample", "--model", net, "--evidence", ev, "--method", "gibbs", "--n", "30", "--iters", "20", "--out", samples, "--mar", filepath.Join(dir, "g.MAR"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	f, _ := os.Open(samples)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 31 || strings.Join(rows[0], ",") != "lp__,z0,z1,z2" {
		t.Fatalf("samples CSV: %d rows, header %v", len(rows), rows[0])
	}
	for _, r := range rows[1:] {
		if r[2] != "2" {
			t.Fatalf("evidence variable z1 is %q in a sample, want 2", r[2])
		}
	}
}

func TestCompareMAR(t *testing.T) {
	dir := t.TempDir()
	a := writeTestFile(t, dir, "a.MAR", "MAR\n2 2 0.5 0.5 3 1 0 0\n")
	b := writeTestFile(t, dir, "b.MAR", "MAR\n2 2 0.4 0.6 3 0.5 0.5 0\n")
	js := filepath.Join(dir, "c.json")
	code, out, errs := dstein(t, "compare-mar", a, b, "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	raw, _ := os.ReadFile(js)
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	// Entries |0.1|, |0.1|, |0.5|, |0.5|, 0 over 5: mean 0.24, max 0.5 at variable 1.
	// Hellinger: sqrt(1 − (√0.2 + √0.3)) and sqrt(1 − √0.5), averaged.
	hel := (math.Sqrt(1-(math.Sqrt(0.2)+math.Sqrt(0.3))) + math.Sqrt(1-math.Sqrt(0.5))) / 2
	if math.Abs(c["mean_abs_error"].(float64)-0.24) > 1e-12 || c["max_abs_error"].(float64) != 0.5 ||
		c["max_error_variable"].(float64) != 1 || math.Abs(c["mean_hellinger"].(float64)-hel) > 1e-12 {
		t.Errorf("comparison %v (output %q)", c, out)
	}
	c3 := writeTestFile(t, dir, "c.MAR", "MAR\n1 2 0.5 0.5\n")
	if code, _, errs := dstein(t, "compare-mar", a, c3); code == 0 || !strings.Contains(errs, "variables") {
		t.Errorf("mismatched MAR files: exit %d, %q", code, errs)
	}
}

func TestUAIBadInput(t *testing.T) {
	dir := t.TempDir()
	net := writeTestFile(t, dir, "tiny.uai", tinyUAI)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"exact", "--model", "../../examples/ising-grid.json", "--evidence", net}, "UAI network"},
		{[]string{"exact", "--model", writeTestFile(t, dir, "bad.uai", "MARKOV\n2\n2 2\n1\n2 0 5\n4 1 1 1 1\n")}, "variable"},
		{[]string{"exact", "--model", net, "--evidence", writeTestFile(t, dir, "bad.evid", "1 1 7\n")}, "evid"},
		{[]string{"compare-mar", net}, "two MAR files"},
	} {
		code, _, errs := dstein(t, c.args...)
		if code == 0 || !strings.Contains(errs, c.want) || strings.Contains(errs, "goroutine") || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want one line mentioning %q", c.args, code, errs, c.want)
		}
	}
}

// dstein exact names the states of a model that names them (a Potts
// model's "states"), on the screen and in the JSON, in the marginals'
// order.
func TestExactNamesStates(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "p.json")
	if err := os.WriteFile(model, []byte(`{"type":"potts","q":3,"grid":{"rows":2,"cols":2},"coupling":0.5,"fields":[[1,0,0],[0,0,0],[0,0,0],[0,0,0]],"states":["red","green","blue"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "e.json")
	code, out, errs := dstein(t, "exact", "--model", model, "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "z0     P(red) = ") || !strings.Contains(out, "P(blue) = ") {
		t.Errorf("the states are not named:\n%s", out)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Marginals [][]float64 `json:"marginals"`
		States    [][]string  `json:"state_names"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.States) != 4 || !slices.Equal(sum.States[0], []string{"red", "green", "blue"}) {
		t.Fatalf("state_names %v", sum.States)
	}
	// The field favours red at z0: its largest probability is red's.
	if p := sum.Marginals[0]; !(p[0] > p[1] && p[0] > p[2]) {
		t.Errorf("z0's marginal %v; want red's the largest", p)
	}
}

// With evidence every output numbers variables as the file does: the
// printed tables, the summary's variables and error-bar quantities, the
// samples CSV, the .npy sidecar and the MAR file; the summary records
// the evidence.
func TestEvidenceKeepsTheFilesNumbering(t *testing.T) {
	dir := t.TempDir()
	net := writeTestFile(t, dir, "tiny.uai", tinyUAI)
	ev := writeTestFile(t, dir, "tiny.uai.evid", "1\n1 1 2\n")
	js, csvPath, npyPath := filepath.Join(dir, "summary.json"), filepath.Join(dir, "s.csv"), filepath.Join(dir, "arr.npy")
	code, out, errs := dstein(t, "sample", "--model", net, "--evidence", ev, "--method", "gibbs", "--chains", "2", "--draws", "100", "--out", csvPath, "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if code, _, errs := dstein(t, "sample", "--model", net, "--evidence", ev, "--method", "gibbs", "--chains", "2", "--draws", "100", "--out", npyPath, "--format", "npy"); code != 0 {
		t.Fatalf("npy: exit %d: %s", code, errs)
	}
	var s struct {
		Variables []string       `json:"variables"`
		Evidence  map[string]int `json:"evidence"`
		ErrorBars struct {
			Quantities []struct {
				Name string  `json:"name"`
				Mean float64 `json:"mean"`
			} `json:"quantities"`
		} `json:"error_bars"`
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.Variables, ",") != "z0,z2" || len(s.Evidence) != 1 || s.Evidence["z1"] != 2 {
		t.Fatalf("summary variables %v, evidence %v; want z0,z2 and z1 = 2", s.Variables, s.Evidence)
	}
	var names []string
	for _, q := range s.ErrorBars.Quantities {
		names = append(names, strings.SplitN(q.Name, "=", 2)[0])
	}
	if strings.Contains(strings.Join(names, ","), "z1") || !strings.Contains(strings.Join(names, ","), "z2") {
		t.Errorf("error-bar quantities %v: the free variables are z0 and z2", names)
	}
	for _, line := range []string{"evidence z1 = 2", "\nz2 "} {
		if !strings.Contains(out, line) {
			t.Errorf("the printed summary lacks %q:\n%s", line, out)
		}
	}
	if strings.Contains(out, "\nz1 ") {
		t.Errorf("the printed summary shows the evidence variable z1 as a free one:\n%s", out)
	}
	f, _ := os.Open(csvPath)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || strings.Join(rows[0], ",") != "chain,draw,lp__,z0,z1,z2" {
		t.Fatalf("samples CSV header %v (%v); want chain,draw,lp__,z0,z1,z2", rows[0], err)
	}
	// lp__ is the log p* whose average the summary's log_p row reports
	// (the same draws: the same seed and settings).
	var lpSum float64
	for _, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[2], 64)
		if err != nil {
			t.Fatalf("lp__ %q: %v", r[2], err)
		}
		lpSum += v
	}
	if q := s.ErrorBars.Quantities[0]; q.Name != "log_p" || math.Abs(lpSum/float64(len(rows)-1)-q.Mean) > 1e-9*math.Abs(q.Mean) {
		t.Errorf("lp__ averages %v; the summary's %s row says %v", lpSum/float64(len(rows)-1), q.Name, q.Mean)
	}
	side, err := os.ReadFile(strings.TrimSuffix(npyPath, ".npy") + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var sc struct {
		LogP [][]float64 `json:"lp__"`
	}
	if err := json.Unmarshal(side, &sc); err != nil || len(sc.LogP) != 2 || len(sc.LogP[0]) != 100 {
		t.Errorf("the sidecar's lp__ is not 2 chains of 100 values (%v): %.200s", err, side)
	}
	if !strings.Contains(string(side), `"z2"`) || !strings.Contains(string(side), `"z1"`) {
		t.Errorf("the sidecar does not name the file's variables: %s", side)
	}
}

// A Bayesian network from a BIF file: exact marginals equal those of the
// same network's UAI file, evidence is given by name (--given), and every
// output names variables and states as the file does.
func TestBIFNetwork(t *testing.T) {
	dir := t.TempDir()
	net, netUAI := "../../model/bif/testdata/asia.bif", "../../model/bif/testdata/asia.uai"
	a, b := filepath.Join(dir, "bif.json"), filepath.Join(dir, "uai.json")
	code, out, errs := dstein(t, "exact", "--model", net, "--given", "smoke=yes,xray=yes", "--json", a)
	if code != 0 {
		t.Fatalf("exact BIF: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "lung   P(yes) = 0.645991") {
		t.Errorf("exact's table does not name lung's states:\n%s", out)
	}
	// In the UAI file smoke is z2 and xray z6, "yes" state 0.
	if code, _, errs := dstein(t, "exact", "--model", netUAI, "--given", "z2=0,z6=0", "--json", b); code != 0 {
		t.Fatalf("exact UAI: exit %d: %s", code, errs)
	}
	var x, y struct {
		Names     []string    `json:"names"`
		Marginals [][]float64 `json:"marginals"`
	}
	for _, c := range []struct {
		path string
		dst  any
	}{{a, &x}, {b, &y}} {
		data, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, c.dst); err != nil {
			t.Fatal(err)
		}
	}
	if len(x.Marginals) != 8 || x.Names[3] != "lung" || y.Names[3] != "z3" {
		t.Fatalf("names %v and %v", x.Names, y.Names)
	}
	for i := range x.Marginals {
		for s := range x.Marginals[i] {
			if d := math.Abs(x.Marginals[i][s] - y.Marginals[i][s]); d > 1e-10 {
				t.Errorf("%s state %d: %v (BIF) against %v (UAI)", x.Names[i], s, x.Marginals[i][s], y.Marginals[i][s])
			}
		}
	}
	js := filepath.Join(dir, "s.json")
	code, out, errs = dstein(t, "sample", "--model", net, "--given", "smoke=yes,xray=yes", "--method", "gibbs", "--chains", "2", "--draws", "100", "--json", js)
	if code != 0 {
		t.Fatalf("sample: exit %d: %s", code, errs)
	}
	for _, want := range []string{"evidence smoke = yes, xray = yes", "\nlung=no "} {
		if !strings.Contains(out, want) {
			t.Errorf("sample's output lacks %q:\n%s", want, out)
		}
	}
	// Gibbs updates either, lung and tub jointly, which covers asia's one
	// logical table: no warning about its zero entries.
	if strings.Contains(out, "zero entries") {
		t.Errorf("gibbs on asia warns about zero entries:\n%s", out)
	}
	data, _ := os.ReadFile(js)
	if !strings.Contains(string(data), `"evidence": {`) || !strings.Contains(string(data), `"smoke": 0`) || !strings.Contains(string(data), `"lung"`) {
		t.Errorf("the summary lacks the named evidence or variables")
	}
	for _, c := range []struct{ given, want string }{
		{"smok=yes", `no variable "smok"; did you mean`},
		{"smoke=maybe", `"maybe" is not a state of smoke; its states are yes, no`},
		{"smoke", "NAME=STATE"},
	} {
		// A bad --given is a bad command line: exit code 2.
		code, _, errs := dstein(t, "exact", "--model", net, "--given", c.given)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("--given %s: exit %d, %q; want exit 2 and %q", c.given, code, errs, c.want)
		}
	}
	if code, _, errs := dstein(t, "sample", "--model", "../../examples/ising-grid.json", "--given", "z1=1"); code != 2 || !strings.Contains(errs, "is a JSON model file") {
		t.Errorf("--given with a JSON model: exit %d, %q; want exit 2", code, errs)
	}
	// The same network in XMLBIF (.xml) gives the same answer given the
	// same evidence by name; a malformed one exits 1 with the line.
	xa, xb := filepath.Join(dir, "xml.json"), filepath.Join(dir, "bif.json")
	for _, c := range [][2]string{{"../../model/bif/testdata/sachs.xml", xa}, {"../../model/bif/testdata/sachs.bif", xb}} {
		if code, _, errs := dstein(t, "exact", "--model", c[0], "--given", "PKA=HIGH,Erk=LOW", "--json", c[1]); code != 0 {
			t.Fatalf("exact %s: exit %d: %s", c[0], code, errs)
		}
	}
	xd, _ := os.ReadFile(xa)
	bd, _ := os.ReadFile(xb)
	var xs, bs struct {
		Names     []string    `json:"names"`
		Marginals [][]float64 `json:"marginals"`
	}
	if json.Unmarshal(xd, &xs) != nil || json.Unmarshal(bd, &bs) != nil || len(xs.Names) != 11 {
		t.Fatalf("exact JSON of sachs: %.200s", xd)
	}
	for i, name := range bs.Names {
		j := slices.Index(xs.Names, name)
		if j < 0 || len(xs.Marginals[j]) != len(bs.Marginals[i]) {
			t.Fatalf("%s is not in the XMLBIF's answer %v", name, xs.Names)
		}
		for s := range bs.Marginals[i] {
			if d := math.Abs(xs.Marginals[j][s] - bs.Marginals[i][s]); d > 1e-12 {
				t.Errorf("P(%s = state %d | PKA=HIGH, Erk=LOW): %v from XMLBIF, %v from BIF", name, s, xs.Marginals[j][s], bs.Marginals[i][s])
			}
		}
	}
	bad := writeTestFile(t, dir, "bad.xml", "<BIF><NETWORK>\n<VARIABLE><NAME>a</NAME><OUTCOME>x</OUTCOME></VARIABLE>\n<DEFINITION><FOR>a</FOR><TABLE>0.5</TABLE></DEFINITION></NETWORK></BIF>")
	if code, _, errs := dstein(t, "exact", "--model", bad); code != 1 || !strings.Contains(errs, "bad.xml: line 3: a row of \"a\" sums to 0.5") || strings.Contains(errs, "goroutine") {
		t.Errorf("a bad XMLBIF file: exit %d, %q", code, errs)
	}
}

// TestBayesWarning: a BAYES file whose table rows do not sum to 1 is read
// as a product of factors, and every command that reads it says so on
// standard error before its work (exit 0); a sound one draws no warning.
func TestBayesWarning(t *testing.T) {
	dir := t.TempDir()
	bad := writeTestFile(t, dir, "bad.uai", "BAYES\n2\n2 2\n2\n1 0\n2 0 1\n2\n0.3 0.7\n4\n0.2 0.3 0.5 0.5\n")
	good := writeTestFile(t, dir, "good.uai", "BAYES\n2\n2 2\n2\n1 0\n2 0 1\n2\n0.3 0.7\n4\n0.4 0.6 0.5 0.5\n")
	for _, args := range [][]string{
		{"exact", "--model"},
		{"sample", "--method", "gibbs", "--n", "2", "--iters", "300", "--seed", "1", "--model"},
	} {
		code, _, errs := dstein(t, append(args, bad)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		if want := "dstein: warning: " + bad + ": the BAYES network's tables are not conditional distributions: row 0 of table 1 (z1 given its parents) sums to 0.5"; !strings.Contains(errs, want) {
			t.Errorf("%v: stderr %q; want %q", args, errs, want)
		}
		if code, _, errs := dstein(t, append(args, good)...); code != 0 || strings.Contains(errs, "warning") {
			t.Errorf("%v on a sound network: exit %d, stderr %q", args, code, errs)
		}
	}
}
