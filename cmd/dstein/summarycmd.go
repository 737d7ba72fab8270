package main

import (
	"bufio"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/modelfile"
	"github.com/dstein/dstein/model/observed"
	"github.com/dstein/dstein/report"
	"github.com/dstein/dstein/sampler"
)

type summaryFlags struct {
	model, json, estimates string
	evidence, given        string
	show                   int
	mem                    memoryFlag
}

func newSummaryCmd(e *env) *cobra.Command {
	var f summaryFlags
	cmd := &cobra.Command{
		Use:   "summary DRAWS [--model FILE [--evidence FILE.evid | --given VAR=STATE,…]] [--json FILE]",
		Short: "Diagnose chains of draws made by any tool: R̂, ESS, MCSE, error bars and warnings",
		Long: `Print the table and the warnings that dstein sample prints for its own
chains (split R̂, bulk and tail ESS, MCSE, 90% intervals, stuck chains,
rare states) for draws made by any tool:

  a CSV file  with columns chain and draw (whole numbers) and one column per
              variable, rows in any order (lp__ and CmdStan's sampler
              columns, such as accept_stat__, before the first variable
              are left out); dstein sample --draws --out writes it
  an .npy array  of shape (chain, draw, variable) in C order, of floats,
              integers or booleans; dstein's sidecar FILE.json, when there
              is one, names the variables

Every chain must have as many draws; all of them count (remove the warm-up
first). Without --model each variable's states are the values seen in its
column and the estimates are the draws' frequencies; with --model (a JSON
model file or a UAI network whose variables the columns name: z0, z1, …)
the values must be the model's states, log p* is monitored and the
variables' estimates are Rao–Blackwellised as in dstein sample. Draws made
given evidence (dstein sample --evidence or --given) are summarised given
the same evidence: pass it again, and the table covers the free variables,
as sample's does; a draw whose evidence variables differ from it is refused.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("summary needs one DRAWS file (a CSV with chain and draw columns, or an .npy array of shape (chain, draw, variable))")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := atLeast("show", f.show, 1); err != nil {
				return err
			}
			if f.model == "" && (f.evidence != "" || f.given != "") {
				return usagef("--evidence and --given apply with --model: the evidence is about a model's variables")
			}
			if f.model == "" && cmd.Flags().Changed("estimates") && f.estimates != infer.Frequencies.String() {
				return usagef("--estimates %s needs --model: without a model the estimates are the draws' frequencies", f.estimates)
			}
			return runSummary(e, &f, args[0])
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.model, "model", "", "the model the draws are of (JSON model file, UAI, BIF or XMLBIF network): adds log p* and Rao–Blackwellised estimates")
	fs.StringVar(&f.evidence, "evidence", "", "UAI evidence file (.evid) for a .uai network: the draws were made given it (they hold every variable, the evidence's at its values)")
	fs.StringVar(&f.given, "given", "", "evidence by name for a network (.bif, .xml or .uai), as dstein sample takes it: rain=yes,sprinkler=off")
	fs.StringVar(&f.json, "json", "", "write the summary (the variables, their states, means and marginals, and error_bars as in dstein sample's summary) to this file")
	fs.StringVar(&f.estimates, "estimates", infer.RaoBlackwell.String(), "with --model: rao-blackwell or frequencies (without a model: frequencies)")
	fs.IntVar(&f.show, "show", 10, "number of variables to print (the JSON has all)")
	f.mem.register(fs)
	return cmd
}

// summaryQuantityBytes and summaryJSONBytes are what one quantity of
// dstein summary costs at the peak (its diagnostics, its row, the
// observed model's states; the JSON's encoding in memory), measured
// with /usr/bin/time -v on 8 draws of 50,000 and 200,000 binary
// variables: 1.61 kB and 2.59 kB a variable with the draws, 119 and
// 195 MB at 50,000, rounded up.
const (
	summaryQuantityBytes = 1536
	summaryJSONBytes     = 1280
)

// drawsSummary is what dstein summary --json writes.
type drawsSummary struct {
	Version int    `json:"schema_version"`
	Draws   string `json:"draws"`
	Model   string `json:"model"`
	// Evidence is the state index that the evidence (--evidence, --given)
	// fixed for each observed variable, by name; absent without evidence.
	Evidence  map[string]int     `json:"evidence,omitempty"`
	Chains    int                `json:"chains"`
	Length    int                `json:"draws_per_chain"`
	Variables []string           `json:"variables"`
	States    [][]float64        `json:"states"`
	Mean      []float64          `json:"mean"`
	Marginals [][]float64        `json:"marginals"`
	ErrorBars *infer.Diagnostics `json:"error_bars"`
}

// drawsSummaryVersion is the version of dstein summary's JSON.
const drawsSummaryVersion = 1

func runSummary(e *env, f *summaryFlags, path string) error {
	est, err := infer.ParseEstimates(f.estimates)
	if err != nil {
		return usagef("--estimates: %v", err)
	}
	budget, err := f.mem.budget()
	if err != nil {
		return err
	}
	inputs := []string{path}
	if strings.EqualFold(filepath.Ext(path), ".npy") {
		// The sidecar is read too (names, states, lp__).
		inputs = append(inputs, report.SidecarPath(path))
	}
	if f.model != "" {
		inputs = append(inputs, f.model, f.evidence)
	}
	outs, err := startOutputs(e, inputs, "--json", f.json)
	if err != nil {
		return err
	}
	defer outs.plan.Abort()
	draws, err := cancelable(e, func() (*report.Draws, error) { return report.ReadDraws(e.ctx, path, budget) })
	if err != nil {
		return err
	}
	var m model.Model
	var evidence map[string]int
	s := &sampler.Samples{N: draws.Chains * draws.Length, D: draws.D, Z: make([]int, draws.Chains*draws.Length*draws.D)}
	if f.model != "" {
		lm, err := openModel(e, f.model, f.evidence, modelfile.Options{Budget: budget, Given: f.given})
		if err != nil {
			return err
		}
		m = lm.Model
		if lm.Free != nil {
			// Given evidence: the columns are the file's variables, the
			// quantities the free ones.
			if err := statesOf(lm.File, draws, s, path); err != nil {
				return err
			}
			z, err := lm.FreeStates(s.Z, s.N)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			s = &sampler.Samples{N: s.N, D: m.Dim(), Z: z}
			evidence = lm.EvidenceByName()
		} else if err := statesOf(m, draws, s, path); err != nil {
			return err
		}
	} else {
		om, err := observed.New(draws.Names, s.N, draws.Value)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		// Each value seen is a state: a variable with more distinct
		// values than half its draws (and than 100) is continuous, or
		// too finely valued for its frequencies to say anything.
		for i := range om.Dim() {
			if k := len(om.States(i)); k > max(100, s.N/2) {
				return fmt.Errorf("%s: variable %s takes %d distinct values in %d draws; summary is for discrete variables, whose values it counts as states: round or bin the draws first, or give --model", path, draws.Names[i], k, s.N)
			}
		}
		for r := range s.N {
			for i := range draws.D {
				s.Z[r*s.D+i], _ = om.State(i, draws.Value(i, r))
			}
		}
		m, est = om, infer.Frequencies
	}
	// The quantities' summaries (and their JSON) cost more than the
	// draws when the draws are few and the variables many.
	q := 1.0 // log_p
	for i := range m.Dim() {
		if k := len(m.States(i)); k > 2 {
			q += float64(k)
		} else {
			q++
		}
	}
	need := memlimit.Base + 32*float64(draws.Chains*draws.Length*draws.D) + summaryQuantityBytes*q
	if f.json != "" {
		need += summaryJSONBytes * q
	}
	if err := budget.Check(fmt.Sprintf("the summary of %.0f quantities of %d draws", q, draws.Chains*draws.Length), need); err != nil {
		return err
	}
	out, err := cancelable(e, func() (*infer.Output, error) { return infer.SummarizeDraws(e.ctx, m, s, draws.Chains, est) })
	if err != nil {
		return err
	}
	w := outs.say
	src := "no model: states are the values seen"
	if f.model != "" {
		src = "model " + f.model
		if len(evidence) > 0 {
			src += fmt.Sprintf("; %d free, %d given by the evidence", m.Dim(), len(evidence))
		}
	}
	fmt.Fprintf(w, "draws      %s: %d chains × %d draws of %d variables (%s)\n", path, draws.Chains, draws.Length, draws.D, src)
	dg := out.Diagnostics
	fmt.Fprintf(w, "error bars %s\n", dg.Note)
	if len(dg.Quantities) > 0 {
		printDiagnostics(w, m, dg, f.show)
	} else {
		// Too few draws for error bars: the means still, as sample prints
		// them for its own run.
		printMeans(w, m, out.Means, out.Marginals, nil, f.show)
	}
	for _, warn := range dg.Warnings {
		fmt.Fprintf(w, "warning    %s\n", warn)
	}
	if len(dg.Warnings) == 0 && dg.Source == infer.SourceChains {
		fmt.Fprintf(w, "warnings   none: every quantity passes R̂ and ESS\n")
	}
	if err := outs.write("--json", func(bw *bufio.Writer) error {
		js := drawsSummary{Version: drawsSummaryVersion, Draws: path, Model: f.model, Evidence: evidence, Chains: draws.Chains, Length: draws.Length,
			Variables: make([]string, m.Dim()), States: make([][]float64, m.Dim()), Mean: out.Means, Marginals: out.Marginals, ErrorBars: dg}
		for i := range m.Dim() {
			js.Variables[i], js.States[i] = model.VariableName(m, i), m.States(i)
		}
		return report.WriteJSON(bw, js)
	}); err != nil {
		return err
	}
	return outs.commit(e)
}

// statesOf maps the draws' columns onto m's variables by name and their
// values onto m's states.
func statesOf(m model.Model, d *report.Draws, s *sampler.Samples, path string) error {
	col := map[string]int{}
	for k, n := range d.Names {
		col[n] = k
	}
	var missing []string
	cols := make([]int, m.Dim())
	positional := report.PositionalHeader(d.Names, m) // z0, z1, … for a network's named variables
	for i := range m.Dim() {
		k, ok := col[model.VariableName(m, i)]
		if positional {
			k, ok = i, true
		}
		if !ok {
			missing = append(missing, model.VariableName(m, i))
		}
		cols[i] = k
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: no column for the model's variable %s (the draws have %s)", path, strings.Join(firstOf(missing, 3), ", "), strings.Join(firstOf(d.Names, 6), ", "))
	}
	if d.D != m.Dim() {
		return fmt.Errorf("%s: %d variable columns; the model has %d variables", path, d.D, m.Dim())
	}
	for r := range s.N {
		for i := range m.Dim() {
			v := d.Value(cols[i], r)
			k := -1
			for j, st := range m.States(i) {
				if st == v {
					k = j
					break
				}
			}
			if k < 0 {
				return fmt.Errorf("%s: chain %d, draw %d: %s = %v is not one of its states %v", path, r/d.Length+1, r%d.Length+1, model.VariableName(m, i), v, m.States(i))
			}
			s.Z[r*s.D+i] = k
		}
	}
	return nil
}

// firstOf returns at most k items, with "…" when there were more.
func firstOf(items []string, k int) []string {
	if len(items) <= k {
		return items
	}
	return append(append([]string(nil), items[:k]...), "…")
}
