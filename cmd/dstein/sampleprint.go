package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/modelfile"
	"github.com/dstein/dstein/report"
)

func printSummary(w io.Writer, f *sampleFlags, name string, lm *modelfile.Loaded, out *infer.Output) {
	m := lm.Model
	if ev := lm.EvidenceText(); ev != "" {
		fmt.Fprintf(w, "model      %s (%d variables; %d free, evidence %s)\n", f.model, lm.File.Dim(), m.Dim(), ev)
	} else {
		fmt.Fprintf(w, "model      %s (%s)\n", f.model, variables(m.Dim()))
	}
	label := name
	if f.pipeline != "" {
		label = "pipeline " + f.pipeline
	}
	in := out.Pipeline.Init
	fmt.Fprintf(w, "method     %s: %s; init N(%g, %g²)\n", label, infer.Describe(out.Pipeline), in.Mean, in.Std)
	fmt.Fprintf(w, "run        %s, %d iterations, seed %d, %.2f s, %d model evaluations\n", runShape(out), out.Iters, out.Key.Seed, out.Seconds, out.Evaluations)
	for k, st := range out.Stages {
		label := st.Method
		if len(out.Stages) > 1 {
			label = fmt.Sprintf("%d %s", k+1, st.Method)
		}
		if b, err := json.Marshal(st.Settings); err == nil && string(b) != "{}" {
			fmt.Fprintf(w, "%-10s settings %s\n", label, b)
		}
		if len(st.Stats.Values) == 0 {
			continue
		}
		var parts []string
		for _, v := range st.Stats.Values {
			parts = append(parts, fmt.Sprintf("%s %.4g", v.Name, v.Value))
		}
		fmt.Fprintf(w, "%-10s %s\n", label, strings.Join(parts, ", "))
	}
	if out.Impossible > 0 {
		fmt.Fprintf(w, "warning    %d samples are in states of probability zero\n", out.Impossible)
	}
	dg := out.Diagnostics
	if dg == nil || dg.Source == infer.SourceNone {
		printMeans(w, m, out.Means, out.Marginals, nil, f.show)
	} else {
		printDiagnostics(w, m, dg, f.show)
	}
	if out.ModeCheck != nil {
		fmt.Fprintf(w, "modes      %s\n", out.ModeCheck.Note)
	}
	if dg != nil {
		fmt.Fprintf(w, "error bars %s\n", dg.Note)
		for _, msg := range dg.Warnings {
			fmt.Fprintf(w, "warning    %s\n", msg)
		}
	}
	if c := out.Compressed; c != nil {
		printCompressed(w, c)
	}
}

// printCompressed says how a run's points were picked from its draws.
func printCompressed(w io.Writer, c *infer.Compressed) {
	fmt.Fprintf(w, "compress   %s, ℓ = %g: %d points from %d draws (%d distinct states) in %.2f s; %d points repeat a state\n",
		c.Rule, c.Ell, c.N, c.Candidates, c.Distinct, c.Seconds, c.Repeats)
	if c.Reweight {
		fmt.Fprintf(w, "weights    Stein importance weights on the draws: KSD² %.4g → %.4g, weight ESS %.0f of %d draws\n",
			c.UnweightedKSD2, c.WeightsKSD2, c.WeightsESS, c.Candidates)
	}
	if c.Reference < c.Candidates {
		fmt.Fprintf(w, "reference  herding matched an evenly spaced sub-sample of %d of the draws\n", c.Reference)
	}
	of := "the draws'"
	if c.Reweight {
		of = "the weighted draws' (weighted_mean in --json)"
	}
	fmt.Fprintf(w, "points     the table is the draws'; the points' means differ from %s by at most %.3g (--out and --json hold the points)\n", of, c.MaxMeanGap)
}

// runShape says how many chains, draws, replicates or particles a run had.
func runShape(out *infer.Output) string {
	l := out.Layout
	switch l.Kind {
	case infer.LayoutChains:
		return fmt.Sprintf("%d chains × %d draws (warm-up %d, thin %d)", l.Groups, l.Length, l.Warmup, l.Thin)
	case infer.LayoutReplicates:
		return fmt.Sprintf("%d replicates × n = %d", l.Groups, l.Length)
	}
	return fmt.Sprintf("n = %d", out.N)
}

