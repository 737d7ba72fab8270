package infer

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/transform"
)

// Kept draws are the chains' states after the warm-up, every thin-th
// iteration, laid out chain by chain: the same states a hand-written
// observer of the same run sees.
func TestKeepDrawsAreTheChainsStates(t *testing.T) {
	g := grid4(t)
	p, _ := sampler.Single("gibbs", nil, 1)
	keep := Keep{Warmup: 7, Draws: 5, Thin: 3}
	const n = 3
	out, err := Run(context.Background(), g, Spec{Pipeline: p, N: n, Key: rng.NewKey(4), Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	if out.Samples.N != n*keep.Draws || out.Pipeline.Stages[0].Iters != 7+5*3 || out.Layout.Kind != LayoutChains {
		t.Fatalf("%d samples, %d iterations, layout %+v", out.Samples.N, out.Pipeline.Stages[0].Iters, out.Layout)
	}
	// The same run by hand.
	tr, _ := transform.ForModel(nil, g)
	d := g.Dim()
	want := make([]int, n*keep.Draws*d)
	hand, _ := sampler.Single("gibbs", nil, keep.Iters())
	_, err = hand.Execute(context.Background(), sampler.Env{Model: g, Transform: tr, N: n, Key: rng.NewKey(4),
		Observe: func(_, iter int, s sampler.Sampler) error {
			if iter > 7 && (iter-7)%3 == 0 {
				k := (iter-7)/3 - 1
				for c := range n {
					copy(want[(c*keep.Draws+k)*d:], s.Current()[c*d:(c+1)*d])
				}
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Samples.Z, want) {
		t.Error("kept draws differ from the chains' states")
	}
}

// Settings that do not fit together are refused before anything runs.
func TestPlanRefusesMisfits(t *testing.T) {
	g := grid4(t)
	gf, _ := sampler.Single("gfsvgd", nil, 5)
	ex, _ := sampler.Single("exact", nil, 1)
	gb, _ := sampler.Single("gibbs", nil, 5)
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Pipeline: gf, N: 5, Keep: Keep{Draws: 10}}, "gfsvgd is approximate"},
		{Spec{Pipeline: ex, N: 5, Keep: Keep{Draws: 10}}, "exact makes independent draws"},
		{Spec{Pipeline: gb, N: 5, Keep: Keep{Draws: 10}, Replicates: 3}, "exclude each other"},
		{Spec{Pipeline: gb, N: 5, Keep: Keep{Draws: 0, Warmup: 3}}, "at least 1"},
		{Spec{Pipeline: gb, N: 5, Replicates: -1}, "at least 1"},
		// The replicates' R̂ takes their particles as draws: fewer than
		// diag.MinDraws failed after the run.
		{Spec{Pipeline: gf, N: 3, Replicates: 2}, "too few for the replicates' R̂"},
	} {
		_, err := Run(context.Background(), g, c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.spec.Keep, err, c.want)
		}
	}
}

// Replicate 0 is the plain run; the others differ; error bars come from
// their spread.
func TestReplicates(t *testing.T) {
	g := grid4(t)
	p, _ := Preset("hybrid")
	one, err := Run(context.Background(), g, Spec{Pipeline: p, N: 20, Key: rng.NewKey(2)})
	if err != nil {
		t.Fatal(err)
	}
	three, err := Run(context.Background(), g, Spec{Pipeline: p, N: 20, Key: rng.NewKey(2), Replicates: 3})
	if err != nil {
		t.Fatal(err)
	}
	d := g.Dim()
	if three.Samples.N != 60 || !slices.Equal(three.Samples.Z[:20*d], one.Samples.Z) || slices.Equal(three.Samples.Z[20*d:40*d], one.Samples.Z) {
		t.Fatal("replicate 0 is not the plain run, or replicate 1 repeats it")
	}
	if one.Diagnostics.Source != SourceNone || len(one.Diagnostics.Quantities) != 0 {
		t.Errorf("one run of a particle method: %+v", one.Diagnostics)
	}
	dg := three.Diagnostics
	if dg.Source != SourceReplicates || dg.Groups != 3 || dg.Length != 20 {
		t.Fatalf("diagnostics %+v", dg)
	}
	q := dg.Quantity("z0")
	if q == nil || !(q.MCSE > 0) || math.Abs(q.Mean-three.Means[0]) > 1e-12 {
		t.Errorf("z0: %+v, mean of the samples %v", q, three.Means[0])
	}
}

// The quantities are log p*, the model's observables, then the variables:
// values of two-state variables, indicators of the states of the others.
func TestQuantityNames(t *testing.T) {
	cat, err := categorical.New([]categorical.Variable{
		{States: []float64{-1, 1}, Probs: []float64{0.4, 0.6}},
		{States: []float64{0, 0.5, 2}, Probs: []float64{0.2, 0.3, 0.5}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, q := range quantities(cat) {
		names = append(names, q.name)
	}
	if want := []string{"log_p", "z0", "z1=0", "z1=0.5", "z1=2"}; !slices.Equal(names, want) {
		t.Errorf("categorical: %v, want %v", names, want)
	}
	names = names[:0]
	for _, q := range quantities(grid4(t))[:3] {
		names = append(names, q.name)
	}
	if want := []string{"log_p", "magnetisation", "z0"}; !slices.Equal(names, want) {
		t.Errorf("ising: %v, want %v", names, want)
	}
}

// Well-mixed chains give no warning; chains stuck in the two modes of a
// strongly coupled grid give the R̂ warning. Exact means lie within a few
// MCSE of the estimates of the mixed run.
func TestDiagnosticsWarnOnlyWhenChainsDoNotMix(t *testing.T) {
	p, _ := sampler.Single("gibbs", nil, 1)
	out, err := Run(context.Background(), grid4(t), Spec{Pipeline: p, N: 4, Key: rng.NewKey(1), Keep: Keep{Draws: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if w := out.Diagnostics.Warnings; len(w) > 0 {
		t.Errorf("a weakly coupled 4×4 grid, 4 chains × 1000 draws: warnings %q", w)
	}
	strong, err := ising.Grid(10, 10, false, 0.8, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err = Run(context.Background(), strong, Spec{Pipeline: p, N: 4, Key: rng.NewKey(1), Keep: Keep{Warmup: 20, Draws: 100}})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(out.Diagnostics.Warnings, "\n")
	if !strings.Contains(w, "R̂ >") || !strings.Contains(w, "have not mixed") {
		t.Errorf("a 10×10 grid at J = 0.8, 4 chains × 100 draws: warnings %q", w)
	}
	t.Log(w)
}

// R̂ of +Inf is written as "inf" in JSON.
func TestFloatJSON(t *testing.T) {
	b, err := json.Marshal([]Float{1.5, Float(math.Inf(1)), Float(math.Inf(-1))})
	if err != nil || string(b) != `[1.5,"inf","-inf"]` {
		t.Errorf("%s, %v", b, err)
	}
}

// Replicates of exact draws rarely disagree: the R̂ limit for replicates
// keeps the false warnings near its design rate of 0.5% per run (at most 3
// of 60 runs here, a generous bound for a binomial(60, 0.005) count, whose
// probability of exceeding 3 is below 1e-4). Replicates that sit in
// different modes do warn.
func TestReplicateDisagreement(t *testing.T) {
	g := grid4(t)
	ex, _ := sampler.Single("exact", nil, 1)
	alarms := 0
	for seed := range uint64(60) {
		out, err := Run(context.Background(), g, Spec{Pipeline: ex, N: 50, Key: rng.NewKey(seed), Replicates: 5})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.Join(out.Diagnostics.Warnings, "\n"), "R̂ >") {
			alarms++
		}
	}
	if alarms > 3 {
		t.Errorf("%d of 60 runs of exact replicates warned of disagreement", alarms)
	}
	// Four replicates of 30 particles: two all in the mode z = −1, two
	// all at +1, with one particle of each replicate in the other mode.
	d := g.Dim()
	z := make([]int, 4*30*d)
	for r := range 4 {
		for j := range 30 {
			s := r % 2
			if j == 0 {
				s = 1 - s
			}
			for i := range d {
				z[(r*30+j)*d+i] = s
			}
		}
	}
	p, _ := Preset("hybrid")
	out := &Output{Pipeline: p, Samples: &sampler.Samples{N: 120, D: d, Z: z}, Layout: Layout{Kind: LayoutReplicates, Groups: 4, Length: 30}}
	dg, err := Diagnose(context.Background(), g, out)
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(dg.Warnings, "\n"); !strings.Contains(w, "replicates disagree") {
		t.Errorf("replicates in opposite modes: warnings %q", w)
	}
}

func TestRhatChanceLimit(t *testing.T) {
	if l := rhatChanceLimit(10, 200, 100); l < RhatLimit || l > 1.02 {
		t.Errorf("10 replicates of 200, 100 quantities: limit %v", l)
	}
	if l := rhatChanceLimit(5, 50, 4); l < 1.02 {
		t.Errorf("5 replicates of 50: limit %v, want well above 1.01", l)
	}
}

// Short chains of independent draws (8 chains of 25 exact draws, the
// default preset's layout at n = 200) rarely warn of R̂: with the fixed
// 1.01 a quarter of the 18 quantities of a 4×4 grid pass it by chance in
// every run. The design rate is 0.5% of runs; at most 3 of 60 warn (a
// binomial(60, 0.005) count exceeds 3 with probability below 1e-4).
func TestShortChainsNoFalseRhat(t *testing.T) {
	g := grid4(t)
	truth, err := exact.NewEnumerated(g, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := g.Dim()
	const chains, draws = 8, 25
	alarms := 0
	for seed := range uint64(60) {
		r := rng.NewKey(seed).Rand()
		z := make([]int, chains*draws*d)
		for k := range chains * draws {
			truth.Sample(z[k*d:(k+1)*d], r)
		}
		p, _ := sampler.Single("gibbs", nil, 1)
		out := &Output{Pipeline: p, Samples: &sampler.Samples{N: chains * draws, D: d, Z: z}, Layout: Layout{Kind: LayoutChains, Groups: chains, Length: draws, Thin: 1}}
		dg, err := Diagnose(context.Background(), g, out)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.Join(dg.Warnings, "\n"), "R̂ >") {
			alarms++
		}
	}
	if alarms > 3 {
		t.Errorf("%d of 60 runs of independent draws in 8 chains of 25 warned of R̂", alarms)
	}
}

// Chains too short for the diagnostics keep their samples and say that
// they have no error bars, instead of failing after the work.
func TestTooShortForDiagnostics(t *testing.T) {
	p, _ := sampler.Single("gibbs", nil, 1)
	out, err := Run(context.Background(), grid4(t), Spec{Pipeline: p, N: 4, Key: rng.NewKey(1), Keep: Keep{Draws: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Samples.N != 12 || out.Diagnostics.Source != SourceNone || !strings.Contains(strings.Join(out.Diagnostics.Warnings, "\n"), "no error bars: 3 draws per chain") {
		t.Errorf("4 chains × 3 draws: %d samples, source %s, warnings %q", out.Samples.N, out.Diagnostics.Source, out.Diagnostics.Warnings)
	}
}

// Replicates that all land on the same count (stratified chains do: the
// count nearest n·p) have no spread, and their interval had zero width
// (rbm-small.json's z0 under hybrid --replicates 5 read 0.06 ± 0 against
// the exact 0.0625). The interval is at least a draw's step to each side.
func TestAgreeingReplicatesKeepAStep(t *testing.T) {
	g := grid4(t)
	d := g.Dim()
	const R, n = 4, 30
	z := make([]int, R*n*d)
	for r := range R {
		for j := range n {
			s := 0
			if j < 16 { // 16 of 30 draws at +1 in every replicate
				s = 1
			}
			for i := range d {
				z[(r*n+j)*d+i] = s
			}
		}
	}
	p, _ := Preset("hybrid")
	out := &Output{Pipeline: p, Samples: &sampler.Samples{N: R * n, D: d, Z: z}, Layout: Layout{Kind: LayoutReplicates, Groups: R, Length: n}}
	dg, err := Diagnose(context.Background(), g, out)
	if err != nil {
		t.Fatal(err)
	}
	q := dg.Quantity("z0")
	if q == nil {
		t.Fatal("no quantity z0")
	}
	step := 2.0 / n // a spin's mean moves by 2/n with one draw
	if q.CI90[0] > q.Mean-step+1e-12 || q.CI90[1] < q.Mean+step-1e-12 || !(q.MCSE > 0) {
		t.Errorf("z0: mean %v, MCSE %v, interval %v; want at least ±%v", q.Mean, q.MCSE, q.CI90, step)
	}
}
