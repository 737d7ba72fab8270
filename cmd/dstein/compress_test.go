package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dstein/dstein/compress"
)

// dstein compress reads the draws of chains (chain and draw columns), writes
// n points as a samples CSV, and gives the same bytes on a second run.
func TestCompressCommand(t *testing.T) {
	dir := t.TempDir()
	draws := filepath.Join(dir, "draws.csv")
	if code, _, errs := dstein(t, "sample", "--model", gridModel, "--method", "gibbs", "--chains", "2", "--draws", "300", "--out", draws); code != 0 {
		t.Fatalf("dstein sample: exit %d: %s", code, errs)
	}
	for _, rule := range []string{"herding", "stein"} {
		var outs [2][]byte
		for k := range outs {
			p := filepath.Join(dir, rule+string(rune('a'+k))+".csv")
			code, out, errs := dstein(t, "compress", "--model", gridModel, "--samples", draws, "--n", "20", "--rule", rule, "--out", p)
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", rule, code, errs)
			}
			if !strings.Contains(out, "20 points from 600 draws") {
				t.Errorf("%s: output %q", rule, out)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if lines := strings.Count(string(data), "\n"); lines != 21 {
				t.Errorf("%s: %d lines, want a header and 20 points", rule, lines)
			}
			outs[k] = data
		}
		if string(outs[0]) != string(outs[1]) {
			t.Errorf("%s: two runs wrote different bytes", rule)
		}
	}
	p := filepath.Join(dir, "w.csv")
	if code, out, errs := dstein(t, "compress", "--model", gridModel, "--samples", draws, "--n", "20", "--reweight", "ksd", "--out", p); code != 0 || !strings.Contains(out, "Stein importance weights") {
		t.Errorf("--reweight ksd: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--samples", draws}, "--model is required"},
		{[]string{"--model", gridModel}, "--samples is required"},
		{[]string{"--model", gridModel, "--samples", draws, "--rule", "herdin"}, `unknown rule "herdin"`},
		{[]string{"--model", gridModel, "--samples", draws, "--n", "0"}, "--n must be at least 1"},
		{[]string{"--model", gridModel, "--samples", draws, "--ell", "0"}, "--ell must be a finite number > 0"},
		// e^(1/ℓ) overflowed: the points were picked by NaN comparisons.
		{[]string{"--model", gridModel, "--samples", draws, "--rule", "stein", "--ell", "0.001"}, "--ell 0.001 is too small for --rule stein: want at least 0.01"},
		{[]string{"--model", gridModel, "--samples", draws, "--out", draws}, "draws.csv"},
		{[]string{"--model", gridModel, "--samples", draws, "--reweight", "kl"}, `unknown --reweight "kl"`},
		{[]string{"--model", gridModel, "--samples", draws, "--reweight", "ksd", "--rule", "stein"}, "--reweight applies to --rule herding"},
	} {
		code, _, errs := dstein(t, append([]string{"compress"}, c.args...)...)
		if code == 0 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", c.args, code, errs, c.want)
		}
	}
}

