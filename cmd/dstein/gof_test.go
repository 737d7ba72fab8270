package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

const gridModel = "../../examples/ising-grid.json"

// exactSamples writes n exact samples of the 10×10 Ising grid to a CSV file
// with dstein sample and returns its path.
func exactSamples(t *testing.T, n int, seed string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.csv")
	code, _, errs := dstein(t, "sample", "--model", gridModel, "--method", "exact", "--n", strconv.Itoa(n), "--seed", seed, "--out", p)
	if code != 0 {
		t.Fatalf("dstein sample: exit %d: %s", code, errs)
	}
	return p
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func TestGofCommand(t *testing.T) {
	samples := exactSamples(t, 200, "1")
	// A grid with a field of 0.5 on every spin: far from the samples.
	wrong := writeFile(t, "wrong.json", `{"type": "ising", "grid": {"rows": 10, "cols": 10, "periodic": false}, "coupling": 0.1, "field": 0.5}`)
	for _, test := range []string{"gfksd", "dksd", "bksd", "mmd"} {
		for _, c := range []struct {
			model  string
			reject bool
		}{{gridModel, false}, {wrong, true}} {
			j := filepath.Join(t.TempDir(), "r.json")
			code, out, errs := dstein(t, "gof", "--model", c.model, "--samples", samples, "--test", test,
				"--level", "0.05", "--bootstrap", "200", "--seed", "1", "--json", j)
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", test, code, errs)
			}
			draws := "(200 multinomial bootstrap draws)"
			if test == "mmd" {
				draws = "(200 permutations)"
			}
			verdict := "do not reject H0 at α = 0.05"
			if c.reject {
				verdict = ": reject H0 at α = 0.05"
			}
			first, _, _ := strings.Cut(out, "\n")
			if !strings.HasPrefix(first, test+": statistic ") || !strings.Contains(first, ", p-value ") ||
				!strings.Contains(first, draws) || !strings.HasSuffix(first, verdict) {
				t.Errorf("%s on %s: verdict line %q; want %q … %s … %s", test, c.model, first, test+": statistic", draws, verdict)
			}
			for _, want := range []string{"samples    " + samples + ": n = 200, 100 variables", "critical   ", "kernel     ", "wrote " + j} {
				if !strings.Contains(out, want) {
					t.Errorf("%s: output lacks %q:\n%s", test, want, out)
				}
			}
			r := readJSON(t, j)
			for _, k := range []string{"test", "n", "statistic", "p_value", "critical_value", "alpha", "reject", "bootstrap", "bootstrap_kind", "bandwidth"} {
				if _, ok := r[k]; !ok {
					t.Errorf("%s: JSON lacks %q: %v", test, k, r)
				}
			}
			p, _ := r["p_value"].(float64)
			if r["test"] != test || r["n"] != 200.0 || r["alpha"] != 0.05 || r["bootstrap"] != 200.0 ||
				!(p > 0 && p <= 1) || r["reject"] != (p <= 0.05) || r["reject"] != c.reject {
				t.Errorf("%s on %s: JSON %v", test, c.model, r)
			}
			if bw, _ := r["bandwidth"].(float64); !(bw > 0) {
				t.Errorf("%s: bandwidth %v", test, r["bandwidth"])
			}
			switch test {
			case "gfksd":
				if ess, _ := r["weight_ess"].(float64); !(ess > 0 && ess <= 200) || r["bootstrap_kind"] != "multinomial" {
					t.Errorf("gfksd: JSON %v", r)
				}
				if !strings.Contains(out, "(median rule); surrogate relaxed, τ = 0.02; weight ESS") {
					t.Errorf("gfksd: output does not describe the kernel and surrogate:\n%s", out)
				}
			case "mmd":
				if r["reference"] != "exact" || r["bootstrap_kind"] != "permutation" || !strings.Contains(out, "reference  200 samples from the model: exact") {
					t.Errorf("mmd: reference %v, output:\n%s", r["reference"], out)
				}
			}
		}
	}
	// Settings reach the test.
	j := filepath.Join(t.TempDir(), "r.json")
	code, out, errs := dstein(t, "gof", "--model", gridModel, "--samples", samples, "--bootstrap", "50", "--bootstrap-kind", "rademacher",
		"--surrogate", "base", "--bandwidth", "fixed", "--fixed-h", "3", "--bandwidth-scale", "2", "--json", j)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if r := readJSON(t, j); r["bandwidth"] != 6.0 || r["bootstrap_kind"] != "rademacher" || !strings.Contains(out, "(fixed rule); surrogate base;") {
		t.Errorf("settings: JSON %v, output:\n%s", r, out)
	}
}

