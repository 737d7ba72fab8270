package sampler

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/dstein/dstein/internal/strictjson"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/transform"
)

// Init is the initial draw of a run: every particle or chain starts at a
// point x ~ N(Mean, Std²) per coordinate (chain methods at its state Γ(x)).
type Init struct {
	// Mean of the draw. Default 0.
	Mean float64 `json:"mean"`
	// Std is its spread. Default (0) is 1.
	Std float64 `json:"std"`
}

// Resolved returns the init with its default filled in. This is the one
// place where a zero spread means 1.
func (in Init) Resolved() Init {
	if in.Std == 0 {
		in.Std = 1
	}
	return in
}

// Validate reports an initial draw that is not a finite normal.
func (in Init) Validate() error {
	if math.IsNaN(in.Mean) || math.IsInf(in.Mean, 0) || math.IsNaN(in.Std) || math.IsInf(in.Std, 0) || in.Std < 0 {
		return fmt.Errorf("the initial draw N(%v, %v²) is not valid: want a finite mean and a finite spread > 0", in.Mean, in.Std)
	}
	if !(math.Abs(in.Mean)+40*in.Std <= math.MaxFloat64) {
		// A normal draw beyond 40 spreads has probability below 10^-349.
		return fmt.Errorf("the initial draw N(%v, %v²) would overflow: want |mean| + 40 × spread below %.3g", in.Mean, in.Std, math.MaxFloat64)
	}
	return nil
}

// Stage is one method run for a number of iterations inside a pipeline.
type Stage struct {
	// Method is a registered method's name.
	Method string
	// Iters is the number of iterations (ignored by one-shot methods,
	// which make one).
	Iters int
	// Settings are the method's settings (its NewSettings type).
	Settings Settings
}

type stageJSON struct {
	Method   string          `json:"method"`
	Iters    *int            `json:"iters"`
	Settings json.RawMessage `json:"settings"`
}

// JSONShape implements strictjson.Checker.
func (Stage) JSONShape() reflect.Type { return reflect.TypeOf(stageJSON{}) }

// MarshalJSON writes {"method", "iters", "settings"} with the settings as
// given, zeros included; ParsePipeline refuses a 0 that a default would
// replace, so a pipeline file is written from Pipeline.Resolved.
func (s Stage) MarshalJSON() ([]byte, error) {
	set := s.Settings
	if set == nil {
		if m, err := Lookup(s.Method); err == nil {
			set = m.NewSettings()
		}
	}
	return json.Marshal(struct {
		Method   string   `json:"method"`
		Iters    int      `json:"iters"`
		Settings Settings `json:"settings"`
	}{s.Method, s.Iters, set})
}

// UnmarshalJSON reads a stage strictly: the method must be registered, its
// settings keys must be its settings' JSON names, and a missing "iters"
// means the method's default.
func (s *Stage) UnmarshalJSON(b []byte) error {
	var j stageJSON
	if err := strictjson.Unmarshal(b, &j); err != nil {
		return err
	}
	m, err := Lookup(j.Method)
	if err != nil {
		return err
	}
	set := m.NewSettings()
	if len(j.Settings) > 0 && string(j.Settings) != "null" {
		if err := strictjson.Unmarshal(j.Settings, set); err != nil {
			return fmt.Errorf("settings of %s: %w", j.Method, err)
		}
	}
	*s = Stage{Method: j.Method, Iters: m.Iters, Settings: set}
	if j.Iters != nil {
		s.Iters = *j.Iters
	}
	return nil
}

// Pipeline is a run: an initial draw, then stages, each starting where the
// previous one stopped. A preset is a named pipeline.
type Pipeline struct {
	// Name is the preset's name, or empty.
	Name string `json:"name,omitempty"`
	// Description says in one line what the pipeline does.
	Description string `json:"description,omitempty"`
	Init        Init   `json:"init"`
	// Stages run in order.
	Stages []Stage `json:"stages"`
}

// Single returns the pipeline of one method with the given settings (nil:
// its defaults) and iterations (negative: its default).
func Single(method string, set Settings, iters int) (Pipeline, error) {
	m, err := Lookup(method)
	if err != nil {
		return Pipeline{}, err
	}
	if set == nil {
		set = m.NewSettings()
	}
	if iters < 0 {
		iters = m.Iters
	}
	pl := Pipeline{Stages: []Stage{{Method: method, Iters: iters, Settings: set}}}
	if err := pl.Validate(); err != nil {
		return Pipeline{}, err
	}
	return pl, nil
}