// dstein sample compresses as the run's last stage: the compact preset by
// default, any chains with --compress; the points are written without
// chain columns and the summary says how they were picked.
func TestSampleCompresses(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args  []string
		n     int
		draws string
	}{
		{[]string{"--method", "compact", "--n", "20"}, 20, "20 points from 240 draws"},
		{[]string{"--method", "gibbs", "--draws", "50", "--compress", "stein", "--points", "10"}, 10, "10 points from 200 draws"},
	} {
		p := filepath.Join(dir, "points.csv")
		js := filepath.Join(dir, "points.json")
		os.Remove(p)
		os.Remove(js)
		code, out, errs := dstein(t, append([]string{"sample", "--model", gridModel, "--out", p, "--json", js}, c.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		if !strings.Contains(out, c.draws) || !strings.Contains(out, "the table is the draws'") {
			t.Errorf("%v: output %q", c.args, out)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Split(strings.TrimSpace(string(data)), "\n"); len(lines) != c.n+1 || !strings.HasPrefix(lines[0], "z0,") {
			t.Errorf("%v: %d lines starting %q; want a header of variables and %d points", c.args, len(lines), lines[0], c.n)
		}
		var s struct {
			Samples    int `json:"samples"`
			Compressed *struct {
				Candidates int `json:"candidates"`
			} `json:"compressed"`
		}
		raw, _ := os.ReadFile(js)
		if err := json.Unmarshal(raw, &s); err != nil || s.Samples != c.n || s.Compressed == nil || s.Compressed.Candidates == 0 {
			t.Errorf("%v: summary %+v (%v)", c.args, s, err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--method", "compact", "--points", "5"}, "its --n is the number of points"},
		{[]string{"--method", "gibbs", "--draws", "10", "--compress", "herd"}, `unknown --compress rule "herd"`},
		{[]string{"--method", "gibbs", "--points", "5"}, "--points applies with --compress"},
		{[]string{"--method", "gibbs", "--draws", "10", "--compress", "stein", "--reweight", "ksd"}, "before herding"},
		{[]string{"--method", "gibbs", "--draws", "10", "--compress", "herding", "--ell", "-2"}, "--ell must be a finite number > 0"},
	} {
		code, _, errs := dstein(t, append([]string{"sample", "--model", gridModel}, c.args...)...)
		if code == 0 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", c.args, code, errs, c.want)
		}
	}
}

// Counts that size an allocation are refused before anything is allocated
// or written, in one line without a stack trace: a --n that no process
// could hold is a mistake in the command line (exit 2: no --max-memory
// makes it run); a --n that would need more memory than --max-memory is
// refused by the memory estimate, which counts the points (exit 3); Stein
// weights on more distinct states than their cap (the U×U kernel matrix)
// are a refusal for resources too (exit 3). More points than draws are
// allowed: points repeat draws.
func TestCompressRefusesCounts(t *testing.T) {
	dir := t.TempDir()
	draws := filepath.Join(dir, "draws.csv")
	if code, _, errs := dstein(t, "sample", "--model", gridModel, "--method", "gibbs", "--chains", "2", "--draws", "300", "--out", draws); code != 0 {
		t.Fatalf("dstein sample: exit %d: %s", code, errs)
	}
	// 3001 distinct states of the 10×10 grid: one over the Stein weights'
	// cap (compress.MaxWeightStates).
	many := filepath.Join(dir, "many.csv")
	var b strings.Builder
	for i := range 100 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "z%d", i)
	}
	b.WriteString("\n")
	r := rand.New(rand.NewPCG(1, 2))
	for range compress.MaxWeightStates + 1 {
		for i := range 100 {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString([]string{"-1", "1"}[r.IntN(2)])
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(many, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "points.csv")
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"n beyond any memory", []string{"--samples", draws, "--n", "9223372036854775807"}, exitUsage, "--n 9223372036854775807 is too large"},
		{"n beyond the default memory limit", []string{"--samples", draws, "--n", "100000000000"}, exitResource, "compressing to 100000000000 points of 100 variables needs about"},
		{"n beyond --max-memory", []string{"--samples", draws, "--n", "1000000", "--max-memory", "64MB"}, exitResource, "--max-memory raises it"},
		{"n beyond --max-memory with npy", []string{"--samples", draws, "--n", "1000000", "--max-memory", "64MB", "--format", "npy", "--out", filepath.Join(dir, "points.npy")}, exitResource, "1000000 points"},
		{"reweight over its cap", []string{"--samples", many, "--reweight", "ksd"}, exitResource, "3001 distinct states; Stein weights take at most 3000"},
	} {
		args := append([]string{"compress", "--model", gridModel, "--out", out}, c.args...)
		code, stdout, errs := dstein(t, args...)
		if code != c.code {
			t.Errorf("%s: exit %d; want %d (stderr %q)", c.name, code, c.code, errs)
		}
		if !strings.HasPrefix(errs, "dstein: ") || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%s: stderr %q; want one line with %q", c.name, errs, c.want)
		}
		if strings.Contains(errs, "goroutine") || strings.Contains(errs, "panic") || strings.Contains(errs, "internal error") {
			t.Errorf("%s: stderr %q looks like a crash", c.name, errs)
		}
		if strings.Contains(stdout, "wrote") {
			t.Errorf("%s: stdout %q says something was written", c.name, stdout)
		}
		for _, p := range []string{out, filepath.Join(dir, "points.npy"), filepath.Join(dir, "points.npy.json")} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s: %s written despite the refusal", c.name, p)
			}
		}
	}
	// More points than draws: the points repeat draws.
	code, stdout, errs := dstein(t, "compress", "--model", gridModel, "--samples", draws, "--n", "700", "--out", out)
	if code != 0 || !strings.Contains(stdout, "700 points from 600 draws") {
		t.Fatalf("700 points from 600 draws: exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
	if data, err := os.ReadFile(out); err != nil || strings.Count(string(data), "\n") != 701 {
		t.Errorf("700 points: %v, %d lines", err, strings.Count(string(data), "\n"))
	}
}

// More points than draws: said, not silent.
func TestCompressMorePointsThanDraws(t *testing.T) {
	s := exactSamples(t, 30, "2")
	code, out, errs := dstein(t, "compress", "--model", gridModel, "--samples", s, "--n", "40")
	if code != 0 || !strings.Contains(out, "note       40 points from 30 draws: at least 10 of them repeat a draw") {
		t.Errorf("exit %d: %s %s", code, out, errs)
	}
}

// Draws of a network given evidence are compressed against the model given
// it: the Stein rules once scored them against the unconditioned network
// (there was no --evidence). The points keep every column, the evidence's
// at its values; draws that break the evidence are refused; the Stein rule
// says that herding is the rule to use.
func TestCompressGivenEvidence(t *testing.T) {
	dir := t.TempDir()
	net, ev := "../../examples/sprinkler.uai", "../../examples/sprinkler.uai.evid"
	draws := filepath.Join(dir, "draws.csv")
	if code, _, errs := dstein(t, "sample", "--model", net, "--evidence", ev, "--method", "exact", "--n", "400", "--out", draws); code != 0 {
		t.Fatalf("dstein sample: exit %d: %s", code, errs)
	}
	ksd := func(args ...string) string {
		t.Helper()
		p := filepath.Join(dir, "points.csv")
		code, out, errs := dstein(t, append([]string{"compress", "--model", net, "--samples", draws, "--n", "20", "--rule", "stein", "--out", p}, args...)...)
		if code != 0 {
			t.Fatalf("compress %v: exit %d: %s", args, code, errs)
		}
		if !strings.Contains(out, "herding is the rule to use") {
			t.Errorf("compress %v: no warning on the Stein rule: %q", args, out)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n")[1:] {
			if f := strings.Split(line, ","); len(f) != 5 || f[3] != "1" {
				t.Errorf("compress %v: point %q; want 5 columns with z3 = 1 (the evidence)", args, line)
			}
		}
		return firstLine(out, "ksd²")
	}
	given, plain := ksd("--evidence", ev), ksd()
	if given == plain {
		t.Errorf("KSD² the same with and without the evidence: %q", given)
	}
	// A draw that breaks the evidence.
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("z0,z1,z2,z3,z4\n0,0,0,0,0\n0,0,0,1,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := dstein(t, "compress", "--model", net, "--evidence", ev, "--samples", bad, "--n", "1", "--out", filepath.Join(dir, "p2.csv"))
	checkCLIError(t, "draws against the evidence", code, exitError, errs, "the evidence sets it to 1", "")
}

// Draws of another model with the same variables and states were
// compressed without a word; their lp__ column says whose they are.
func TestCompressRefusesAnotherModelsDraws(t *testing.T) {
	dir := t.TempDir()
	a := writeTestFile(t, dir, "a.json", `{"type":"rbm","visible":6,"hidden":3,"random":{"w_std":1,"bias_std":1,"seed":1}}`)
	b := writeTestFile(t, dir, "b.json", `{"type":"rbm","visible":6,"hidden":3,"random":{"w_std":1,"bias_std":1,"seed":2}}`)
	draws := filepath.Join(dir, "draws.csv")
	if code, _, errs := dstein(t, "sample", "--model", a, "--method", "exact", "--n", "200", "--out", draws); code != 0 {
		t.Fatalf("dstein sample: exit %d: %s", code, errs)
	}
	if code, _, errs := dstein(t, "compress", "--model", a, "--samples", draws, "--n", "10", "--out", filepath.Join(dir, "p.csv")); code != 0 {
		t.Fatalf("compress of the model's own draws: exit %d: %s", code, errs)
	}
	code, _, errs := dstein(t, "compress", "--model", b, "--samples", draws, "--n", "10", "--out", filepath.Join(dir, "q.csv"))
	checkCLIError(t, "another model's draws", code, exitError, errs, "the samples come from another model", "")
	// gof tests samples against any model: it reads them as they are.
	if code, _, errs := dstein(t, "gof", "--model", b, "--samples", draws, "--test", "mmd", "--bootstrap", "50"); code != 0 {
		t.Errorf("gof of another model's draws: exit %d: %s", code, errs)
	}
}
