package main

import (
	"bytes"
	"context"
	"os"
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