// Same seed, same JSON bytes at GOMAXPROCS 1, 2 and 16; another seed gives
// another result.
func TestGofSameSeedSameBytes(t *testing.T) {
	samples := exactSamples(t, 100, "2")
	dir := t.TempDir()
	for _, test := range []string{"gfksd", "dksd", "bksd", "mmd"} {
		var got [4][]byte
		for k, procs := range []int{1, 2, 16, 2} {
			seed := "5"
			if k == 3 {
				seed = "6"
			}
			old := runtime.GOMAXPROCS(procs)
			j := filepath.Join(dir, test+strconv.Itoa(k)+".json")
			code, _, errs := dstein(t, "gof", "--model", gridModel, "--samples", samples, "--test", test, "--bootstrap", "100", "--seed", seed, "--json", j)
			runtime.GOMAXPROCS(old)
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", test, code, errs)
			}
			got[k], _ = os.ReadFile(j)
		}
		for k, procs := range []int{2, 16} {
			if !bytes.Equal(got[0], got[k+1]) {
				t.Errorf("%s: JSON differs between GOMAXPROCS 1 and %d:\n%s\n%s", test, procs, got[0], got[k+1])
			}
		}
		if bytes.Equal(got[0], got[3]) {
			t.Errorf("%s: seeds 5 and 6 gave the same JSON", test)
		}
	}
}

// Samples the model cannot produce reject at once; the JSON holds null for
// the infinite statistic.
func TestGofImpossibleSamples(t *testing.T) {
	m := writeFile(t, "m.json", `{"type":"categorical","variables":[{"states":[-1,-0.5,0],"probs":[0.5,0.5,0]}]}`)
	s := writeFile(t, "s.csv", "z0\n-1\n0\n-0.5\n0\n")
	for _, test := range []string{"gfksd", "dksd", "bksd"} {
		j := filepath.Join(t.TempDir(), "r.json")
		code, out, errs := dstein(t, "gof", "--model", m, "--samples", s, "--test", test, "--json", j)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", test, code, errs)
		}
		if !strings.HasPrefix(out, test+": 2 of 4 samples have probability zero under the model: reject H0") {
			t.Errorf("%s: output:\n%s", test, out)
		}
		// No statistic was computed: no kernel line (it printed d = 0),
		// and no caveat about the bootstrap, which did not run.
		if strings.Contains(out, "kernel") || strings.Contains(out, "warning") {
			t.Errorf("%s: output of an outright rejection:\n%s", test, out)
		}
		r := readJSON(t, j)
		if r["statistic"] != nil || r["reject"] != true || r["impossible"] != 2.0 || r["p_value"] != 0.0 {
			t.Errorf("%s: JSON %v", test, r)
		}
	}
}

