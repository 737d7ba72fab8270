package main

import (
	"strings"
	"testing"
)

// TestExperimentHelp: "dstein experiment NAME --help" lists that
// experiment's own options with its defaults and not the others'.
func TestExperimentHelp(t *testing.T) {
	code, out, errs := dstein(t, "experiment", "suite", "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	own := out[strings.Index(out, "Options of suite:"):strings.Index(out, "Flags of every experiment:")]
	for _, want := range []string{"--n int", "--estimates string", `(default "rao-blackwell")`, "--methods", "--uai"} {
		if !strings.Contains(own, want) {
			t.Errorf("suite's options lack %q:\n%s", want, own)
		}
	}
	for _, other := range []string{"--field", "--nmax", "--sigma", "--variants", "--fashion"} {
		if strings.Contains(out, other) {
			t.Errorf("suite's help lists %s, another experiment's option", other)
		}
	}
	if !strings.Contains(out, "--out-dir") || !strings.Contains(out, "suite-n20: dstein experiment suite --estimates frequencies --n 20") {
		t.Errorf("suite's help lacks the common flags or its published runs:\n%s", out)
	}
	code, out, _ = dstein(t, "experiment", "gof-rbm-n", "--help")
	if code != 0 || !strings.Contains(out, "--sigma float") || !strings.Contains(out, "(default 0.05)") {
		t.Errorf("gof-rbm-n's help (exit %d) lacks --sigma with its default:\n%s", code, out)
	}
	code, out, _ = dstein(t, "experiment", "gof-level", "--help")
	if code != 0 || !strings.Contains(out, "gof-level has no options of its own") {
		t.Errorf("gof-level's help (exit %d):\n%s", code, out)
	}
	// Without a name: every option, each with the experiments that take it.
	code, out, _ = dstein(t, "experiment", "--help")
	if code != 0 || !strings.Contains(out, "ising-n, ising-sigma: fields drawn once") || !strings.Contains(out, "--train-limit int") {
		t.Errorf("experiment --help (exit %d) lacks the generated flags:\n%s", code, out)
	}
}

// TestExperimentOptionFlags: an option of another experiment, or a value
// out of range, is a usage error that says what was expected.
func TestExperimentOptionFlags(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gof-level", "--field", "1"}, "--field applies to ising-n, ising-sigma, not to gof-level"},
		{[]string{"suite", "--n", "0"}, `--n 0: want a number > 0`},
		{[]string{"suite", "--estimates", "counts"}, "--estimates"},
		{[]string{"ising-n", "--field", "-0.5"}, `--field -0.5: want a number ≥ 0`},
		{[]string{"ising-n", "--field", "NaN"}, `--field: "NaN" is not a finite number`},
		{[]string{"bnn", "--epochs", "two"}, `--epochs: "two" is not a whole number`},
		{[]string{"rbm-n", "--variants", "bw16"}, "--variants applies to variants-ising, variants-rbm, not to rbm-n"},
	} {
		args := append([]string{"experiment"}, c.args...)
		code, _, errs := dstein(t, append(args, "--tiny", "--out-dir", dir)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}
