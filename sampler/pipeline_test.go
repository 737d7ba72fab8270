package sampler_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	_ "github.com/dstein/dstein/sampler/all"
	"github.com/dstein/dstein/sampler/gfsvgd"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/transform"
)

func grid(t *testing.T) (*ising.Ising, *transform.Transform) {
	t.Helper()
	m, err := ising.Grid(3, 3, false, 0.3, []float64{0.2, 0, -0.1, 0, 0.3, 0, 0, 0, -0.2})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := transform.ForModel(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	return m, tr
}

// A pipeline file round-trips through JSON, and its keys are checked
// strictly: the method must exist, settings keys must be spelled exactly and
// appear once.
func TestPipelineJSON(t *testing.T) {
	p := sampler.Pipeline{Name: "x", Init: sampler.Init{Mean: -1, Std: 2}, Stages: []sampler.Stage{
		{Method: "gfsvgd", Iters: 7, Settings: &gfsvgd.Settings{LearningRate: 0.3}},
		{Method: "gibbs", Iters: 3, Settings: &gibbs.Settings{Stratified: true}},
	}}
	// Go's zero settings mean the defaults; a file's 0 is refused where a
	// default would replace it, so the file to write is the resolved
	// pipeline.
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sampler.ParsePipeline(b); err == nil || !strings.Contains(err.Error(), `stage 1 (gfsvgd): "bandwidth.scale" is 0, which would silently mean the default (1)`) {
		t.Errorf("zeros that defaults replace: %v", err)
	}
	if b, err = json.Marshal(p.Resolved()); err != nil {
		t.Fatal(err)
	}
	q, err := sampler.ParsePipeline(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if q.Init != p.Init || len(q.Stages) != 2 || q.Stages[0].Iters != 7 || q.Stages[0].Settings.(*gfsvgd.Settings).LearningRate != 0.3 || !q.Stages[1].Settings.(*gibbs.Settings).Stratified {
		t.Errorf("round trip gave %+v", q)
	}
	// A missing "iters" means the method's default.
	q, err = sampler.ParsePipeline([]byte(`{"stages":[{"method":"dhmc"}]}`))
	if err != nil || q.Stages[0].Iters != 500 {
		t.Errorf("default iters: %+v, %v", q, err)
	}
	for in, want := range map[string]string{
		`{"stages":[{"method":"gibs"}]}`:                                            `did you mean gibbs?`,
		`{"stages":[{"method":"gibbs","settings":{"Scan":"auto"}}]}`:                `must be spelled "scan"`,
		`{"stages":[{"method":"gibbs","settings":{"scan":"auto","scan":"block"}}]}`: `appears twice`,
		`{"stages":[{"method":"gibbs","settings":{"scan":"diagonal"}}]}`:            `unknown scan "diagonal"`,
		`{"stages":[{"method":"gfsvgd","settings":{"learning_rate":-1}}]}`:          `learning rate is -1`,
		`{"stages":[{"method":"gibbs","iters":-2}]}`:                                `-2 iterations`,
		`{"stages":[]}`: `no stages`,
		`{"init":{"mean":1,"std":-1},"stages":[{"method":"gibbs"}]}`: `initial draw`,
		`{"stages":[{"method":"gibbs"}],"extra":1}`:                  `unknown key "extra"`,
		`{"stages":[{"method":"gibbs","sweeps":3}]}`:                 `unknown key "stages[0].sweeps"`,
		// A 0 that a default would replace (Go's zero value).
		`{"stages":[{"method":"gibbs"},{"method":"dmala","settings":{"step_size":0}}]}`: `stage 2 (dmala): "step_size" is 0, which would silently mean the default (0.6)`,
		`{"stages":[{"method":"pt","settings":{"kernel":"site","ladder":0}}]}`:          `"ladder" is 0`,
		`{"stages":[{"method":"gfsvgd","settings":{"beta1":-0}}]}`:                      `"beta1" is 0`,
	} {
		if _, err := sampler.ParsePipeline([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v; want one containing %q", in, err, want)
		}
	}
	// A 0 that means what it says is read.
	for _, in := range []string{
		`{"stages":[{"method":"dmala","settings":{"adapt":0}}]}`,
		`{"stages":[{"method":"gfsvgd","settings":{"weight_anneal":0,"bandwidth":{"rule":"fixed","h":1}}}]}`,
	} {
		if _, err := sampler.ParsePipeline([]byte(in)); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
}

// Stages chain: each starts where the previous stopped, stage k ≥ 1 draws
// from the key ForIndex(rng.Stage, k), and a continuous stage after a
// discrete one starts inside the previous states' bins.
func TestExecuteChainsStages(t *testing.T) {
	m, tr := grid(t)
	ctx := context.Background()
	env := sampler.Env{Model: m, Transform: tr, N: 20, Key: rng.NewKey(4)}
	gibbsThenDHMC := sampler.Pipeline{Stages: []sampler.Stage{{Method: "gibbs", Iters: 5}, {Method: "dhmc", Iters: 0}}}
	res, err := gibbsThenDHMC.Execute(ctx, env)
	if err != nil || res.Status != sampler.Completed {
		t.Fatal(err, res.Err)
	}
	// Gibbs alone, same key, same start: the states a 0-iteration DHMC
	// stage must hand on unchanged, with points in their bins.
	alone, _ := sampler.Pipeline{Stages: []sampler.Stage{{Method: "gibbs", Iters: 5}}}.Execute(ctx, env)
	if !slices.Equal(res.Z, alone.Z) {
		t.Fatal("a 0-iteration stage changed the states")
	}
	if res.X == nil {
		t.Fatal("a continuous last stage reports no points")
	}
	d := m.Dim()
	for j := range 20 {
		if got := tr.Gamma(nil, res.X[j*d:(j+1)*d]); !slices.Equal(got, res.Z[j*d:(j+1)*d]) {
			t.Fatalf("chain %d: lifted points are not in the states' bins", j)
		}
	}
	if len(res.Stages) != 2 || res.Stages[0].Iters != 5 || res.Stages[1].Iters != 0 || res.Iters != 5 {
		t.Errorf("stage results %+v", res.Stages)
	}
	// A second stage draws from its own stream: two Gibbs stages of 5
	// sweeps differ from one stage of 10.
	two, _ := sampler.Pipeline{Stages: []sampler.Stage{{Method: "gibbs", Iters: 5}, {Method: "gibbs", Iters: 5}}}.Execute(ctx, env)
	ten, _ := sampler.Pipeline{Stages: []sampler.Stage{{Method: "gibbs", Iters: 10}}}.Execute(ctx, env)
	if slices.Equal(two.Z, ten.Z) {
		t.Error("the second stage reused the first stage's stream")
	}
	// The same pipeline and key give the same states.
	again, _ := gibbsThenDHMC.Execute(ctx, env)
	if !slices.Equal(again.Z, res.Z) || !slices.Equal(again.X, res.X) {
		t.Error("the same key gave different results")
	}
}

// A canceled context stops a pipeline between iterations with its result so
// far; a failing stage reports Failed with the method's name.
func TestExecuteCancelAndFail(t *testing.T) {
	m, tr := grid(t)
	ctx, cancel := context.WithCancel(context.Background())
	p := sampler.Pipeline{Stages: []sampler.Stage{{Method: "gibbs", Iters: 100}}}
	env := sampler.Env{Model: m, Transform: tr, N: 5, Key: rng.NewKey(1), Observe: func(stage, iter int, s sampler.Sampler) error {
		if iter == 3 {
			cancel()
		}
		return nil
	}}
	res, err := p.Execute(ctx, env)
	if err != nil || res.Status != sampler.Canceled || res.Iters != 3 {
		t.Errorf("canceled run: %+v, %v", res, err)
	}
	// exact on a model without an exact sampler (30 spins all coupled:
	// elimination width 30) fails in its step.
	big, _ := ising.Complete(30, 0.1, nil)
	btr, _ := transform.ForModel(nil, big)
	res, err = sampler.Pipeline{Stages: []sampler.Stage{{Method: "gibbs", Iters: 1}, {Method: "exact"}}}.Execute(context.Background(), sampler.Env{Model: big, Transform: btr, N: 2, Key: rng.NewKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != sampler.Failed || !strings.Contains(res.Err.Error(), "exact: ") {
		t.Errorf("exact on 30 coupled spins: %+v", res)
	}
}

func TestSingleAndResolved(t *testing.T) {
	p, err := sampler.Single("dmala", nil, -1)
	if err != nil || p.Stages[0].Iters != 500 {
		t.Fatal(p, err)
	}
	r := p.Resolved()
	if r.Init.Std != 1 {
		t.Errorf("resolved init %+v", r.Init)
	}
	b, _ := json.Marshal(r.Stages[0].Settings)
	if string(b) != `{"step_size":0.6}` {
		t.Errorf("resolved DMALA settings %s", b)
	}
	if _, err := sampler.Single("nope", nil, 1); err == nil {
		t.Error("unknown method accepted")
	}
	// One-shot methods make one iteration whatever their stage says.
	e, _ := sampler.Single("exact", nil, 50)
	if e.Iters() != 1 || e.Resolved().Stages[0].Iters != 1 {
		t.Errorf("exact counts %d iterations", e.Iters())
	}
}

// Every registered method has a description, settings that validate at
// their zero value and JSON names on every exported field.
func TestRegistry(t *testing.T) {
	ms := sampler.Methods()
	if len(ms) < 6 {
		t.Fatalf("%d methods registered", len(ms))
	}
	for _, m := range ms {
		s := m.NewSettings()
		if err := s.Validate(); err != nil {
			t.Errorf("%s: zero settings invalid: %v", m.Name, err)
		}
		if err := s.Resolved().Validate(); err != nil {
			t.Errorf("%s: resolved settings invalid: %v", m.Name, err)
		}
		if m.Description == "" || strings.Contains(m.Description, "\n") {
			t.Errorf("%s: description %q", m.Name, m.Description)
		}
		if _, err := json.Marshal(s); err != nil {
			t.Errorf("%s: settings do not marshal: %v", m.Name, err)
		}
	}
	if _, err := sampler.Lookup("dhcm"); err == nil || !strings.Contains(err.Error(), "did you mean dhmc?") {
		t.Errorf("lookup of a typo: %v", err)
	}
}

// A pipeline file's explicit "std" of 0 or less is refused, naming where it
// is and what to write instead; leaving it out (or null) means the default
// 1, and so does a Go user's zero Init.
func TestPipelineFileStd(t *testing.T) {
	const stages = `"stages":[{"method":"gibbs"}]`
	for in, want := range map[string]string{
		`{"init":{"std":0},` + stages + `}`:                              `line 1, column 16: the initial draw's "std" is 0; want a spread > 0 (leave "std" out for the default 1)`,
		`{"init":{"mean":2,"std":-1.5},` + stages + `}`:                  `line 1, column 25: the initial draw's "std" is -1.5; want a spread > 0`,
		"\ufeff{\n  \"init\": {\"std\": -0},\n  " + stages + "\n}":       `line 2, column 19: the initial draw's "std" is -0;`,
		`{` + stages + `, "name": "x", "init": {"std": 0e5, "mean": 1}}`: `the initial draw's "std" is 0e5;`,
		`{"init":{"std":1e-400},` + stages + `}`:                         `the initial draw's "std" is 1e-400;`, // reads as 0
	} {
		_, err := sampler.ParsePipeline([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v; want one line containing %q", in, err, want)
		}
	}
	for in, want := range map[string]float64{
		`{` + stages + `}`:                                 1,
		`{"init":{"mean":1},` + stages + `}`:               1,
		`{"init":{"std":null},` + stages + `}`:             1,
		`{"init":null,` + stages + `}`:                     1,
		`{"init":{"std":2.5},` + stages + `}`:              2.5,
		`{"init":{"std":1e-300,"mean":-3},` + stages + `}`: 1e-300,
	} {
		p, err := sampler.ParsePipeline([]byte(in))
		if err != nil || p.Resolved().Init.Std != want {
			t.Errorf("%s: std %v, %v; want %v", in, p.Resolved().Init.Std, err, want)
		}
	}
	if got := (sampler.Init{}).Resolved().Std; got != 1 {
		t.Errorf("the zero Init resolves to std %v; want 1", got)
	}
}