// Validate reports the first stage that cannot run.
func (p Pipeline) Validate() error {
	if err := p.Init.Validate(); err != nil {
		return err
	}
	if len(p.Stages) == 0 {
		return fmt.Errorf("the pipeline has no stages")
	}
	if len(p.Stages) > 1<<20 {
		return fmt.Errorf("the pipeline has %d stages; want at most %d", len(p.Stages), 1<<20)
	}
	for k, st := range p.Stages {
		m, err := Lookup(st.Method)
		if err != nil {
			return fmt.Errorf("stage %d: %w", k+1, err)
		}
		if st.Iters < 0 || st.Iters > MaxIters {
			return fmt.Errorf("stage %d (%s): %d iterations; want 0 to %d", k+1, st.Method, st.Iters, MaxIters)
		}
		if st.Settings == nil {
			continue
		}
		if reflect.TypeOf(st.Settings) != reflect.TypeOf(m.NewSettings()) {
			return fmt.Errorf("stage %d (%s): settings of type %T; want %T", k+1, st.Method, st.Settings, m.NewSettings())
		}
		if err := st.Settings.Validate(); err != nil {
			return fmt.Errorf("stage %d (%s): %w", k+1, st.Method, err)
		}
	}
	// Each stage is at most MaxIters and there are at most 2²⁰: no overflow.
	total := 0
	for _, st := range p.Stages {
		total += st.Iters
	}
	if total > MaxIters {
		return fmt.Errorf("the pipeline's stages make %d iterations in all; want at most %d", total, MaxIters)
	}
	return nil
}

// MaxIters bounds the iterations of a stage and of a whole run (2⁴⁰, about
// 10¹²: weeks of the fastest sweeps), so that no count of iterations
// overflows when stages and replicates are added up.
const MaxIters = 1 << 40

// Iters returns the total number of iterations of the pipeline's stages.
func (p Pipeline) Iters() int {
	t := 0
	for _, st := range p.Stages {
		t += p.stageIters(st)
	}
	return t
}

func (p Pipeline) stageIters(st Stage) int {
	if m, err := Lookup(st.Method); err == nil && m.OneShot {
		return 1
	}
	return st.Iters
}

// Resolved returns a copy of the pipeline with every stage's settings and
// the initial draw resolved (defaults filled in).
func (p Pipeline) Resolved() Pipeline {
	out := p
	out.Init = p.Init.Resolved()
	out.Stages = make([]Stage, len(p.Stages))
	for k, st := range p.Stages {
		if st.Settings == nil {
			if m, err := Lookup(st.Method); err == nil {
				st.Settings = m.NewSettings()
			}
		}
		if st.Settings != nil {
			st.Settings = st.Settings.Resolved()
		}
		st.Iters = p.stageIters(st)
		out.Stages[k] = st
	}
	return out
}

// Env is what a pipeline runs on.
type Env struct {
	Model     model.Model
	Transform *transform.Transform
	// N is the number of particles or chains.
	N int
	// Key is the run's random key. The initial draw comes from
	// Key.For(rng.Init); the first stage gets Key itself, stage k ≥ 1
	// Key.ForIndex(rng.Stage, k).
	Key rng.Key
	// Truth, when not nil, is handed to the stages (the exact method).
	Truth Truth
	// Progress, when not nil, hears about every iteration (of all stages
	// together).
	Progress Progress
	// Observe, when not nil, is called after every iteration of every
	// stage with the stage's index, the iterations it has done and its
	// sampler; a non-nil error stops the run as failed, except ErrEnough,
	// which ends the stage as completed.
	Observe func(stage, iter int, s Sampler) error
	// Started, when not nil, is called with each stage's index and its
	// sampler once the sampler has started, before its first iteration
	// (so that an observer can read a state that the first iteration
	// changes, such as Tuning).
	Started func(stage int, s Sampler)
}

