package main

import (
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
