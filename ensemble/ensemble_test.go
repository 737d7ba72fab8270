package ensemble

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"

	"github.com/dstein/dstein/dataset"
)

// toyData makes a two-class problem on 6×6 images: class 1 images are
// brighter on the left half. It is learnable but not trivially so at 6×6 with
// noise.
func toyData(n int, seed uint64) *dataset.Set {
	r := rand.New(rand.NewPCG(seed, 1))
	s := &dataset.Set{Name: "toy", N: n, H: 6, W: 6, C: 1, Classes: 2, Pixels: make([]uint8, n*36), Labels: make([]uint8, n),
		Mean: []float64{0.5}, Std: []float64{0.25}}
	for i := range n {
		y := uint8(r.IntN(2))
		s.Labels[i] = y
		for p := range 36 {
			v := 128 + 40*r.NormFloat64()
			if (p%6 < 3) == (y == 1) {
				v += 30
			}
			s.Pixels[i*36+p] = uint8(min(255, max(0, v)))
		}
	}
	return s
}

func toyConfig(method string, n int) Config {
	return Config{Data: "toy", Arch: "mlp", Method: method, Ensemble: n, Epochs: 3, Batch: 16, Seed: 7, LearningRate: 0.01}
}

func TestMethodsLearn(t *testing.T) {
	train, test := toyData(640, 1), toyData(400, 2)
	for _, m := range Methods {
		res, err := Train(context.Background(), toyConfig(m, 3), train, test, Options{})
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		// Chance is 0.5; with 400 test examples its standard error is
		// 0.025, so 0.7 is eight standard errors above chance.
		if res.EnsembleAccuracy < 0.7 {
			t.Errorf("%s: ensemble accuracy %.3f, want ≥ 0.7 (chance 0.5)", m, res.EnsembleAccuracy)
		}
		if len(res.MemberAccuracy) != 3 || len(res.PrefixAccuracy) != 3 {
			t.Errorf("%s: %d member and %d prefix accuracies, want 3", m, len(res.MemberAccuracy), len(res.PrefixAccuracy))
		}
		if m == "benn" && len(res.Alphas) != 3 {
			t.Errorf("benn: %d coefficients, want 3", len(res.Alphas))
		}
		if m == "gfsvgd" {
			for _, h := range res.History {
				if !(h.Repulsion > 0) || !(h.ImportanceESS >= 1) || h.ImportanceESS > 3 || !(h.KernelOffDiagonal > 0) {
					t.Errorf("gfsvgd epoch %d diagnostics: repulsion %v, ESS %v, kernel %v", h.Epoch, h.Repulsion, h.ImportanceESS, h.KernelOffDiagonal)
				}
			}
		}
	}
}

// TestResume interrupts each method in the middle of an epoch, resumes from
// the checkpoint, and requires the same final weights and accuracy as an
// uninterrupted run.
func TestResume(t *testing.T) {
	train, test := toyData(320, 3), toyData(200, 4)
	for _, m := range []string{"gfsvgd", "bagging", "benn"} {
		cfg := toyConfig(m, 2)
		full := t.TempDir()
		want, err := Train(context.Background(), cfg, train, test, Options{Dir: full})
		if err != nil {
			t.Fatal(err)
		}
		wantState := readStates(t, full)
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		stopAt := 2 // the unit in which to stop, mid-way
		_, err = Train(ctx, cfg, train, test, Options{Dir: dir, Progress: func(ev Event) {
			unit := ev.Epoch
			if ev.Member >= 0 {
				unit = ev.Member*cfg.Epochs + ev.Epoch
			}
			if unit == stopAt && ev.Step == ev.Steps/2 {
				cancel()
			}
		}})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: interrupted run returned %v, want context.Canceled", m, err)
		}
		var logs []string
		got, err := Train(context.Background(), cfg, train, test, Options{Dir: dir, Resume: true, Log: func(s string) { logs = append(logs, s) }})
		if err != nil {
			t.Fatal(err)
		}
		if got.ResumedFrom != stopAt {
			t.Errorf("%s: resumed from unit %d, want %d (logs %q)", m, got.ResumedFrom, stopAt, logs)
		}
		if got.EnsembleAccuracy != want.EnsembleAccuracy || !reflect.DeepEqual(got.MemberAccuracy, want.MemberAccuracy) {
			t.Errorf("%s: resumed accuracy %v %v, uninterrupted %v %v", m, got.EnsembleAccuracy, got.MemberAccuracy, want.EnsembleAccuracy, want.MemberAccuracy)
		}
		if got.WeightsSHA256 != want.WeightsSHA256 || len(want.WeightsSHA256) != 64 {
			t.Errorf("%s: weight digests %s and %s", m, got.WeightsSHA256, want.WeightsSHA256)
		}
		if !reflect.DeepEqual(readStates(t, dir), wantState) {
			t.Errorf("%s: resumed run's final weights differ from the uninterrupted run's", m)
		}
	}
}

