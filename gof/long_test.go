//go:build long

package gof

import (
	"context"
	"math"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// TestLevelRBMSurrogates measures GF-KSD's level on the d = 50, M = 25 RBM
// of the gof-rbm-sigma experiment (W entries N(0, 1/M), b, c ~ N(0, 1),
// seed 1) at n = 100 with exact samples from the model itself, for ρ = p0 and
// the relaxed surrogate at τ = 0.25 and at the default τ. It logs every rate
// and requires the default to hold α = 0.05 within 3 standard errors.
//
//	go test -tags long -run LevelRBMSurrogates -v ./gof/
func TestLevelRBMSurrogates(t *testing.T) {
	const trials, n, b, alpha = 100, 100, 500, 0.05
	m, err := rbm.Random(50, 25, 1/math.Sqrt(25), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	truth, err := exact.For(m)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]GFKSDSettings{
		"base":           {Surrogate: "base"},
		"relaxed 0.25":   {Surrogate: "relaxed", Temperature: 0.25},
		"default (0.05)": {},
	}
	rej := map[string]int{}
	ess := map[string]float64{}
	for tr := range trials {
		s := sampler.NewSamples(n, m.Dim())
		truth.Sample(s.Z, rng.New(uint64(tr), rng.StreamSample))
		for name, set := range settings {
			res, err := GFKSD(context.Background(), m, s, set, Options{B: b, Seed: uint64(tr)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Reject {
				rej[name]++
			}
			ess[name] += res.ESS / trials
		}
	}
	se := math.Sqrt(alpha * (1 - alpha) / trials)
	for name := range settings {
		t.Logf("%-15s rejects a true model in %.2f of %d trials (weight ESS %.1f of %d)", name, float64(rej[name])/trials, trials, ess[name], n)
	}
	if r := float64(rej["default (0.05)"]) / trials; math.Abs(r-alpha) > 3*se {
		t.Errorf("default GF-KSD rejects a true RBM at rate %.2f, want %.2f ± %.3f", r, alpha, 3*se)
	}
}
