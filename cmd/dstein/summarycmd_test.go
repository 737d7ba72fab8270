package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dstein/dstein/internal/npy"
	"github.com/dstein/dstein/report"
	"github.com/dstein/dstein/rng"
)

type summaryQuantities struct {
	ErrorBars struct {
		Quantities []struct {
			Name    string  `json:"name"`
			Mean    float64 `json:"mean"`
			MCSE    float64 `json:"mcse"`
			BulkESS float64 `json:"ess_bulk"`
			TailESS float64 `json:"ess_tail"`
			Rhat    any     `json:"rhat"`
		} `json:"quantities"`
		Warnings []string `json:"warnings"`
	} `json:"error_bars"`
}

func readSummary(t *testing.T, path string) summaryQuantities {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s summaryQuantities
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// sameQuantities fails t unless the run's and the summary's quantities
// are the same to the bit, and there are want of them (any number above
// 0 when want is 0).
func sameQuantities(t *testing.T, run, sum summaryQuantities, want int) {
	t.Helper()
	a, b := run.ErrorBars.Quantities, sum.ErrorBars.Quantities
	if len(a) == 0 || len(a) != len(b) || (want > 0 && len(a) != want) {
		t.Fatalf("%d quantities in the run, %d in the summary (want %d)", len(a), len(b), want)
	}
	for k, q := range a {
		if fmt.Sprint(q) != fmt.Sprint(b[k]) {
			t.Errorf("run %+v, summary %+v", q, b[k])
		}
	}
}

// dstein summary on the draws of a dstein run gives that run's table, to
// the bit, with the model; and the same R̂ and ESS from the CSV and from
// an .npy array of the same draws without it.
func TestSummaryMatchesTheRun(t *testing.T) {
	dir := t.TempDir()
	model := "../../examples/ising-grid.json"
	draws, run, sum := filepath.Join(dir, "d.csv"), filepath.Join(dir, "run.json"), filepath.Join(dir, "sum.json")
	if code, _, errs := dstein(t, "sample", "--model", model, "--method", "gibbs", "--chains", "3", "--draws", "200", "--out", draws, "--json", run); code != 0 {
		t.Fatalf("sample: exit %d: %s", code, errs)
	}
	if code, _, errs := dstein(t, "summary", draws, "--model", model, "--json", sum); code != 0 {
		t.Fatalf("summary: exit %d: %s", code, errs)
	}
	sameQuantities(t, readSummary(t, run), readSummary(t, sum), 0)
	// The same draws as a (chain, draw, variable) array, without a model.
	f, _ := os.Open(draws)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var vals []float64
	for _, r := range rows[1:] {
		for _, c := range r[3:] { // after chain, draw and lp__
			v, _ := strconv.ParseFloat(c, 64)
			vals = append(vals, v)
		}
	}
	arr := filepath.Join(dir, "d.npy")
	af, err := os.Create(arr)
	if err != nil {
		t.Fatal(err)
	}
	if err := npy.Write(af, []int{3, 200, len(rows[0]) - 3}, vals); err != nil {
		t.Fatal(err)
	}
	af.Close()
	fromCSV, fromNPY := filepath.Join(dir, "c.json"), filepath.Join(dir, "n.json")
	for _, c := range [][2]string{{draws, fromCSV}, {arr, fromNPY}} {
		if code, _, errs := dstein(t, "summary", c[0], "--json", c[1]); code != 0 {
			t.Fatalf("summary %s: exit %d: %s", c[0], code, errs)
		}
	}
	x, y := readSummary(t, fromCSV), readSummary(t, fromNPY)
	if len(x.ErrorBars.Quantities) != len(y.ErrorBars.Quantities) || len(x.ErrorBars.Quantities) == 0 {
		t.Fatalf("%d and %d quantities", len(x.ErrorBars.Quantities), len(y.ErrorBars.Quantities))
	}
	for k, q := range x.ErrorBars.Quantities {
		if fmt.Sprint(q) != fmt.Sprint(y.ErrorBars.Quantities[k]) {
			t.Errorf("CSV %+v, npy %+v", q, y.ErrorBars.Quantities[k])
		}
	}
	// Without a model the variables are the draws' ±1 values: their R̂
	// and ESS are the run's (the frequencies, not the Rao–Blackwellised
	// means, which the run reports).
	if x.ErrorBars.Quantities[0].Name != "z0" {
		t.Errorf("first quantity without a model: %q", x.ErrorBars.Quantities[0].Name)
	}
}

// Draws made given evidence give back the run's table to the bit when
// summary is given the same evidence; a draw that breaks the evidence is
// refused, and evidence without a model is a usage error.
func TestSummaryGivenEvidence(t *testing.T) {
	dir := t.TempDir()
	model, evid := "../../examples/sprinkler.uai", "../../examples/sprinkler.uai.evid"
	draws, run, sum := filepath.Join(dir, "d.csv"), filepath.Join(dir, "run.json"), filepath.Join(dir, "sum.json")
	if code, _, errs := dstein(t, "sample", "--model", model, "--evidence", evid, "--method", "gibbs", "--chains", "3", "--draws", "300", "--out", draws, "--json", run); code != 0 {
		t.Fatalf("sample: exit %d: %s", code, errs)
	}
	if code, _, errs := dstein(t, "summary", draws, "--model", model, "--evidence", evid, "--json", sum); code != 0 {
		t.Fatalf("summary: exit %d: %s", code, errs)
	}
	sameQuantities(t, readSummary(t, run), readSummary(t, sum), 0)
	var js struct{ Evidence map[string]int }
	raw, _ := os.ReadFile(sum)
	if err := json.Unmarshal(raw, &js); err != nil || len(js.Evidence) != 1 || js.Evidence["z3"] != 1 {
		t.Errorf("summary's evidence %v (%v); want z3 at state 1", js.Evidence, err)
	}
	// The same draws against other evidence: refused, naming the variable.
	if code, _, errs := dstein(t, "summary", draws, "--model", model, "--given", "z3=0"); code != 1 || !strings.Contains(errs, "has z3 = 1, but the evidence sets it to 0") {
		t.Errorf("draws that break the evidence: exit %d, %q", code, errs)
	}
	if code, _, errs := dstein(t, "summary", draws, "--given", "z3=1"); code != 2 || !strings.Contains(errs, "apply with --model") {
		t.Errorf("evidence without a model: exit %d, %q", code, errs)
	}
	if code, _, errs := dstein(t, "summary", draws, "--estimates", "rao-blackwell"); code != 2 || !strings.Contains(errs, "needs --model") {
		t.Errorf("Rao–Blackwell estimates without a model: exit %d, %q", code, errs)
	}
}

// A network whose variables are named like the CSV's own columns (chain,
// draw, lp__, x__; x__ the first variable) is written, summarised and
// tested from that CSV as the run saw it: the first chain and draw columns
// number the draws, and only the leading lp__ is a statistic. Before, summary found no
// variable and gof saw a header of 0 columns. A byte order mark before
// the header is ignored, as README says of every CSV input.
func TestVariablesNamedLikeColumns(t *testing.T) {
	dir := t.TempDir()
	net := writeFile(t, "clash.bif", `network n {}
variable x__ { type discrete [ 2 ] { a, b }; }
variable chain { type discrete [ 2 ] { a, b }; }
variable lp__ { type discrete [ 2 ] { a, b }; }
variable draw { type discrete [ 2 ] { a, b }; }
probability ( chain ) { table 0.3, 0.7; }
probability ( x__ | chain ) { (a) 0.9, 0.1; (b) 0.2, 0.8; }
probability ( lp__ ) { table 0.5, 0.5; }
probability ( draw | lp__ ) { (a) 0.6, 0.4; (b) 0.1, 0.9; }
`)
	draws, run, sum := filepath.Join(dir, "d.csv"), filepath.Join(dir, "run.json"), filepath.Join(dir, "sum.json")
	if code, _, errs := dstein(t, "sample", "--model", net, "--method", "gibbs", "--chains", "2", "--draws", "100", "--out", draws, "--json", run); code != 0 {
		t.Fatalf("sample: exit %d: %s", code, errs)
	}
	raw, _ := os.ReadFile(draws)
	if err := os.WriteFile(draws, append([]byte("\ufeff"), raw...), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := dstein(t, "summary", draws, "--model", net, "--json", sum); code != 0 {
		t.Fatalf("summary: exit %d: %s", code, errs)
	}
	sameQuantities(t, readSummary(t, run), readSummary(t, sum), 5) // log_p and 4 variables
	if code, out, errs := dstein(t, "summary", draws); code != 0 || !strings.Contains(out, "of 4 variables") {
		t.Errorf("summary without the model: exit %d: %s %s", code, out, errs)
	}
	if code, out, errs := dstein(t, "gof", "--model", net, "--samples", draws, "--test", "dksd"); code != 0 || !strings.Contains(out, "n = 200, 4 variables") {
		t.Errorf("gof: exit %d: %s %s", code, out, errs)
	}
}

// A chain stuck in one state among mixing ones gets R̂'s warning.
func TestSummaryFlagsAStuckChain(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("chain,draw,lp__,a,b\n")
	r := rng.NewKey(5).Rand()
	for c := 1; c <= 4; c++ {
		for d := 1; d <= 300; d++ {
			a, bb := r.IntN(2), r.IntN(3)
			if c == 4 {
				a, bb = 1, 2
			}
			fmt.Fprintf(&b, "%d,%d,-1.5,%d,%d\n", c, d, a, bb)
		}
	}
	path := writeTestFile(t, dir, "stuck.csv", b.String())
	code, out, errs := dstein(t, "summary", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "R̂ >") || strings.Contains(out, "lp__") {
		t.Fatalf("no R̂ warning for a stuck chain, or lp__ summarised:\n%s", out)
	}
	if !strings.Contains(out, "b=2") {
		t.Errorf("the three-valued column has no indicator b=2:\n%s", out)
	}
}

func TestSummaryBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		body, want string
		args       []string
	}{
		{"chain,draw,a\n1,1,0\n1,2,1\n2,1,0\n", "chain 1 has 2 draws and chain 2 has 1", nil},
		{"a,b\n0,1\n", "lacks a chain or a draw column", nil},
		{"chain,draw,a\n1,1,x\n", "variable a is \"x\"", nil},
		{"chain,draw,a\n1,1,0\n1,1,1\n", "draw 1 twice", nil},
		// Integers beyond 2⁵³ merged into one state; values beyond 1e150
		// made the JSON fail on +Inf after the table was printed.
		{"chain,draw,a\n1,1,9007199254740993\n1,2,9007199254740992\n", "an integer beyond ±2⁵³", nil},
		{"chain,draw,a\n1,1,1e160\n1,2,1\n", "want at most 1e+150 in magnitude", nil},
		{"chain,draw,a,b\n1,1,0,1\n1,2,0\n", "line 3: a row of 3 fields; the header has 4", nil},
		{continuousDraws(), "variable a takes 400 distinct values in 400 draws; summary is for discrete variables", nil},
		{"chain,draw,z0\n1,1,0\n1,2,1\n", "no column for the model's variable", []string{"--model", "../../examples/ising-grid.json"}},
	} {
		path := writeTestFile(t, dir, "bad.csv", c.body)
		code, _, errs := dstein(t, append([]string{"summary", path}, c.args...)...)
		if code == 0 || !strings.Contains(errs, c.want) || strings.Contains(errs, "goroutine") {
			t.Errorf("%q: exit %d, %q; want an error with %q", c.body, code, errs, c.want)
		}
	}
	if code, _, errs := dstein(t, "summary"); code != 2 || !strings.Contains(errs, "one DRAWS file") {
		t.Errorf("no argument: exit %d, %q", code, errs)
	}
}

