package report

import (
	"bufio"
	"encoding/json"
	"math"
	"strconv"

	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/internal/atomicfile"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gfsvgd"
)

// FormatValue formats a state value or statistic: the shortest
// representation that reads back as the same float64 ("-1", "0.5").
func FormatValue(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// WriteSamplesCSV writes a header z0,z1,… and one row per sample with the
// state values as the model lists them.
func WriteSamplesCSV(w *bufio.Writer, m model.Model, s *sampler.Samples) error {
	for i := range s.D {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString("z")
		w.WriteString(strconv.Itoa(i))
	}
	w.WriteByte('\n')
	buf := make([]byte, 0, 32)
	for r := range s.N {
		for i, st := range s.Row(r) {
			if i > 0 {
				w.WriteByte(',')
			}
			buf = strconv.AppendFloat(buf[:0], m.States(i)[st], 'g', -1, 64)
			w.Write(buf)
		}
		if err := w.WriteByte('\n'); err != nil {
			return err
		}
	}
	return nil
}

// SaveSamplesCSV writes the samples to path atomically.
func SaveSamplesCSV(path string, m model.Model, s *sampler.Samples) error {
	return atomicfile.Write(path, func(w *bufio.Writer) error { return WriteSamplesCSV(w, m, s) })
}

// Settings records the settings of a run in a summary; fields that do not
// apply to the method are left out.
type Settings struct {
	InitMean        float64 `json:"init_mean"`
	InitStd         float64 `json:"init_std"`
	Preset          string  `json:"preset,omitempty"`
	Surrogate       string  `json:"surrogate,omitempty"`
	Temperature     float64 `json:"temperature,omitempty"`
	LearningRate    float64 `json:"learning_rate,omitempty"`
	Optimizer       string  `json:"optimizer,omitempty"`
	BandwidthRule   string  `json:"bandwidth_rule,omitempty"`
	BandwidthScale  float64 `json:"bandwidth_scale,omitempty"`
	FixedBandwidth  float64 `json:"fixed_bandwidth,omitempty"`
	MedianWithZeros bool    `json:"median_includes_diagonal,omitempty"`
	Weights         string  `json:"weights,omitempty"`
	Scan            string  `json:"scan,omitempty"`
	StepSize        float64 `json:"step_size,omitempty"`
	Steps           int     `json:"steps,omitempty"`
	Sweeps          int     `json:"sweeps,omitempty"`
	Stratified      bool    `json:"stratified,omitempty"`
}

// Summary is the JSON summary of a sampling run.
type Summary struct {
	Method      string      `json:"method"`
	Model       string      `json:"model"`
	N           int         `json:"n"`
	Dim         int         `json:"dim"`
	Iters       int         `json:"iters"`
	Seed        uint64      `json:"seed"`
	Status      string      `json:"status"`
	Seconds     float64     `json:"seconds"`
	Settings    *Settings   `json:"settings,omitempty"`
	States      [][]float64 `json:"states"`
	Mean        []float64   `json:"mean"`
	Marginals   [][]float64 `json:"marginals"`
	Evaluations int64       `json:"model_evaluations"`
	WeightESS   float64     `json:"weight_ess,omitempty"`
	Bandwidth   float64     `json:"bandwidth,omitempty"`
	Impossible  int         `json:"impossible"`
	Rejected    int         `json:"rejected_moves,omitempty"`
}

// NewSummary builds the summary of a run.
func NewSummary(modelName string, m model.Model, out *infer.Output, set *Settings) *Summary {
	st := make([][]float64, m.Dim())
	for i := range st {
		st[i] = m.States(i)
	}
	return &Summary{
		Method: out.Method, Model: modelName, N: out.N, Dim: out.Dim, Iters: out.Iters, Seed: out.Seed,
		Status: out.Status.String(), Seconds: round(out.Seconds, 4), Settings: set, States: st,
		Mean: out.Means, Marginals: out.Marginals, Evaluations: out.Evaluations, WeightESS: out.WeightESS,
		Bandwidth: out.Bandwidth, Impossible: out.Impossible, Rejected: out.Rejected,
	}
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// SaveJSON writes v as indented JSON to path atomically.
func SaveJSON(path string, v any) error {
	return atomicfile.Write(path, func(w *bufio.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

// SaveTraceCSV writes one row per iteration: iter, weight_ess, bandwidth,
// mean_step, impossible, rejected.
func SaveTraceCSV(path string, trace []gfsvgd.Diagnostics) error {
	return atomicfile.Write(path, func(w *bufio.Writer) error {
		w.WriteString("iter,weight_ess,bandwidth,mean_step,impossible,rejected\n")
		for _, d := range trace {
			w.WriteString(strconv.Itoa(d.Iter))
			for _, v := range []float64{d.WeightESS, d.Bandwidth, d.MeanStep} {
				w.WriteByte(',')
				w.WriteString(FormatValue(v))
			}
			w.WriteByte(',')
			w.WriteString(strconv.Itoa(d.Impossible))
			w.WriteByte(',')
			if _, err := w.WriteString(strconv.Itoa(d.Rejected)); err != nil {
				return err
			}
			w.WriteByte('\n')
		}
		return nil
	})
}
