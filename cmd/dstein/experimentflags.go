package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dstein/dstein/experiment"
)

// optionFlag is a flag generated from the experiments' settings (their
// `opt` and `flag` tags): it keeps the text given; the experiment parses it
// (experiment.ParseSettings), so that its errors name the flag and what
// it wants.
type optionFlag struct {
	experiment.OptionFlag
	raw string
}

func (f *optionFlag) String() string     { return f.raw }
func (f *optionFlag) Type() string       { return f.Kind }
func (f *optionFlag) Set(s string) error { f.raw = s; return nil }

// optionFlags are the flags of every experiment's options.
type optionFlags struct {
	fs    *pflag.FlagSet
	flags []*optionFlag
	// err is a clash between experiments' options (one flag, two kinds):
	// every run reports it, and TestExperimentOptions keeps a release
	// free of one.
	err error
}

// registerOptionFlags adds one flag per option flag of the registered
// experiments to fs, its help prefixed with the experiments that take it.
func registerOptionFlags(fs *pflag.FlagSet) *optionFlags {
	all, err := experiment.OptionFlags()
	o := &optionFlags{fs: fs, err: err}
	for _, f := range all {
		of := &optionFlag{OptionFlag: f}
		fl := fs.VarPF(of, f.Name, "", strings.Join(f.Experiments, ", ")+": "+f.Help)
		if f.Kind == "bool" {
			fl.NoOptDefVal = "true"
		}
		o.flags = append(o.flags, of)
	}
	return o
}

// settings returns ex's settings with the option flags given set; a flag
// of another experiment is an error that says which ones take it.
func (o *optionFlags) settings(ex *experiment.Experiment) (any, error) {
	given := map[string]string{}
	for _, f := range o.flags {
		if !o.fs.Changed(f.Name) {
			continue
		}
		mine := false
		for _, n := range f.Experiments {
			mine = mine || n == ex.Name
		}
		if !mine {
			return nil, fmt.Errorf("--%s applies to %s, not to %s", f.Name, strings.Join(f.Experiments, ", "), ex.Name)
		}
		given[f.Name] = f.raw
	}
	return ex.ParseSettings(given)
}

// shownValue shows an experiment's default for one of its option flags in
// its help.
type shownValue struct{ kind, def string }

func (v shownValue) String() string   { return v.def }
func (v shownValue) Set(string) error { return nil }
func (v shownValue) Type() string     { return v.kind }

// experimentHelp is the experiment command's help: with an experiment's
// name ("dstein experiment suite --help") it describes that experiment
// and lists its own options with its defaults, then the flags every
// experiment has; otherwise it is cobra's help (fallback).
func experimentHelp(fallback func(*cobra.Command, []string)) func(*cobra.Command, []string) {
	return func(cmd *cobra.Command, args []string) {
		pos := cmd.Flags().Args()
		if len(pos) != 1 {
			fallback(cmd, args)
			return
		}
		ex, err := experiment.Get(pos[0])
		if err != nil {
			fallback(cmd, args)
			return
		}
		w := cmd.OutOrStdout()
		fmt.Fprintf(w, "%s: %s\n\nUsage:\n  dstein experiment %s --out-dir DIR [flags]\n\n", ex.Name, ex.Title, ex.Name)
		fmt.Fprintf(w, "Trials: %d in a full run, %d with --quick, 2 with --tiny; the table's setting: %s.\n", ex.Trials, ex.QuickTrials, ex.Setting)
		var pubs []string
		for _, p := range experiment.Reproductions() {
			if p.Name == ex.Name {
				pubs = append(pubs, "  "+p.ID+": "+p.Command("docs/results/"+p.ID, experiment.Full))
			}
		}
		if len(pubs) > 0 {
			fmt.Fprintf(w, "\nPublished results (dstein reproduce runs them):\n%s\n", strings.Join(pubs, "\n"))
		}
		own := pflag.NewFlagSet(ex.Name, pflag.ContinueOnError)
		mine := map[string]bool{}
		for _, o := range ex.Options() {
			fl := own.VarPF(shownValue{o.Kind, o.Default}, o.Flag, "", o.Help)
			fl.DefValue = o.Default
			if o.Kind == "bool" {
				fl.NoOptDefVal = "true"
			}
			mine[o.Flag] = true
		}
		selection := map[string]bool{"variants": ex.UsesVariants, "methods": ex.MethodNames != nil, "uai": ex.UsesUAI}
		all, _ := experiment.OptionFlags()
		others := map[string]bool{}
		for _, f := range all {
			others[f.Name] = true
		}
		common := pflag.NewFlagSet("common", pflag.ContinueOnError)
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			switch use, isSel := selection[f.Name]; {
			case isSel && use && f.Name == "methods":
				c := *f
				c.Usage = "run only these methods, comma-separated, and those the comparisons need: any of " + strings.Join(ex.MethodNames(), ", ")
				own.AddFlag(&c)
			case isSel && use:
				own.AddFlag(f)
			case isSel, others[f.Name]:
			default:
				common.AddFlag(f)
			}
		})
		if own.HasFlags() {
			fmt.Fprintf(w, "\nOptions of %s:\n%s", ex.Name, flagUsages(own))
		} else {
			fmt.Fprintf(w, "\n%s has no options of its own.\n", ex.Name)
		}
		fmt.Fprintf(w, "\nFlags of every experiment:\n%s", flagUsages(common))
		if cmd.HasAvailableInheritedFlags() {
			fmt.Fprintf(w, "\nGlobal flags:\n%s", flagUsages(cmd.InheritedFlags()))
		}
	}
}
