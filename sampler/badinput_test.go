package sampler_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/dhmc"
	"github.com/dstein/dstein/sampler/gibbs"
)

// What a library user can get wrong is reported when it is given, not
// later or never (each case was accepted before: an invalid initial draw
// passed Check and started NaN particles, settings of another method
// failed only when the run built its sampler, a negative run "completed",
// a variable past the model's read another's states, shapes that
// overflow hung).
func TestBadInputReportedEarly(t *testing.T) {
	m, tr := grid(t)
	for _, in := range []sampler.Init{{Std: math.NaN()}, {Std: -1}, {Mean: math.Inf(1)}} {
		if err := sampler.NewProblem(m, tr, 4, in, rng.NewKey(1)).Check(); err == nil || !strings.Contains(err.Error(), "initial draw") {
			t.Errorf("init %+v: Check says %v", in, err)
		}
	}
	if _, err := sampler.Single("gibbs", &dhmc.Settings{}, 5); err == nil || !strings.Contains(err.Error(), "settings of type *dhmc.Settings") {
		t.Errorf("Single with another method's settings: %v", err)
	}
	g, err := gibbs.New(sampler.NewProblem(m, tr, 4, sampler.Init{}, rng.NewKey(1)), gibbs.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if out := sampler.Run(context.Background(), g, sampler.RunOptions{Iters: -1}); out.Status != sampler.Failed || out.Err == nil {
		t.Errorf("a run of -1 iterations: %+v", out)
	}
	if _, err := model.Index(m, m.Dim(), 1); err == nil {
		t.Error("model.Index accepted a variable past the model's")
	}
	if _, err := ising.Grid(1<<32, 1<<32, false, 0.1, nil); err == nil {
		t.Error("ising.Grid accepted 2^64 sites")
	}
	if e := ising.GridEdges(-1, 3, false, 1); e != nil {
		t.Errorf("GridEdges of -1 rows: %v", e)
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), "row 1 has 1 entries") {
				t.Errorf("SpinParams of a ragged W: recovered %v", r)
			}
		}()
		rbm.SpinParams([][]float64{{1, 2}, {1}}, nil, nil)
	}()
}