// Bad samples files and bad flags: one line naming the problem, a non-zero
// exit code, no stack trace, nothing written.
func TestGofBadInputGivesOneLine(t *testing.T) {
	samples := exactSamples(t, 20, "1")
	header := "z0"
	for i := 1; i < 100; i++ {
		header += ",z" + strconv.Itoa(i)
	}
	row := strings.TrimSuffix(strings.Repeat("1,", 100), ",")
	csvWith := func(rows ...string) string {
		return writeFile(t, "s.csv", header+"\n"+strings.Join(rows, "\n")+"\n")
	}
	badRow := func(i int, v string) string {
		cells := strings.Split(row, ",")
		cells[i] = v
		return strings.Join(cells, ",")
	}
	g, s := gridModel, samples
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no model", []string{"--samples", s}, 2, "--model is required"},
		{"no samples", []string{"--model", g}, 2, "--samples is required"},
		{"unknown test", []string{"--model", g, "--samples", s, "--test", "ks"}, 2, `unknown test "ks"`},
		{"level 0", []string{"--model", g, "--samples", s, "--level", "0"}, 2, "--level must be in (0, 1)"},
		{"level 1.5", []string{"--model", g, "--samples", s, "--level", "1.5"}, 2, "--level must be in (0, 1)"},
		{"level NaN", []string{"--model", g, "--samples", s, "--level", "NaN"}, 2, "--level must be a finite number"},
		{"bootstrap 0", []string{"--model", g, "--samples", s, "--bootstrap", "0"}, 2, "--bootstrap must be at least 1"},
		{"bootstrap kind", []string{"--model", g, "--samples", s, "--bootstrap-kind", "gaussian"}, 2, `unknown bootstrap "gaussian"`},
		{"kind with mmd", []string{"--model", g, "--samples", s, "--test", "mmd", "--bootstrap-kind", "rademacher"}, 2, "permutations"},
		{"surrogate", []string{"--model", g, "--samples", s, "--surrogate", "smooth"}, 2, `unknown surrogate "smooth"`},
		{"surrogate with dksd", []string{"--model", g, "--samples", s, "--test", "dksd", "--surrogate", "base"}, 2, "--surrogate applies to --test gfksd only"},
		{"sweeps with gfksd", []string{"--model", g, "--samples", s, "--reference-sweeps", "10"}, 2, "--reference-sweeps applies to --test mmd only"},
		{"sweeps 0", []string{"--model", g, "--samples", s, "--test", "mmd", "--reference-sweeps", "0"}, 2, "--reference-sweeps must be at least 1"},
		{"bandwidth", []string{"--model", g, "--samples", s, "--bandwidth", "wide"}, 2, `unknown bandwidth rule "wide"`},
		{"fixed without h", []string{"--model", g, "--samples", s, "--bandwidth", "fixed"}, 2, "fixed bandwidth is 0"},
		{"h with median", []string{"--model", g, "--samples", s, "--bandwidth", "median", "--fixed-h", "2"}, 2, "--fixed-h is the bandwidth of --bandwidth fixed"},
		{"negative h", []string{"--model", g, "--samples", s, "--bandwidth", "fixed", "--fixed-h", "-2"}, 2, "fixed bandwidth is -2"},
		{"bandwidth scale", []string{"--model", g, "--samples", s, "--bandwidth-scale", "0"}, 2, "--bandwidth-scale must be"},
		{"temperature", []string{"--model", g, "--samples", s, "--temperature", "0"}, 2, "--temperature must be"},
		{"temperature with base", []string{"--model", g, "--samples", s, "--surrogate", "base", "--temperature", "0.5"}, 2, "--temperature applies to the relaxed surrogate"},
		{"bad level", []string{"--model", g, "--samples", s, "--level", "x"}, 2, "--level x: want a number"},
		{"old flag", []string{"--model", g, "--samples", s, "--alpha", "0.1"}, 2, "unknown flag --alpha"},
		{"argument", []string{"--model", g, "--samples", s, "extra"}, 2, "unknown command"},
		{"bad model", []string{"--model", writeFile(t, "m.json", `{"type":"ising",`), "--samples", s}, 1, "ends early"},
		{"missing samples", []string{"--model", g, "--samples", "/no/such/file.csv"}, 1, "does not exist"},
		{"empty samples", []string{"--model", g, "--samples", writeFile(t, "s.csv", "")}, 1, "s.csv: the samples file is empty"},
		{"header only", []string{"--model", g, "--samples", csvWith()}, 1, "s.csv: no samples"},
		{"one sample", []string{"--model", g, "--samples", csvWith(row)}, 1, "s.csv: 1 sample; a test needs at least 2"},
		{"header width", []string{"--model", g, "--samples", writeFile(t, "s.csv", "z0,z1\n1,1\n")}, 1, "s.csv: line 1: the header has 2 columns, the model has 100 variables"},
		{"row width", []string{"--model", g, "--samples", csvWith(row, row+",1")}, 1, "s.csv: line 3: 101 columns, want 100"},
		{"unknown state", []string{"--model", g, "--samples", csvWith(row, badRow(7, "0"))}, 1, "s.csv: line 3, column 8 (z7): 0 is not a state of the model (states: -1, 1)"},
		{"non-numeric", []string{"--model", g, "--samples", csvWith(badRow(0, "up"), row)}, 1, `s.csv: line 2, column 1 (z0): "up" is not a number`},
		{"nan", []string{"--model", g, "--samples", csvWith(row, badRow(99, "NaN"))}, 1, `line 3, column 100 (z99): "NaN" is not a finite number`},
		{"inf", []string{"--model", g, "--samples", csvWith(row, badRow(3, "+Inf"))}, 1, `line 3, column 4 (z3): "+Inf" is not a finite number`},
		{"other model's samples", []string{"--model", "../../examples/categorical.json", "--samples", s}, 1, "line 1: the header has 100 columns, the model has 1 variable"},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "r.json")
		code, _, errs := dstein(t, append(append([]string{"gof"}, c.args...), "--json", out)...)
		checkCLIError(t, c.name, code, c.code, errs, c.want, out)
	}
}

