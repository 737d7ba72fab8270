package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/internal/textvalue"
	"github.com/dstein/dstein/sampler"
)

func newMethodsCmd(e *env) *cobra.Command {
	var pipeline string
	cmd := &cobra.Command{
		Use:   "methods [--pipeline NAME]",
		Short: "List the sampling methods and presets, with their settings",
		Long: `List every sampling method (with its settings: JSON name, command-line flag
and default) and every preset (a named pipeline of methods).

--pipeline NAME prints the pipeline of a preset or method as JSON, every
default filled in: edit it and give it to "dstein sample --pipeline FILE".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if pipeline != "" {
				p, _, err := infer.Pipeline(pipeline)
				if err != nil {
					return usageError{err}
				}
				b, err := json.MarshalIndent(p.Resolved(), "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(e.stdout, string(b))
				return nil
			}
			printMethods(e)
			return nil
		},
	}
	cmd.Flags().StringVar(&pipeline, "pipeline", "", "print the pipeline of this preset or method as JSON")
	return cmd
}

func printMethods(e *env) {
	w := e.stdout
	fmt.Fprintln(w, "Methods (dstein sample --method NAME; pipeline files name them in \"method\"):")
	for _, m := range sampler.Methods() {
		fmt.Fprintf(w, "\n%s: %s\n", m.Name, m.Description)
		iters := m.Count(m.Iters) + " by default"
		if m.OneShot {
			iters = "one step: " + m.Unit
		}
		fmt.Fprintf(w, "  iterations: %s", iters)
		if m.Needs != "" {
			fmt.Fprintf(w, "; needs %s", m.Needs)
		}
		if sampler.HasDevice(m.Name, sampler.CUDA) {
			fmt.Fprint(w, "; also on NVIDIA GPUs (--device cuda)")
		}
		fmt.Fprintln(w)
		set := m.NewSettings()
		rows := settingRows(reflect.ValueOf(set.Resolved()).Elem(), "")
		if len(rows) == 0 {
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  setting\tflag\tdefault\t")
		for _, r := range rows {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t\n", r[0], r[1], r[2])
		}
		tw.Flush()
	}
	fmt.Fprintln(w, "\nPresets (dstein sample --method NAME; dstein methods --pipeline NAME prints one):")
	for _, n := range infer.PresetNames() {
		p, _ := infer.Preset(n)
		cd, chains := infer.PresetChains(n)
		what := infer.Describe(p)
		if chains {
			// Its length comes from the chains' draws, not the stage.
			what = fmt.Sprintf("%s, %d chains, draws after warm-up", p.Stages[len(p.Stages)-1].Method, cd.Chains)
		}
		fmt.Fprintf(w, "\n%s: %s\n  %s\n", n, what, p.Description)
		switch {
		case chains && cd.Compress.On():
			fmt.Fprintf(w, "  runs as %d chains: %d warm-up iterations, then every %d-th state, %d per point, %s to --n points (default %d) (--chains, --warmup, --thin change them; --draws with --points set the draws and points)\n", cd.Chains, cd.Warmup, cd.Thin, cd.PerPoint, cd.Compress.Rule, cd.Samples)
		case chains && cd.Target > 0:
			fmt.Fprintf(w, "  runs as %d chains until every quantity's ESS reaches %g at %d draws (%g at 200) in two windows in a row, the second half of the run kept; --n draws in all (default %d), --n/%d per chain (--chains, --draws, --ess, --max-iters, --max-time change them; --warmup or --thin make it a fixed run)\n", cd.Chains, cd.Target, cd.Samples, cd.TargetFor(200), cd.Samples, cd.Chains)
		case chains:
			fmt.Fprintf(w, "  runs as %d chains: %d warm-up iterations, then every %d-th state; --n draws in all (default %d), --n/%d per chain (--chains, --warmup, --thin, --draws change them)\n", cd.Chains, cd.Warmup, cd.Thin, cd.Samples, cd.Chains)
		}
	}
}

// settingRows lists the JSON name, flag and value of every field of a
// settings struct (nested structs as "outer.inner").
func settingRows(v reflect.Value, prefix string) [][3]string {
	var rows [][3]string
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		fv := v.Field(i)
		if f.Type.Kind() == reflect.Struct && !textvalue.IsText(f.Type) {
			rows = append(rows, settingRows(fv, prefix+name+".")...)
			continue
		}
		flag := "-"
		if fl := f.Tag.Get("flag"); fl != "" {
			name, _, _ := strings.Cut(fl, ",")
			flag = "--" + name
		}
		rows = append(rows, [3]string{prefix + name, flag, formatSetting(fv)})
	}
	return rows
}
