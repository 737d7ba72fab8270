package infer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gibbs"
)

func grid4(t *testing.T) *ising.Ising {
	t.Helper()
	r := rng.NewKey(11).For(rng.Model).Rand()
	fields := make([]float64, 16)
	for i := range fields {
		fields[i] = -0.3 + 0.6*r.Float64()
	}
	g, err := ising.Grid(4, 4, false, 0.3, fields)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Every preset and every method runs through Run, and the summary has its
// documented fields, zeros included.
func TestPresetsAndMethodsRun(t *testing.T) {
	g := grid4(t)
	names := append(PresetNames(), sampler.MethodNames()...)
	for _, name := range names {
		p, _, err := Pipeline(name)
		if err != nil {
			t.Fatal(err)
		}
		for k := range p.Stages {
			if m, _ := sampler.Lookup(p.Stages[k].Method); !m.OneShot {
				p.Stages[k].Iters = min(p.Stages[k].Iters, 20)
			}
		}
		out, err := Run(context.Background(), g, Spec{Pipeline: p, N: 12, Key: rng.NewKey(3), Trace: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if out.Status != sampler.Completed || out.Samples.N != 12 || len(out.Means) != 16 || out.Iters != p.Iters() {
			t.Errorf("%s: output %+v", name, out)
		}
		if len(out.Trace) != out.Iters {
			t.Errorf("%s: %d trace points for %d iterations", name, len(out.Trace), out.Iters)
		}
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		if err := json.NewEncoder(w).Encode(NewSummary(name, "grid", g, out)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		w.Flush()
		var sum map[string]any
		if err := json.Unmarshal(buf.Bytes(), &sum); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"schema_version", "method", "model", "n", "dim", "iters", "seed", "status", "seconds", "pipeline", "stages", "states", "mean", "marginals", "model_evaluations", "impossible", "samples", "keep", "replicates", "error_bars"} {
			if _, ok := sum[k]; !ok {
				t.Errorf("%s: summary lacks %q", name, k)
			}
		}
		var tr bytes.Buffer
		tw := bufio.NewWriter(&tr)
		if err := WriteTrace(tw, out.Trace); err != nil || !strings.HasPrefix(tr.String(), "stage,method,iter,statistic,value\n") {
			t.Errorf("%s: trace %q, %v", name, tr.String()[:min(60, tr.Len())], err)
		}
	}
	if _, _, err := Pipeline("defualt"); err == nil || !strings.Contains(err.Error(), "did you mean default?") {
		t.Errorf("typo: %v", err)
	}
}

// The same key gives the same samples; another key other samples.
func TestRunIsDeterministic(t *testing.T) {
	g := grid4(t)
	p, _ := Preset("hybrid")
	a, _ := Run(context.Background(), g, Spec{Pipeline: p, N: 30, Key: rng.NewKey(5)})
	b, _ := Run(context.Background(), g, Spec{Pipeline: p, N: 30, Key: rng.NewKey(5)})
	c, _ := Run(context.Background(), g, Spec{Pipeline: p, N: 30, Key: rng.NewKey(6)})
	if !slices.Equal(a.Samples.Z, b.Samples.Z) {
		t.Error("same key, different samples")
	}
	if slices.Equal(a.Samples.Z, c.Samples.Z) {
		t.Error("different keys, same samples")
	}
}

// The default preset and its sweeps alone draw from exact conditionals:
// over 20 seeds at n = 100 their MSE of the means must not exceed that of
// n exact i.i.d. draws (Σ Var(z_i)/(n d), from the exact marginals) on a
// weakly coupled 4×4 grid and a 10×4 RBM, where the stratified sweeps make
// the means better than i.i.d. (measured 0.01–0.2 of it; EXPERIMENTS.md).
// A sampler that ignores the model fails this bar.
func TestDefaultPresetBeatsIIDMeansOnEasyModels(t *testing.T) {
	b, err := rbm.Random(10, 4, 0.5, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	sweepsOnly := sampler.Pipeline{Init: sampler.Init{Mean: -2}, Stages: []sampler.Stage{{Method: "gibbs", Iters: 10, Settings: &gibbs.Settings{Stratified: true}}}}
	def, _ := Preset("hybrid")
	for _, m := range []model.Model{grid4(t), b} {
		ex, err := exact.Enumerate(m, 0)
		if err != nil {
			t.Fatal(err)
		}
		const n, seeds = 100, 20
		var iid float64
		for _, mu := range ex.Means {
			iid += (1 - mu*mu) / n // ±1 variables
		}
		iid /= float64(m.Dim())
		for name, p := range map[string]sampler.Pipeline{"default": def, "10 stratified sweeps": sweepsOnly} {
			var mse float64
			for seed := range uint64(seeds) {
				out, err := Run(context.Background(), m, Spec{Pipeline: p, N: n, Key: rng.NewKey(seed)})
				if err != nil {
					t.Fatal(err)
				}
				for i, v := range out.Means {
					mse += (v - ex.Means[i]) * (v - ex.Means[i]) / float64(m.Dim()*seeds)
				}
			}
			t.Logf("%d variables, %s: MSE of the means %.2e; i.i.d. %.2e", m.Dim(), name, mse, iid)
			if mse > iid {
				t.Errorf("%d variables, %s: MSE %v above the i.i.d. MSE %v", m.Dim(), name, mse, iid)
			}
		}
		// The bar can fail: all means at 0.
		var naive float64
		for _, mu := range ex.Means {
			naive += mu * mu / float64(m.Dim())
		}
		if naive <= iid {
			t.Errorf("%d variables: the bar %v does not reject zero means (MSE %v)", m.Dim(), iid, naive)
		}
	}
}

// Memory estimates grow as the methods' tables do: GF-SVGD's n×n kernel,
// the chains' n×d states.
func TestMemoryEstimate(t *testing.T) {
	g := grid4(t)
	gf, _ := Preset("transport")
	small := Memory(g, Spec{Pipeline: gf, N: 100})
	big := Memory(g, Spec{Pipeline: gf, N: 10000})
	if ratio := big / small; ratio < 1000 || math.IsNaN(ratio) {
		t.Errorf("GF-SVGD at n = 10⁴ is estimated %.3g times n = 100; the kernel alone is 10⁴ times larger", ratio)
	}
	gb, _ := sampler.Single("gibbs", nil, 10)
	if m := Memory(g, Spec{Pipeline: gb, N: 1000}); m < 1000*16*8 {
		t.Errorf("Gibbs with 1000 chains of 16 spins estimated at %v bytes", m)
	}
}
