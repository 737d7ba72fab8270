package main

import (
	"strings"
	"testing"

	"github.com/dstein/dstein/sampler"
)

// Every registered method's settings become flags: one type per flag
// name, every type one the command line reads. A method added with a
// clashing flag fails here, not when users start dstein.
func TestSettingFlagsOfTheRegistry(t *testing.T) {
	sf := newSettingFlags(sampler.Methods())
	if sf.err != nil {
		t.Fatal(sf.err)
	}
	for _, m := range sampler.Methods() {
		if _, ok := sf.paths[m.Name]; !ok {
			t.Errorf("method %s has no entry in the setting flags", m.Name)
		}
	}
}

type clashA struct {
	Steps int `flag:"steps" help:"a count"`
}

func (*clashA) Validate() error              { return nil }
func (s *clashA) Resolved() sampler.Settings { c := *s; return &c }

type clashB struct {
	Steps float64 `flag:"steps" help:"a length"`
	Fine  float64 `flag:"fine" help:"unrelated"`
}

func (*clashB) Validate() error              { return nil }
func (s *clashB) Resolved() sampler.Settings { c := *s; return &c }

type unreadable struct {
	List []int `flag:"list" help:"a list"`
}

func (*unreadable) Validate() error              { return nil }
func (s *unreadable) Resolved() sampler.Settings { c := *s; return &c }

func TestSettingFlagsReportClashes(t *testing.T) {
	a := &sampler.Method{Name: "a", NewSettings: func() sampler.Settings { return new(clashA) }}
	b := &sampler.Method{Name: "b", NewSettings: func() sampler.Settings { return new(clashB) }}
	sf := newSettingFlags([]*sampler.Method{a, b})
	if sf.err == nil || !strings.Contains(sf.err.Error(), "--steps") || !strings.Contains(sf.err.Error(), "method b") {
		t.Fatalf("clash between int and float64 --steps: error %v; want one naming the flag and method b", sf.err)
	}
	if _, ok := sf.paths["b"]["fine"]; !ok {
		t.Error("method b's other flag was dropped with the clashing one")
	}
	if _, ok := sf.paths["b"]["steps"]; ok {
		t.Error("method b keeps the clashing flag")
	}
	u := &sampler.Method{Name: "u", NewSettings: func() sampler.Settings { return new(unreadable) }}
	if sf := newSettingFlags([]*sampler.Method{u}); sf.err == nil || !strings.Contains(sf.err.Error(), "--list") {
		t.Fatalf("a []int setting: error %v; want one naming --list", sf.err)
	}
}

// A setting flag given as 0 where the method's defaults would replace the
// 0 is refused with the default it would have meant (as in a pipeline
// file); a 0 that the method keeps (--adapt 0: no adaptation) and other
// values are taken. A setting flag that the other settings make useless
// is refused too (it was recorded in the summary and had no effect):
// GF-SVGD's --temperature with --surrogate base, in either order; alone,
// each is taken.
func TestSettingFlagZeroThatMeansTheDefault(t *testing.T) {
	grid := "../../examples/ising-grid.json"
	for _, c := range []struct {
		args []string
		want string // "" for accepted
	}{
		{[]string{"--method", "pt", "--tune", "0"}, "--tune 0 would silently mean the default (50); leave the flag out for the default"},
		{[]string{"--method", "pt", "--tune", "0", "--auto-ladder"}, "--tune 0 would silently mean the default (200)"},
		{[]string{"--method", "pt", "--ladder", "0"}, "--ladder must be > 0"},
		{[]string{"--method", "pt", "--tune", "-1"}, ""},
		{[]string{"--method", "dmala", "--adapt", "0"}, ""},
		{[]string{"--method", "gfsvgd", "--surrogate", "base", "--temperature", "5"}, "--temperature has no effect here"},
		{[]string{"--method", "gfsvgd", "--temperature", "0.5", "--surrogate", "base"}, "--temperature has no effect here"},
		{[]string{"--method", "gfsvgd", "--temperature", "0.5"}, ""},
		{[]string{"--method", "gfsvgd", "--surrogate", "base"}, ""},
	} {
		args := append([]string{"sample", "--model", grid, "--n", "2", "--iters", "3", "--seed", "1"}, c.args...)
		code, _, errs := dstein(t, args...)
		switch {
		case c.want == "" && code != 0:
			t.Errorf("%v: exit %d: %s", c.args, code, errs)
		case c.want != "" && (code != 2 || !strings.Contains(errs, c.want)):
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", c.args, code, errs, c.want)
		}
	}
}
