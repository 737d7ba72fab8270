package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The README's table "Every flag" lists every flag of every command, with
// the commands it belongs to; a flag added to a command without a row (or
// a row naming a flag that does not exist) fails this test.
func TestReadmeListsEveryFlag(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "## Every flag")
	if !ok {
		t.Fatal("README has no section \"Every flag\"")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	flagRe := regexp.MustCompile("`--([a-z0-9-]+)`")
	documented := map[string]map[string]bool{} // flag → commands
	for _, line := range strings.Split(table, "\n") {
		cols := strings.Split(line, "|")
		if len(cols) < 4 || !strings.Contains(cols[1], "`--") {
			continue
		}
		cmds := map[string]bool{}
		for _, c := range strings.Split(cols[2], ",") {
			cmds[strings.TrimSpace(c)] = true
		}
		for _, m := range flagRe.FindAllStringSubmatch(cols[1], -1) {
			if documented[m[1]] == nil {
				documented[m[1]] = map[string]bool{}
			}
			for c := range cmds {
				documented[m[1]][c] = true
			}
		}
	}
	var out bytes.Buffer
	root := newRoot(&env{ctx: context.Background(), stdout: &out, stderr: &out})
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c == root || c.HasSubCommands() {
			return
		}
		name := strings.TrimPrefix(c.CommandPath(), "dstein ")
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" {
				return
			}
			seen[f.Name] = true
			if !documented[f.Name][name] {
				t.Errorf("README's flag table lacks --%s of dstein %s", f.Name, name)
			}
		})
	}
	walk(root)
	for f := range documented {
		if !seen[f] {
			t.Errorf("README's flag table lists --%s, which no command has", f)
		}
	}
}

// readmeCommands returns the dstein command lines of the README's shell
// blocks ("dstein …" lines, comments and continuation lines joined).
func readmeCommands(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	inSh := false
	var cur string
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			inSh = true
			continue
		case strings.HasPrefix(line, "```"):
			inSh = false
			continue
		}
		if !inSh {
			continue
		}
		if c, _, ok := strings.Cut(line, " #"); ok {
			line = c
		}
		line = strings.TrimSpace(line)
		if cur != "" {
			cur += " " + strings.TrimSuffix(line, "\\")
		} else if strings.HasPrefix(line, "dstein ") {
			cur = strings.TrimSuffix(line, "\\")
		}
		if cur != "" && !strings.HasSuffix(line, "\\") {
			cmds = append(cmds, strings.Join(strings.Fields(cur), " "))
			cur = ""
		}
	}
	return cmds
}

// Every README command that reads a UAI network, evidence or MAR file names
// one that examples/ ships, and the commands of "Graphical models from UAI
// files" run as written (outputs in a temporary folder): dstein exact
// reproduces the shipped reference marginals, and Gibbs sampling comes
// close to them.
func TestReadmeUAICommands(t *testing.T) {
	uaiFile := regexp.MustCompile(`^\S+\.(uai|evid|MAR)$`)
	var uai []string
	for _, c := range readmeCommands(t) {
		if !strings.Contains(c, ".uai") {
			continue
		}
		uai = append(uai, c)
		for _, arg := range strings.Fields(c) {
			if strings.Contains(arg, ".uai") && uaiFile.MatchString(arg) {
				if _, err := os.Stat("../../" + arg); err != nil {
					t.Errorf("README command %q reads %s, which the repository does not ship", c, arg)
				}
			}
		}
	}
	if len(uai) < 3 {
		t.Fatalf("README has %d commands with UAI files: %q", len(uai), uai)
	}
	dir := t.TempDir()
	var ran int
	for _, c := range uai {
		args := strings.Fields(c)[1:]
		for k, a := range args {
			switch {
			case strings.HasPrefix(a, "examples/"):
				args[k] = "../../" + a
			case !strings.HasPrefix(a, "-") && strings.Contains(a, ".") && strings.Trim(a, "0123456789.") != "":
				args[k] = filepath.Join(dir, a) // an output, or an output of an earlier command
			}
		}
		if code, _, errs := dstein(t, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", c, code, errs)
		}
		ran++
	}
	maxErr := func(a, b string) float64 {
		t.Helper()
		code, out, errs := dstein(t, "compare-mar", "--json", "-", a, b)
		if code != 0 {
			t.Fatalf("compare-mar %s %s: exit %d: %s", a, b, code, errs)
		}
		var cmp struct {
			Max float64 `json:"max_abs_error"`
		}
		if err := json.Unmarshal([]byte(out), &cmp); err != nil {
			t.Fatalf("compare-mar --json: %v: %s", err, out)
		}
		return cmp.Max
	}
	exact, gibbs := filepath.Join(dir, "exact.MAR"), filepath.Join(dir, "gibbs.MAR")
	if e := maxErr(exact, "../../examples/sprinkler.uai.MAR"); e > 1e-10 {
		t.Errorf("dstein exact differs from examples/sprinkler.uai.MAR by %g", e)
	}
	// 1000 chains: a marginal's standard error is at most 0.016.
	if e := maxErr(gibbs, exact); e > 0.08 {
		t.Errorf("Gibbs marginals differ from the exact ones by %g", e)
	}
	t.Logf("ran %d README commands", ran)
}
