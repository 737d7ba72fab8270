package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/memlimit"
	mdl "github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/model/modelfile"
	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/model/uai"
	"github.com/dstein/dstein/report"
	"github.com/dstein/dstein/sampler"
)

// exactSummary is what dstein exact --json writes.
type exactSummary struct {
	Model     string  `json:"model"`
	Evidence  string  `json:"evidence,omitempty"`
	Given     string  `json:"given,omitempty"`
	Variables int     `json:"variables"`
	Free      int     `json:"free_variables"`
	Method    string  `json:"method"`
	Width     int     `json:"elimination_width,omitempty"`
	LogZ      float64 `json:"log_z"`
	Log10Z    float64 `json:"log10_z"`
	Seconds   float64 `json:"seconds"`
	// Names names every variable of the file, in the order of the
	// marginals (z0, z1, … or a BIF network's names).
	Names     []string    `json:"names"`
	Marginals [][]float64 `json:"marginals"`
	Means     []float64   `json:"means"`
	// States names each variable's states, in the order of its
	// marginal, for models whose states have names (Potts models with
	// "states"); absent otherwise.
	States [][]string `json:"state_names,omitempty"`
}

func newExactCmd(e *env) *cobra.Command {
	var model, evidence, given, mar, jsonOut string
	var maxWidth int
	var mem memoryFlag
	cmd := &cobra.Command{
		Use:   "exact --model FILE [--evidence FILE.evid] [--mar OUT.MAR] [--json OUT.json]",
		Short: "Exact log Z and marginals (enumeration, Ising transfer, RBM hidden enumeration, variable elimination)",
		Long: `Compute the exact log normaliser and every marginal of a model: a JSON model
file or a UAI network (.uai), the latter optionally given evidence. With
evidence, log Z is the log of the unnormalised probability of the evidence
(for a Bayesian network, the probability of the evidence itself). --mar writes
the marginals of every variable of the file in the MAR format (evidence
variables as point masses); --json writes log Z in natural log and log10 (as
the competitions' PR files give it), the marginals and the means.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if model == "" {
				return usagef("--model is required: a JSON model file or a UAI network (.uai)")
			}
			if err := atLeast("max-width", maxWidth, 1); err != nil {
				return err
			}
			budget, err := mem.budget()
			if err != nil {
				return err
			}
			out, err := startOutputs(e, []string{model, evidence}, "--mar", mar, "--json", jsonOut)
			if err != nil {
				return err
			}
			defer out.plan.Abort()
			say := out.say
			// The means, the marginals with evidence and --json's text
			// grow with the variables: counted with the model before it
			// is read, and with the exact route.
			outputs := func(m mdl.Model) float64 { return exactOutputBytes(m, evidence != "" || given != "", jsonOut != "") }
			lm, err := openModel(e, model, evidence, modelfile.Options{Budget: budget, What: "exact inference", Given: given,
				Extra: func(s modelfile.Shape) float64 {
					need := outputs(s.Model)
					if modelfile.IsNetwork(model) {
						// Variable elimination's structures, at least.
						states := sampler.States(s.Model)
						need += exact.VEMemory(s.Model.Dim(), states, s.Factors, s.ScopeEntries, 0, float64(states))
					}
					return need
				}})
			if err != nil {
				return err
			}
			start := time.Now()
			var truth exact.Truth
			method, width := "", 0
			held := lm.Memory.Held + outputs(lm.File)
			g, isGraph := lm.Model.(*factorgraph.Graph)
			if pm, ok := lm.Model.(*potts.Potts); ok {
				// A Potts model is answered on its factor graph, whose
				// tables (q entries per variable, q² per edge) are held
				// beside the model.
				if g, err = pm.FactorGraph(); err != nil {
					return err
				}
				isGraph = true
				held += float64(g.Bytes())
			}
			if isGraph {
				ve, err := exact.ForFactorGraphHolding(e.ctx, g, maxWidth, budget, held)
				if err != nil {
					return err
				}
				need := memlimit.Base + lm.Memory.Need(outputs(lm.File)+ve.Memory())
				defer fmt.Fprintf(say, "memory     about %s estimated (limit %s, --max-memory)\n", memlimit.Format(int64(budget.Total(need))), memlimit.Format(budget.Limit))
				truth, method, width = ve, "variable elimination (min-fill order)", ve.Width()
			} else {
				need := memlimit.Base + lm.Memory.Need(outputs(lm.File)+exact.Memory(lm.Model)-memlimit.Base)
				if err := budget.Check("exact inference on this model", need); err != nil {
					return err
				}
				defer fmt.Fprintf(say, "memory     about %s estimated (limit %s, --max-memory)\n", memlimit.Format(int64(budget.Total(need))), memlimit.Format(budget.Limit))
				if truth, err = exact.ForContextWidth(e.ctx, lm.Model, maxWidth); err != nil {
					return err
				}
				method = exactRoute(truth)
				if ve, ok := truth.(*exact.VE); ok {
					width = ve.Width() // an Ising model by its bonds
				}
			}
			res := truth.Result()
			sum := exactSummary{Model: model, Evidence: evidence, Given: given, Variables: lm.File.Dim(), Free: lm.Model.Dim(),
				Method: method, Width: width, LogZ: res.LogZ, Log10Z: res.LogZ / math.Ln10,
				Seconds: time.Since(start).Seconds(), Marginals: lm.ExpandMarginals(res.Marginals)}
			sum.Means = make([]float64, len(sum.Marginals))
			sum.Names = make([]string, len(sum.Marginals))
			for i, p := range sum.Marginals {
				sum.Names[i] = mdl.VariableName(lm.File, i)
				for s, v := range lm.File.States(i) {
					sum.Means[i] += p[s] * v
				}
			}
			if sn, ok := lm.File.(mdl.StateNamer); ok && sn.StateNames(0) != nil {
				sum.States = make([][]string, lm.File.Dim())
				for i := range sum.States {
					sum.States[i] = sn.StateNames(i)
				}
			}
			printExact(say, &sum)
			if err := out.write("--mar", func(w *bufio.Writer) error { return uai.WriteMAR(w, sum.Marginals) }); err != nil {
				return err
			}
			if err := out.write("--json", func(w *bufio.Writer) error { return report.WriteJSON(w, &sum) }); err != nil {
				return err
			}
			return out.commit(e)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&model, "model", "", "JSON model file, UAI network (.uai) or Bayesian network (.bif, or XMLBIF .xml) (required)")
	fs.StringVar(&evidence, "evidence", "", "UAI evidence file for a .uai network")
	fs.StringVar(&given, "given", "", "evidence by name for a network (.bif, .xml or .uai): rain=yes,sprinkler=off")
	fs.StringVar(&mar, "mar", "", "write every variable's marginal in the MAR format")
	fs.StringVar(&jsonOut, "json", "", "write log Z, the marginals and the means as JSON")
	fs.IntVar(&maxWidth, "max-width", exact.DefaultMaxWidth, "largest elimination width (variables in one intermediate table) to accept")
	mem.register(fs)
	return cmd
}

// exactOutputBytes estimates what dstein exact holds besides the model and
// its exact route, for a model m of the file: the means (8 bytes a
// variable); with evidence, the marginals expanded to every variable (24);
// with --json, the encoder's buffers (jsonMarginalsBytes).
func exactOutputBytes(m mdl.Model, evidence, json bool) float64 {
	d := float64(m.Dim())
	need := 8 * d
	if evidence {
		need += 24 * d
	}
	if json {
		need += jsonMarginalsBytes(m)
	}
	return need
}

// jsonMarginalsBytes estimates what writing every variable's marginal and
// mean as indented JSON (report.WriteJSON) holds: the text is about 26
// bytes a state and 40 a variable (a number, its indentation and comma on a
// line, brackets), and the encoder holds it twice, compact and indented, in
// buffers that grow by doubling: 2.1–2.4 times the text measured (300,000
// binary variables: 47 MB live for 23 MB written); 2.75 times here.
func jsonMarginalsBytes(m mdl.Model) float64 {
	return 2.75 * (26*float64(sampler.States(m)) + 40*float64(m.Dim()))
}

func printExact(w io.Writer, s *exactSummary) {
	fmt.Fprintf(w, "exact: %s, %s (%d free)\n", s.Method, variables(s.Variables), s.Free)
	if s.Width > 0 {
		fmt.Fprintf(w, "elimination width %d\n", s.Width)
	}
	fmt.Fprintf(w, "log Z   %.10g (log10 Z %.10g)\n", s.LogZ, s.Log10Z)
	show := min(len(s.Marginals), 10)
	for i := range show {
		if s.States != nil && len(s.States[i]) == len(s.Marginals[i]) {
			fmt.Fprintf(w, "%-6s %s\n", s.Names[i], formatNamedProbs(s.States[i], s.Marginals[i]))
			continue
		}
		fmt.Fprintf(w, "%-6s P = %s\n", s.Names[i], formatProbs(s.Marginals[i]))
	}
	if show < len(s.Marginals) {
		fmt.Fprintf(w, "(showing %d of %d variables; --mar or --json for all)\n", show, len(s.Marginals))
	}
	fmt.Fprintf(w, "%.3g s\n", s.Seconds)
}

// formatNamedProbs writes "P(red) = 0.5 P(blue) = 0.5".
func formatNamedProbs(names []string, p []float64) string {
	parts := make([]string, len(p))
	for k, v := range p {
		parts[k] = fmt.Sprintf("P(%s) = %.6f", names[k], v)
	}
	return strings.Join(parts, "  ")
}

func formatProbs(p []float64) string {
	var b strings.Builder
	for k, v := range p[:min(len(p), maxStatesShown)] {
		if k > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.6f", v)
	}
	b.WriteString(moreStates(len(p)))
	return b.String()
}

func joinComma(s []string) string {
	out := ""
	for k, v := range s {
		if k > 0 {
			out += ", "
		}
		out += v
	}
	return out
}

// marComparison is what dstein compare-mar --json writes.
type marComparison struct {
	A, B           string  `json:"-"`
	Variables      int     `json:"variables"`
	MeanAbsError   float64 `json:"mean_abs_error"`
	MaxAbsError    float64 `json:"max_abs_error"`
	MaxErrVariable int     `json:"max_error_variable"`
	MeanHellinger  float64 `json:"mean_hellinger"`
	FileA          string  `json:"a"`
	FileB          string  `json:"b"`
}

func newCompareMARCmd(e *env) *cobra.Command {
	var jsonOut string
	var mem memoryFlag
	var normalize bool
	cmd := &cobra.Command{
		Use:   "compare-mar A.MAR B.MAR [--json OUT.json]",
		Short: "Compare two MAR files: mean and maximum absolute marginal error, mean Hellinger distance",
		Long: `Compare the marginals of two MAR files variable by variable. The mean
absolute error averages |P_A(z_i = s) − P_B(z_i = s)| over every variable and
state; the maximum is over the same entries; the Hellinger distance of a
variable is sqrt(½ Σ_s (sqrt(P_A) − sqrt(P_B))²), which is sqrt(1 − Σ_s
sqrt(P_A P_B)) computed without cancellation (0 for equal marginals, 1 for
disjoint ones), averaged over variables. Each variable's marginal must sum
to 1 (within 1e-6 per state); --normalize rescales rows that do not.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("compare-mar needs two MAR files, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			budget, err := mem.budget()
			if err != nil {
				return err
			}
			out, err := startOutputs(e, args, "--json", jsonOut)
			if err != nil {
				return err
			}
			defer out.plan.Abort()
			// The reader holds every number of a file as a token before it
			// parses the marginals: about 32 bytes per byte of a file of
			// one-digit numbers (measured with /usr/bin/time -v), 40 here.
			var size int64
			for _, path := range args {
				if info, err := os.Stat(path); err == nil && info.Mode().IsRegular() {
					size += info.Size()
				}
			}
			if err := budget.Check("reading "+args[0]+" and "+args[1], memlimit.Base+marBytesPerByte*float64(size)); err != nil {
				return err
			}
			say := out.say
			var marg [2][][]float64
			for k, path := range args {
				m, err := uai.ReadMARFile(path)
				if err != nil {
					return err
				}
				if err := checkNormalized(path, m, normalize); err != nil {
					return err
				}
				marg[k] = m
			}
			c, err := compareMAR(marg[0], marg[1])
			if err != nil {
				return fmt.Errorf("%s and %s: %w", args[0], args[1], err)
			}
			c.FileA, c.FileB = args[0], args[1]
			fmt.Fprintf(say, "%d variables: mean absolute error %.3g, max %.3g (variable %d), mean Hellinger %.3g\n",
				c.Variables, c.MeanAbsError, c.MaxAbsError, c.MaxErrVariable, c.MeanHellinger)
			if err := out.write("--json", func(w *bufio.Writer) error { return report.WriteJSON(w, c) }); err != nil {
				return err
			}
			return out.commit(e)
		},
	}
	cmd.Flags().StringVar(&jsonOut, "json", "", "write the comparison as JSON")
	cmd.Flags().BoolVar(&normalize, "normalize", false, "rescale each variable's marginal to sum to 1 instead of refusing rows that do not")
	mem.register(cmd.Flags())
	return cmd
}