// Draws too few for error bars (3 a chain) still give their means and
// frequencies, with the note that says why there are no error bars.
func TestSummaryTooFewDrawsPrintsMeans(t *testing.T) {
	dir := t.TempDir()
	path := writeTestFile(t, dir, "short.csv", "chain,draw,a,b\n1,1,0,2\n1,2,1,2\n1,3,1,0\n2,1,0,0\n2,2,1,1\n2,3,1,1\n")
	code, out, errs := dstein(t, "summary", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"3 draws per chain are too few", "keep at least 4 (in the file)", "\na           0.6667  0: 0.333  1: 0.667", "\nb           1.0000  0: 0.333  1: 0.333  2: 0.333"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A variable of many states prints at most maxStatesShown of them, in
// every table (a Potts variable of 10⁶ states printed a line of 15 MB).
func TestManyStatesPrintShort(t *testing.T) {
	dir := t.TempDir()
	m := writeTestFile(t, dir, "q.json", `{"type":"potts","q":40,"n":1,"edges":[]}`)
	for _, args := range [][]string{
		{"sample", "--model", m, "--method", "gibbs", "--n", "3", "--iters", "2"},
		{"sample", "--model", m, "--method", "gibbs", "--chains", "2", "--draws", "20"},
		{"exact", "--model", m},
	} {
		code, out, errs := dstein(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		for _, line := range strings.Split(out, "\n") {
			if len(line) > 400 && !strings.HasPrefix(line, "warning") { // warnings are prose
				t.Errorf("%v: a line of %d characters: %.200s…", args, len(line), line)
			}
		}
		if !strings.Contains(out, "28 more states (--json)") && !strings.Contains(out, "at most 12 states each") {
			t.Errorf("%v: no note of the states left out:\n%s", args, out)
		}
	}
}

// An .npy array whose dstein sidecar describes another array (names too
// few, other dimensions) is refused, not read with z0, z1, … in silence; a
// JSON file beside it that is not a dstein sidecar is left alone.
func TestSummaryNpySidecarMismatch(t *testing.T) {
	dir := t.TempDir()
	arr := filepath.Join(dir, "d.npy")
	af, err := os.Create(arr)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]float64, 2*10*3)
	for k := range vals {
		vals[k] = float64(k % 2)
	}
	if err := npy.Write(af, []int{2, 10, 3}, vals); err != nil {
		t.Fatal(err)
	}
	af.Close()
	side := filepath.Join(dir, "d.json")
	for _, c := range []struct{ sidecar, want string }{
		{`{"format":"` + report.SidecarFormat + `","dims":["chain","draw","variable"],"variables":["a","b"]}`, "names 2 variables, the array has 3"},
		{`{"format":"` + report.SidecarFormat + `","dims":["replicate","particle","variable"],"variables":["a","b","c"]}`, "not (chain, draw, variable)"},
		{`{"mine": true}`, ""},
		{`{"format":"` + report.SidecarFormat + `","dims":["chain","draw","variable"],"variables":["a","b","c"]}`, ""},
	} {
		if err := os.WriteFile(side, []byte(c.sidecar), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := dstein(t, "summary", arr)
		switch {
		case c.want == "" && code != 0:
			t.Errorf("%s: exit %d: %s", c.sidecar, code, errs)
		case c.want != "" && (code != 1 || !strings.Contains(errs, c.want)):
			t.Errorf("%s: exit %d, %q; want %q", c.sidecar, code, errs, c.want)
		}
	}
}

// Many variables of few draws: the quantities' summaries, not the draws,
// decide the memory, and --max-memory refuses them before the work (20,000
// binary variables of 8 draws need about 50 MB; their draws alone 21 MB,
// which the old estimate counted).
func TestSummaryMemoryCountsTheQuantities(t *testing.T) {
	const d = 20000
	var b strings.Builder
	b.WriteString("chain,draw")
	for i := range d {
		fmt.Fprintf(&b, ",v%d", i)
	}
	b.WriteByte('\n')
	r := rng.NewKey(1).Rand()
	for c := 1; c <= 2; c++ {
		for k := 1; k <= 4; k++ {
			fmt.Fprintf(&b, "%d,%d", c, k)
			for range d {
				fmt.Fprintf(&b, ",%d", r.IntN(2))
			}
			b.WriteByte('\n')
		}
	}
	p := writeFile(t, "wide.csv", b.String())
	code, _, errs := dstein(t, "summary", p, "--max-memory", "40MB")
	if code != 3 || !strings.Contains(errs, "the summary of 20001 quantities of 8 draws needs about") {
		t.Errorf("40MB for 20,000 quantities: exit %d, %q; want a refusal (exit 3)", code, errs)
	}
	if code, _, errs := dstein(t, "summary", p, "--max-memory", "80MB"); code != 0 {
		t.Errorf("80MB: exit %d, %q", code, errs)
	}
}

// continuousDraws is a CSV of 2 chains × 200 draws of a variable with a
// new value at every draw, as a continuous sampler gives.
func continuousDraws() string {
	var b strings.Builder
	b.WriteString("chain,draw,a\n")
	for c := 1; c <= 2; c++ {
		for k := 1; k <= 200; k++ {
			fmt.Fprintf(&b, "%d,%d,%g\n", c, k, float64(c*1000+k)/7)
		}
	}
	return b.String()
}

// TestSummaryKeepsTheSidecar: the sidecar of an .npy array is an input of
// summary (its names, states and lp__), so --json may not name it.
func TestSummaryKeepsTheSidecar(t *testing.T) {
	dir := t.TempDir()
	npyPath, side := filepath.Join(dir, "d.npy"), filepath.Join(dir, "d.json")
	if code, _, errs := dstein(t, "sample", "--model", "../../examples/ising-grid.json", "--method", "gibbs", "--chains", "2", "--draws", "20",
		"--format", "npy", "--out", npyPath); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	before, err := os.ReadFile(side)
	if err != nil {
		t.Fatal(err)
	}
	code, _, errs := dstein(t, "summary", npyPath, "--json", side)
	if code == 0 || !strings.Contains(errs, "d.json") {
		t.Errorf("summary --json on the array's sidecar: exit %d, %q; want a refusal that names it", code, errs)
	}
	if after, _ := os.ReadFile(side); !bytes.Equal(after, before) {
		t.Errorf("the sidecar changed")
	}
}
