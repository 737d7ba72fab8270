//go:build long

package infer

import (
	"context"
	"math"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model/modelfile"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// The numbers of README's --check-modes paragraph (go test -tags long -run
// CheckModesValidation -v ./infer, about 2 minutes on 2 cores): chains of
// Gibbs, GWG and DHMC (4 chains of 1000 draws after 1000 warm-up, seeds
// 1–100 or 1–60) on targets small enough to enumerate. A run is wrong
// when a binary variable's mean is beyond 6 of its MCSE from the exact
// one, and trapped when it is wrong and gives no warning of its own. The
// check must warn on every trapped run and on no unwarned run that is not
// wrong; the counts of its warnings on runs that warned already are
// logged.
func TestCheckModesValidation(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		path, method string
		seeds        int
	}{
		{"coverage/rbm16-pat.json", "gibbs", 100},
		{"coverage/rbm16-pat.json", "gwg", 100},
		{"coverage/rbm16-pat.json", "dhmc", 100},
		{"ising-grid.json", "gibbs", 100},
		{"ising-grid.json", "gwg", 60},
		{"ising-grid.json", "dhmc", 60},
		{"rbm-small.json", "gibbs", 100},
		{"potts5-torus.json", "gibbs", 100},
		{"categorical.json", "gibbs", 100},
		{"ising-strong.json", "gibbs", 100},
		{"coverage/grid16-ferro.json", "gibbs", 100},
		{"coverage/torus2x5.json", "gibbs", 100},
		{"coverage/sg16.json", "gibbs", 100},
		{"coverage/rbm12-strong.json", "gibbs", 100},
		{"coverage/ferro-defect16.json", "gibbs", 100},
		{"coverage/potts4-mixed9.json", "gibbs", 100},
		{"coverage/rbm18-big.json", "gibbs", 60},
		{"coverage/grid20-trap.json", "gibbs", 60},
		{"ferro-random18.json", "gwg", 60},
	}
	for _, c := range cases {
		m, err := modelfile.Load("../examples/" + c.path)
		if err != nil {
			t.Fatal(err)
		}
		truth, err := exact.For(m)
		if err != nil {
			t.Fatal(err)
		}
		res := truth.Result()
		pl, err := sampler.Single(c.method, nil, -1)
		if err != nil {
			t.Fatal(err)
		}
		var trapped, caught, falseAlarms, warnedAlarms int
		for seed := 1; seed <= c.seeds; seed++ {
			out, err := Run(ctx, m, Spec{Pipeline: pl, N: 4, Keep: Keep{Warmup: 1000, Draws: 1000}, Key: rng.NewKey(uint64(seed))})
			if err != nil {
				t.Fatal(err)
			}
			wrong := false
			for i, q := range out.Diagnostics.Quantities[1 : 1+m.Dim()] {
				if len(m.States(i)) > 2 {
					break // the quantities of a variable with more states are its states'
				}
				var mean float64
				for s, p := range res.Marginals[i] {
					mean += p * m.States(i)[s]
				}
				wrong = wrong || math.Abs(q.Mean-mean) > 6*q.MCSE
			}
			unwarned := len(out.Diagnostics.Warnings) == 0
			mc, err := CheckModes(ctx, m, out)
			if err != nil {
				t.Fatal(err)
			}
			alarm := mc.Warning != ""
			switch {
			case wrong && unwarned:
				trapped++
				if alarm {
					caught++
				} else {
					t.Errorf("%s, %s, seed %d: a trapped run passed the check: %s", c.path, c.method, seed, mc.Note)
				}
			case alarm && unwarned:
				falseAlarms++
				t.Errorf("%s, %s, seed %d: the check warned on a right run: %s", c.path, c.method, seed, mc.Note)
			case alarm:
				warnedAlarms++
			}
		}
		t.Logf("%s, %s, %d seeds: trapped %d, caught %d; warnings on right unwarned runs %d, on runs that warned already %d",
			c.path, c.method, c.seeds, trapped, caught, falseAlarms, warnedAlarms)
	}
}