// marBytesPerByte is the memory that reading a MAR file takes per byte of
// the file (see compare-mar).
const marBytesPerByte = 40

// checkNormalized refuses (or, with fix, rescales) marginals that do not
// sum to 1 or hold negative or non-finite entries.
func checkNormalized(path string, m [][]float64, fix bool) error {
	for i, row := range m {
		var s float64
		for st, v := range row {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: variable %d, state %d has probability %v; want a number in [0, 1]", path, i, st, v)
			}
			s += v
		}
		if math.Abs(s-1) <= 1e-6*float64(len(row)) {
			continue
		}
		if !fix {
			return fmt.Errorf("%s: the marginal of variable %d sums to %.6g, not 1 (--normalize rescales it)", path, i, s)
		}
		if !(s > 0) {
			return fmt.Errorf("%s: the marginal of variable %d sums to %.6g: no rescaling makes it a distribution", path, i, s)
		}
		if math.IsInf(s, 1) {
			// Finite entries whose sum overflows (1e308 twice): scaled by
			// the largest first, whose share is then at least 1/len(row).
			mx := slices.Max(row)
			s = 0
			for st := range row {
				row[st] /= mx
				s += row[st]
			}
		}
		for st := range row {
			row[st] /= s
		}
	}
	return nil
}

func compareMAR(a, b [][]float64) (*marComparison, error) {
	if len(a) != len(b) {
		return nil, fmt.Errorf("%d variables against %d", len(a), len(b))
	}
	c := &marComparison{Variables: len(a)}
	entries := 0
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return nil, fmt.Errorf("variable %d has %d states against %d", i, len(a[i]), len(b[i]))
		}
		var h2 float64
		for s := range a[i] {
			d := math.Abs(a[i][s] - b[i][s])
			c.MeanAbsError += d
			entries++
			if d > c.MaxAbsError {
				c.MaxAbsError, c.MaxErrVariable = d, i
			}
			// ½(√p − √q)², whose sum is 1 − Σ√(pq) for marginals that sum
			// to 1, without its cancellation: two equal files read 2.2e-9,
			// and marginals 5e-7 apart 1.5e-4.
			r := math.Sqrt(a[i][s]) - math.Sqrt(b[i][s])
			h2 += r * r / 2
		}
		c.MeanHellinger += math.Sqrt(h2)
	}
	if entries > 0 {
		c.MeanAbsError /= float64(entries)
	}
	if len(a) > 0 {
		c.MeanHellinger /= float64(len(a))
	}
	return c, nil
}

// exactRoute names the route For took, in words.
func exactRoute(t exact.Truth) string {
	switch t.(type) {
	case *exact.IsingGrid:
		return "transfer matrix over the Ising grid's columns"
	case *exact.IsingTorus:
		return "transfers over the Ising torus"
	case *exact.RBMTruth:
		return "enumeration of the RBM's hidden units"
	case *exact.VE:
		return "variable elimination (min-fill order)"
	case *exact.Enumerated:
		return "enumeration of every joint state"
	}
	return fmt.Sprintf("%T", t)
}