// StageResult describes one stage of a finished run.
type StageResult struct {
	Method   string
	Settings Settings // resolved
	// Iters is the number of iterations done, of Planned.
	Iters, Planned int
	Stats          Stats
	Seconds        float64
}

// Result is what a pipeline produced.
type Result struct {
	Status Status
	// Err is the error of a failed run.
	Err error
	// Iters counts the iterations done over all stages.
	Iters  int
	Stages []StageResult
	// Z are the final states (row-major n×d); X the final points of a
	// run whose last stage has points (else nil).
	Z []int
	X []float64
}

// Execute runs the pipeline. A canceled run returns its result so far with
// Status Canceled; a failed one Status Failed and Err. The error return is
// for a pipeline that cannot start (bad settings or shapes).
func (p Pipeline) Execute(ctx context.Context, env Env) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	p = p.Resolved()
	m, t := env.Model, env.Transform
	if m == nil || t == nil {
		return nil, fmt.Errorf("sampler: no model or transform")
	}
	n, d := env.N, m.Dim()
	if n < 1 {
		return nil, fmt.Errorf("need at least one particle or chain, got %d", n)
	}
	if d < 1 {
		return nil, fmt.Errorf("the model has no variables")
	}
	first := NewProblem(m, t, n, p.Init, env.Key)
	x, z := first.X, first.Z
	res := &Result{Status: Completed}
	total := p.Iters()
	for k, st := range p.Stages {
		meth, _ := Lookup(st.Method)
		key := env.Key
		if k > 0 {
			key = env.Key.ForIndex(rng.Stage, k)
			if x == nil && meth.Continuous {
				x = make([]float64, n*d)
				lr := key.For(rng.Lift).Rand()
				for j := range n {
					t.SampleGiven(x[j*d:(j+1)*d], z[j*d:(j+1)*d], lr)
				}
			}
		}
		prob := &Problem{Model: m, Transform: t, N: n, X: x, Z: z, Key: key, Truth: env.Truth}
		if !meth.Continuous {
			prob.X = nil
		}
		if err := prob.Check(); err != nil {
			return nil, fmt.Errorf("%s: %w", st.Method, err)
		}
		start := time.Now()
		s, err := meth.Start(prob, st.Settings)
		if err != nil {
			if k == 0 {
				return nil, named(st.Method, err)
			}
			res.Status, res.Err = Failed, named(st.Method, err)
			return res, nil
		}
		if env.Started != nil {
			env.Started(k, s)
		}
		base := res.Iters
		opt := RunOptions{Iters: st.Iters}
		if env.Progress != nil {
			opt.Progress = offsetProgress{env.Progress, base, total}
		}
		if env.Observe != nil {
			stage := k
			opt.AfterStep = func(done int) error { return env.Observe(stage, done, s) }
		}
		out := Run(ctx, s, opt)
		res.Iters += out.Iters
		sr := StageResult{Method: st.Method, Settings: st.Settings, Iters: out.Iters, Planned: st.Iters, Stats: s.Stats(), Seconds: time.Since(start).Seconds()}
		res.Stages = append(res.Stages, sr)
		z = append([]int(nil), s.Current()...)
		x = nil
		if ps, ok := s.(Positioned); ok {
			x = append([]float64(nil), ps.Positions()...)
		}
		res.Z, res.X = z, x
		if f, ok := s.(Failer); ok && f.Err() != nil && out.Status != Failed {
			out.Status, out.Err = Failed, f.Err() // the states could not be read
		}
		if c, ok := s.(io.Closer); ok {
			c.Close() // a GPU sampler's device memory
		}
		if out.Status != Completed {
			res.Status, res.Err = out.Status, out.Err
			if out.Status == Failed {
				res.Err = named(st.Method, out.Err)
			}
			return res, nil
		}
	}
	return res, nil
}

type offsetProgress struct {
	p           Progress
	base, total int
}

func (o offsetProgress) Update(done, _ int) { o.p.Update(o.base+done, o.total) }

// named prefixes err with the method's name unless the sampler's package
// already did (its errors start with its name, as Go's do).
func named(method string, err error) error {
	if msg := err.Error(); strings.HasPrefix(msg, method+": ") || strings.HasPrefix(msg, method+" ") {
		return err
	}
	return fmt.Errorf("%s: %w", method, err)
}