func TestGofInterruptWritesNothing(t *testing.T) {
	samples := exactSamples(t, 20, "1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, test := range []string{"gfksd", "dksd", "bksd", "mmd"} {
		out := filepath.Join(t.TempDir(), "r.json")
		var o, e bytes.Buffer
		code := run(ctx, []string{"gof", "--model", gridModel, "--samples", samples, "--test", test, "--json", out}, &o, &e)
		if code != exitInterrupted || e.String() != "dstein: interrupted; nothing written\n" {
			t.Errorf("%s: exit %d, stderr %q", test, code, e.String())
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: an interrupted test wrote its result", test)
		}
	}
}

// TestGofWithEvidence: samples that dstein sample drew given evidence (every
// variable of the file, the evidence's at its values) are tested against
// the model given the same evidence, by file (--evidence) or by name
// (--given), with the same result; samples that break the evidence are
// refused naming the sample and the variable.
func TestGofWithEvidence(t *testing.T) {
	dir := t.TempDir()
	net, ev := "../../examples/sprinkler.uai", "../../examples/sprinkler.uai.evid"
	s := filepath.Join(dir, "s.csv")
	if code, _, errs := dstein(t, "sample", "--model", net, "--evidence", ev, "--method", "exact", "--n", "200", "--seed", "3", "--out", s); code != 0 {
		t.Fatalf("sample: exit %d: %s", code, errs)
	}
	var outs []string
	for _, by := range [][]string{{"--evidence", ev}, {"--given", "z3=1"}} {
		code, out, errs := dstein(t, append([]string{"gof", "--model", net, "--samples", s, "--test", "bksd", "--seed", "2"}, by...)...)
		if code != 0 || !strings.Contains(out, "samples    "+s+": n = 200, 4 variables") {
			t.Fatalf("gof %v: exit %d: %s%s", by, code, out, errs)
		}
		outs = append(outs, strings.SplitN(out, "\n", 2)[0])
	}
	if outs[0] != outs[1] {
		t.Errorf("--evidence and --given differ: %q, %q", outs[0], outs[1])
	}
	code, _, errs := dstein(t, "gof", "--model", net, "--samples", s, "--given", "z3=0")
	if code != 1 || !strings.Contains(errs, "sample 1 has z3 = 1, but the evidence sets it to 0; want samples drawn given the same evidence") {
		t.Errorf("samples against other evidence: exit %d, %q", code, errs)
	}
}

