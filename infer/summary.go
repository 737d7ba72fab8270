package infer

import (
	"bufio"
	"math"
	"strconv"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
)

// SummaryVersion is the version of the summary's schema
// (docs/summary-schema.md); it changes when a key is added, changes meaning
// or goes away.
const SummaryVersion = 9

// Summary is the JSON summary of a run. Every key is always present, with
// zeros kept; docs/summary-schema.md lists every key, its type and when it
// is null.
type Summary struct {
	Version int `json:"schema_version"`
	// Method is the --method name (a method or a preset), or "pipeline"
	// for a pipeline file.
	Method  string  `json:"method"`
	Model   string  `json:"model"`
	N       int     `json:"n"`
	Dim     int     `json:"dim"`
	Iters   int     `json:"iters"`
	Seed    uint64  `json:"seed"`
	Status  string  `json:"status"`
	Seconds float64 `json:"seconds"`
	// Pipeline is what ran, every default filled in; it can be given back
	// to --pipeline.
	Pipeline SummaryPipeline `json:"pipeline"`
	Stages   []StageSummary  `json:"stages"`
	// States lists each variable's state values; Mean is E[z_i] per
	// variable; Marginals the probability of each state in that order.
	// Variables names them: the model file's numbering ("z4" is the
	// file's variable 4, also when evidence fixed others) or the model's
	// own names.
	Variables []string    `json:"variables"`
	States    [][]float64 `json:"states"`
	Mean      []float64   `json:"mean"`
	Marginals [][]float64 `json:"marginals"`
	// Evidence is the state index that the evidence fixed for each
	// observed variable, by name (empty without evidence); those
	// variables are not among Variables.
	Evidence map[string]int `json:"evidence"`
	// Evaluations counts model evaluations over all stages.
	Evaluations int64 `json:"model_evaluations"`
	// Impossible counts final samples in states of probability zero.
	Impossible int `json:"impossible"`
	// Samples counts the samples the means are over: n, chains × draws,
	// or replicates × n.
	Samples int `json:"samples"`
	// Keep are the draws kept of each chain (zeros: final states only);
	// Replicates the number of independent runs.
	Keep       Keep `json:"keep"`
	Replicates int  `json:"replicates"`
	// ErrorBars are the quantities with their Monte Carlo standard errors
	// and convergence diagnostics, and the warnings.
	ErrorBars *Diagnostics `json:"error_bars"`
	// Compressed says how the samples were picked from the draws when the
	// run compressed them (null otherwise): mean, marginals and samples
	// are then the points', error_bars and keep the draws'.
	Compressed *Compressed `json:"compressed"`
}

// SummaryPipeline is a pipeline as the summary writes it: the keys of
// sampler.Pipeline, name and description always present ("" when empty),
// so that it reads back as a pipeline file. (sampler.Pipeline itself omits
// them when empty: experiment journals record pipelines in that form.)
type SummaryPipeline struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Init        sampler.Init    `json:"init"`
	Stages      []sampler.Stage `json:"stages"`
}

// StageSummary describes one stage of a run.
type StageSummary struct {
	Method string `json:"method"`
	// Settings are the stage's resolved settings, every default filled in
	// (an empty object for a method without settings).
	Settings    sampler.Settings `json:"settings"`
	Iters       int              `json:"iters"`
	Planned     int              `json:"planned_iters"`
	Seconds     float64          `json:"seconds"`
	Evaluations int64            `json:"model_evaluations"`
	// Statistics are the method's own statistics at the end of the stage
	// (each method documents its names; every name is always present).
	Statistics map[string]float64 `json:"statistics"`
}

// NewSummary builds the summary of a run of the named method or preset.
func NewSummary(method, modelName string, m model.Model, out *Output) *Summary {
	st := make([][]float64, m.Dim())
	names := make([]string, m.Dim())
	for i := range st {
		st[i] = m.States(i)
		names[i] = model.VariableName(m, i)
	}
	s := &Summary{Version: SummaryVersion, Method: method, Model: modelName, N: out.N, Dim: out.Dim, Iters: out.Iters, Seed: out.Key.Seed,
		Status: out.Status.String(), Seconds: round(out.Seconds, 4), Stages: []StageSummary{},
		Pipeline:  SummaryPipeline{Name: out.Pipeline.Name, Description: out.Pipeline.Description, Init: out.Pipeline.Init, Stages: out.Pipeline.Stages},
		Variables: names, Evidence: map[string]int{}, States: st, Mean: out.Means, Marginals: out.Marginals, Evaluations: out.Evaluations, Impossible: out.Impossible,
		Samples: out.Samples.N, Replicates: 1, ErrorBars: out.Diagnostics, Compressed: out.Compressed}
	switch out.Layout.Kind {
	case LayoutChains:
		s.Keep = Keep{Warmup: out.Layout.Warmup, Draws: out.Layout.Length, Thin: out.Layout.Thin, Target: out.Layout.Target, Stopped: out.Layout.Stopped}
	case LayoutReplicates:
		s.Replicates = out.Layout.Groups
	}
	for _, r := range out.Stages {
		set := r.Settings
		if set == nil {
			if m, err := sampler.Lookup(r.Method); err == nil {
				set = m.NewSettings().Resolved()
			}
		}
		ss := StageSummary{Method: r.Method, Settings: set, Iters: r.Iters, Planned: r.Planned, Seconds: round(r.Seconds, 4), Evaluations: r.Stats.Evaluations, Statistics: map[string]float64{}}
		for _, v := range r.Stats.Values {
			ss.Statistics[v.Name] = finite(v.Value)
		}
		s.Stages = append(s.Stages, ss)
	}
	return s
}

// finite maps NaN and ±Inf to 0 so that the summary stays valid JSON; no
// method reports them.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// WriteTrace writes the trace as a tidy CSV: stage (1-based), method,
// iter, statistic, value; model_evaluations is one of the statistics.
func WriteTrace(w *bufio.Writer, trace []TracePoint) error {
	w.WriteString("stage,method,iter,statistic,value\n")
	row := func(p TracePoint, name string, v float64) {
		w.WriteString(strconv.Itoa(p.Stage + 1))
		w.WriteByte(',')
		w.WriteString(p.Method)
		w.WriteByte(',')
		w.WriteString(strconv.Itoa(p.Iter))
		w.WriteByte(',')
		w.WriteString(name)
		w.WriteByte(',')
		w.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		w.WriteByte('\n')
	}
	for _, p := range trace {
		row(p, "model_evaluations", float64(p.Stats.Evaluations))
		for _, v := range p.Stats.Values {
			row(p, v.Name, v.Value)
		}
	}
	return w.Flush()
}