// printDiagnostics prints the quantities with their error bars and
// diagnostics: log p*, the model's observables and the first show
// variables.
func printDiagnostics(w io.Writer, m model.Model, dg *infer.Diagnostics, show int) {
	fmt.Fprintf(w, "%-14s %10s %9s %9s %8s %8s %7s  %s\n", "quantity", "mean", "mcse", "sd", "ess_bulk", "ess_tail", "rhat", "90% interval")
	names := make(map[string]bool, m.Dim())
	for i := range m.Dim() {
		names[model.VariableName(m, i)] = true
	}
	vars, hidden := map[string]bool{}, 0
	rows := map[string]int{} // state rows printed of each variable
	// A conditional that is the same in every draw is the variable's
	// exact marginal only if the draws moved: chains stuck in their states
	// give that too. Stuck chains show as an infinite R̂ (each chain
	// constant, the chains different) or as no quantity varying at all
	// (log p* alone may be constant on a uniform target).
	moved, varies := true, false
	for _, q := range dg.Quantities {
		if math.IsInf(float64(q.Rhat), 1) {
			moved = false
		}
		varies = varies || q.SD > 0
	}
	moved = moved && varies
	for _, q := range dg.Quantities {
		v, isVar := variableOf(q.Name, names)
		if isVar {
			if !vars[v] && show > 0 && len(vars) >= show {
				hidden++
				continue
			}
			vars[v] = true
			if rows[v]++; rows[v] > maxStatesShown {
				hidden++
				continue
			}
		}
		rh := fmt.Sprintf("%7.3f", float64(q.Rhat))
		if math.IsInf(float64(q.Rhat), 1) {
			rh = fmt.Sprintf("%7s", "inf")
		}
		rare := ""
		switch {
		case q.Rare:
			rare = "  rare state"
		case q.SD == 0 && q.MCSE == 0 && dg.Estimates == infer.RaoBlackwell.String() && isVar && moved:
			// A variable whose conditional is the same in every draw
			// (independent of the rest): the average is its marginal.
			rare = "  exact (same conditional in every draw)"
		case q.SD == 0 && q.MCSE == 0 && dg.Estimates == infer.RaoBlackwell.String() && isVar:
			rare = "  same conditional in every draw (some chains did not move: not shown to be exact)"
		}
		fmt.Fprintf(w, "%-14s %10.4g %9.2g %9.3g %8.0f %8.0f %s  [%.4g, %.4g]%s\n", q.Name, q.Mean, q.MCSE, q.SD, q.BulkESS, q.TailESS, rh, q.CI90[0], q.CI90[1], rare)
	}
	if hidden > 0 {
		fmt.Fprintf(w, "(showing %d variables, at most %d states each; %d more quantities in --json; --show N for more variables)\n", len(vars), maxStatesShown, hidden)
	}
}

// variableOf returns the variable a quantity belongs to ("z3" for "z3" and
// "z3=0.5", "asia" for "asia=no"), and false for model-level quantities
// (log p*, the observables): names are the model's variables.
func variableOf(name string, names map[string]bool) (string, bool) {
	if names[name] {
		return name, true
	}
	if i := strings.LastIndex(name, "="); i > 0 && names[name[:i]] {
		return name[:i], true
	}
	return "", false
}

// maxStatesShown is the most states of one variable that a printed table
// lists (a Potts variable of 10⁶ states made a line of 15 MB); --json and
// --mar hold them all.
const maxStatesShown = 12

// moreStates returns "  … N more states" for a variable of k states
// beyond maxStatesShown, or "".
func moreStates(k int) string {
	if k <= maxStatesShown {
		return ""
	}
	return fmt.Sprintf("  … %d more states (--json)", k-maxStatesShown)
}

// printMeans prints a table of the first show variables: the estimated mean
// (and the exact one when given) and the estimated marginals.
func printMeans(w io.Writer, m model.Model, mean []float64, marg [][]float64, exactMean []float64, show int) {
	d := len(mean)
	if show <= 0 || show > d {
		show = d
	}
	if exactMean != nil {
		fmt.Fprintf(w, "%-8s %9s %9s  %s\n", "variable", "mean", "exact", "P(state)")
	} else {
		fmt.Fprintf(w, "%-8s %9s  %s\n", "variable", "mean", "P(state)")
	}
	sn, _ := m.(model.StateNamer)
	for i := range show {
		var parts []string
		var names []string
		if sn != nil {
			names = sn.StateNames(i)
		}
		st := m.States(i)
		for s, v := range st[:min(len(st), maxStatesShown)] {
			label := report.FormatValue(v)
			if len(names) == len(m.States(i)) {
				label = names[s]
			}
			parts = append(parts, fmt.Sprintf("%s: %.3f", label, marg[i][s]))
		}
		states := strings.Join(parts, "  ") + moreStates(len(st))
		if exactMean != nil {
			fmt.Fprintf(w, "%-8s %9.4f %9.4f  %s\n", model.VariableName(m, i), mean[i], exactMean[i], states)
		} else {
			fmt.Fprintf(w, "%-8s %9.4f  %s\n", model.VariableName(m, i), mean[i], states)
		}
	}
	if show < d {
		fmt.Fprintf(w, "(showing %d of %d variables; --show N or --json for more)\n", show, d)
	}
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// variables is "1 variable" or "N variables".
func variables(n int) string {
	if n == 1 {
		return "1 variable"
	}
	return fmt.Sprintf("%d variables", n)
}