// A sample that is one state repeated (on an Ising model with strong
// fields 3, where 40 such rows have probability about 0.9) gets the
// bootstrap's caveat, in the output and in the JSON (level_checked false),
// and a reject from the bootstrap; the simulated null prints no caveat and
// does not reject it, and the default, auto, simulates it and says why.
func TestGofSimulatedNull(t *testing.T) {
	dir := t.TempDir()
	m := writeFile(t, "field.json", `{"type":"ising","n":6,"edges":[[0,1,0.4],[1,2,0.4],[2,3,0.4],[3,4,0.4],[4,5,0.4],[5,0,0.4]],"field":3}`)
	var b strings.Builder
	b.WriteString("z0,z1,z2,z3,z4,z5\n")
	for range 40 {
		b.WriteString("1,1,1,1,1,1\n")
	}
	s := writeFile(t, "up.csv", b.String())
	boot, sim := filepath.Join(dir, "boot.json"), filepath.Join(dir, "sim.json")
	code, out, errs := dstein(t, "gof", "--model", m, "--samples", s, "--test", "bksd", "--bootstrap-kind", "multinomial", "--json", boot)
	if code != 0 || !strings.Contains(out, "warning    the sample is one state repeated 40 times") || !strings.Contains(out, "--bootstrap-kind simulation") {
		t.Fatalf("bootstrap: exit %d: %s %s", code, out, errs)
	}
	if j := readJSON(t, boot); j["level_checked"] != false || !strings.Contains(j["warning"].(string), "one state repeated") || j["reject"] != true {
		t.Errorf("bootstrap JSON: %v", j)
	}
	code, out, errs = dstein(t, "gof", "--model", m, "--samples", s, "--test", "bksd", "--bootstrap-kind", "simulation", "--bootstrap", "199", "--json", sim)
	if code != 0 || strings.Contains(out, "warning") || !strings.Contains(out, "null simulated from 199 exact data sets of n = 40") {
		t.Fatalf("simulation: exit %d: %s %s", code, out, errs)
	}
	if j := readJSON(t, sim); j["level_checked"] != true || j["bootstrap_kind"] != "simulation" || j["reject"] != false || j["bootstrap_reason"] != nil {
		t.Errorf("simulation JSON: %v", j)
	}
	auto := filepath.Join(dir, "auto.json")
	code, out, errs = dstein(t, "gof", "--model", m, "--samples", s, "--test", "bksd", "--bootstrap", "199", "--json", auto)
	if code != 0 || strings.Contains(out, "warning") || !strings.Contains(out, "null simulated from 199 exact data sets of n = 40") ||
		!strings.Contains(out, "null       --bootstrap-kind auto chose simulation: the sample is one state repeated 40 times") {
		t.Fatalf("auto: exit %d: %s %s", code, out, errs)
	}
	if j := readJSON(t, auto); j["level_checked"] != true || j["bootstrap_kind"] != "simulation" || j["reject"] != false ||
		!strings.Contains(j["bootstrap_reason"].(string), "one state repeated") {
		t.Errorf("auto JSON: %v", j)
	}
}

// Auto keeps the bootstrap, with the caveat and its reason, where the
// null cannot be simulated: a 40-spin complete graph (no exact sampler),
// and 300 spins at n = 25, whose simulation would cost 1000·25·300·325 ≈
// 2.4e9 units of work, above gof.AutoWork. A sample of many distinct rows is not
// flagged at all.
func TestGofAutoKeepsTheBootstrap(t *testing.T) {
	rows := func(name string, d, n int, row func(i, l int) int) string {
		var b strings.Builder
		for l := range d {
			if l > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "z%d", l)
		}
		b.WriteByte('\n')
		for i := range n {
			for l := range d {
				if l > 0 {
					b.WriteByte(',')
				}
				fmt.Fprint(&b, row(i, l))
			}
			b.WriteByte('\n')
		}
		return writeFile(t, name, b.String())
	}
	up := func(i, l int) int { return 1 }
	k40 := writeFile(t, "k40.json", `{"type": "ising", "complete": {"n": 40}, "coupling": 0.05, "field": 3}`)
	chain := writeFile(t, "chain.json", `{"type": "ising", "grid": {"rows": 1, "cols": 300}, "coupling": 0.1}`)
	for _, c := range []struct {
		model, samples, why string
	}{
		{k40, rows("k40.csv", 40, 40, up), "but dstein cannot sample this model exactly to simulate the null"},
		{chain, rows("chain.csv", 300, 25, func(i, l int) int { return 1 - 2*((i*7+l*l)%3%2) }), "would cost 2.4e+09 units of work, above the 2e+09"},
	} {
		code, out, errs := dstein(t, "gof", "--model", c.model, "--samples", c.samples, "--test", "dksd")
		if code != 0 || !strings.Contains(out, "null       --bootstrap-kind auto chose multinomial: ") || !strings.Contains(out, c.why) ||
			!strings.Contains(out, "warning    ") || !strings.Contains(out, "multinomial bootstrap draws") {
			t.Errorf("%s: exit %d: %s %s", c.model, code, out, errs)
		}
	}
}
