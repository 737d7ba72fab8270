package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