func readStates(t *testing.T, dir string) checkpoint {
	t.Helper()
	tr := &trainer{opt: Options{Dir: dir}}
	cp, err := tr.readCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	cp.History, cp.Seconds = nil, 0 // timings differ
	return cp
}

func TestResumeRefusesOtherSettings(t *testing.T) {
	train, test := toyData(160, 3), toyData(100, 4)
	dir := t.TempDir()
	cfg := toyConfig("ste", 1)
	cfg.Epochs = 1
	if _, err := Train(context.Background(), cfg, train, test, Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	cfg.Seed++
	if _, err := Train(context.Background(), cfg, train, test, Options{Dir: dir, Resume: true}); err == nil {
		t.Fatal("resuming with another seed was accepted")
	}
}

// TestCoresDoNotChangeResults trains GF-SVGD with 1 and 2 cores (the
// network-level test in package bnn covers products large enough to run in
// parallel blocks).
func TestCoresDoNotChangeResults(t *testing.T) {
	train, test := toyData(320, 5), toyData(100, 6)
	cfg := toyConfig("gfsvgd", 3)
	cfg.Epochs = 1
	run := func(procs int) checkpoint {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		dir := t.TempDir()
		if _, err := Train(context.Background(), cfg, train, test, Options{Dir: dir}); err != nil {
			t.Fatal(err)
		}
		return readStates(t, dir)
	}
	if !reflect.DeepEqual(run(1), run(2)) {
		t.Fatal("GF-SVGD weights differ between 1 and 2 cores")
	}
}

func TestRankWeights(t *testing.T) {
	logMu := []float64{0.5, -2, 3, 0.5}
	g := make([]float64, 4)
	ess, gess := weights("rank", logMu, g)
	// H(μ) = #{l: μ_l ≥ μ}/n: 3/4, 4/4, 1/4, 3/4 → γ = 4/3, 1, 4, 4/3.
	want := []float64{4.0 / 3, 1, 4, 4.0 / 3}
	for i := range g {
		if math.Abs(g[i]-want[i]) > 1e-12 {
			t.Fatalf("rank weights %v, want %v", g, want)
		}
	}
	var s, s2 float64
	for _, w := range want {
		s += w
		s2 += w * w
	}
	if math.Abs(gess-s*s/s2) > 1e-12 {
		t.Errorf("rank ESS %v, want %v", gess, s*s/s2)
	}
	// Self-normalised ratios exp(logMu)/Σ.
	var z, z2 float64
	for _, l := range logMu {
		z += math.Exp(l)
		z2 += math.Exp(2 * l)
	}
	if math.Abs(ess-z*z/z2) > 1e-9 {
		t.Errorf("importance ESS %v, want %v", ess, z*z/z2)
	}
	weights("self", logMu, g)
	for i, l := range logMu {
		if math.Abs(g[i]-math.Exp(l)/z) > 1e-12 {
			t.Fatalf("self-normalised weights %v", g)
		}
	}
	// Huge log ratios stay finite.
	weights("self", []float64{1e5, 1e5 - 1, -1e5}, g[:3])
	for _, v := range g[:3] {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("weights %v", g[:3])
		}
	}
}

func TestConfigErrors(t *testing.T) {
	bad := []Config{
		{Method: "adaboost"},
		{Ensemble: -1},
		{Batch: 1},
		{LearningRate: math.NaN()},
		{Weights: "uniform"},
		{Bandwidth: "fixed"},
		{Temperature: -1},
	}
	for _, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v was accepted", c)
		}
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("defaults rejected: %v", err)
	}
}
