//go:build long

package gof

import (
	"context"
	"math"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/model/ising"
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
		"base":         {Surrogate: "base"},
		"relaxed 0.25": {Surrogate: "relaxed", Temperature: 0.25},
		"relaxed 0.05": {Surrogate: "relaxed", Temperature: 0.05},
		"relaxed 0.02": {Surrogate: "relaxed", Temperature: 0.02},
		"relaxed 0.01": {Surrogate: "relaxed", Temperature: 0.01},
		"default":      {},
	}
	rej := map[string]int{}
	ess := map[string]float64{}
	for tr := range trials {
		s := sampler.NewSamples(n, m.Dim())
		truth.Sample(s.Z, rng.NewKey(uint64(tr)).For(rng.Sample).Rand())
		for name, set := range settings {
			res, err := GFKSD(context.Background(), m, s, set, Options{B: b, Key: rng.NewKey(uint64(tr))})
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
	if r := float64(rej["default"]) / trials; math.Abs(r-alpha) > 3*se {
		t.Errorf("default GF-KSD rejects a true RBM at rate %.2f, want %.2f ± %.3f", r, alpha, 3*se)
	}
}

// TestPowerSettingsRBM logs GF-KSD's rejection rate over a grid of
// surrogates, bandwidths and kernels, with DKSD and MMD for comparison, on the
// same RBM with samples drawn exactly from W + ε, ε of N(0, 0.1²) entries
// (fresh per trial), n = 100, 30 trials. It asserts nothing beyond running:
// it is the measurement behind GF-KSD's defaults.
//
//	go test -tags long -run PowerSettingsRBM -v ./gof/
func TestPowerSettingsRBM(t *testing.T) {
	const trials, n, b, sigma = 30, 100, 300, 0.1
	m, err := rbm.Random(50, 25, 1/math.Sqrt(25), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	nullTruth, err := exact.For(m)
	if err != nil {
		t.Fatal(err)
	}
	type setting struct {
		name string
		set  GFKSDSettings
	}
	var sets []setting
	for _, sur := range []struct {
		name string
		s    string
		tau  float64
	}{{"ρ = p0", "base", 0}, {"relaxed τ = 0.02", "relaxed", 0.02}, {"relaxed τ = 0.05", "relaxed", 0.05}, {"relaxed τ = 0.25", "relaxed", 0.25}, {"relaxed τ = 1", "relaxed", 1}} {
		for _, bw := range []struct {
			name string
			bw   kernel.Bandwidth
		}{{"med²/4", kernel.Bandwidth{Rule: kernel.RuleMedian, Scale: 0.25}}, {"med²", kernel.Bandwidth{Rule: kernel.RuleMedian}}, {"4 med²", kernel.Bandwidth{Rule: kernel.RuleMedian, Scale: 4}}} {
			bw := bw.bw
			sets = append(sets, setting{sur.name + ", h = " + bwName(bw), GFKSDSettings{Surrogate: sur.s, Temperature: sur.tau, Bandwidth: &bw}})
		}
		sets = append(sets, setting{sur.name + ", soft kernel", GFKSDSettings{Surrogate: sur.s, Temperature: sur.tau, Kernel: "soft"}})
	}
	rej := make([]int, len(sets)+2)
	ctx := context.Background()
	for tr := range trials {
		alt, err := perturbRBM(m, sigma, uint64(tr))
		if err != nil {
			t.Fatal(err)
		}
		truth, err := exact.For(alt)
		if err != nil {
			t.Fatal(err)
		}
		s := sampler.NewSamples(n, m.Dim())
		truth.Sample(s.Z, rng.NewKey(uint64(tr)).For(rng.Sample).Rand())
		ref := sampler.NewSamples(n, m.Dim())
		nullTruth.Sample(ref.Z, rng.NewKey(uint64(tr)).For(rng.Test).Rand())
		for k, st := range sets {
			res, err := GFKSD(ctx, m, s, st.set, Options{B: b, Key: rng.NewKey(uint64(tr))})
			if err != nil {
				t.Fatal(err)
			}
			if res.Reject {
				rej[k]++
			}
		}
		if res, err := DKSD(ctx, m, s, Options{B: b, Key: rng.NewKey(uint64(tr))}); err != nil {
			t.Fatal(err)
		} else if res.Reject {
			rej[len(sets)]++
		}
		if res, err := MMD(ctx, s, ref, Options{B: b, Key: rng.NewKey(uint64(tr))}); err != nil {
			t.Fatal(err)
		} else if res.Reject {
			rej[len(sets)+1]++
		}
	}
	for k, st := range sets {
		t.Logf("GF-KSD %-36s %.2f", st.name, float64(rej[k])/trials)
	}
	t.Logf("DKSD %38s %.2f", "", float64(rej[len(sets)])/trials)
	t.Logf("MMD %39s %.2f", "", float64(rej[len(sets)+1])/trials)
}

func bwName(b kernel.Bandwidth) string {
	switch b.Scale {
	case 0.25:
		return "med²/4"
	case 4:
		return "4 med²"
	}
	return "med²"
}

// perturbRBM returns the RBM with W + ε, ε of independent N(0, σ²) entries.
func perturbRBM(m *rbm.RBM, sigma float64, seed uint64) (*rbm.RBM, error) {
	g := rng.NewKey(seed).For(rng.Model).Rand()
	w := make([][]float64, m.Dim())
	for i := range w {
		w[i] = make([]float64, m.Hidden())
		for k := range w[i] {
			w[i][k] = m.Weight(i, k) + sigma*g.NormFloat64()
		}
	}
	return rbm.New(w, m.VisibleBias(), m.HiddenBias())
}

// TestLevelBKSDRBM measures BKSD's level on the RBMs of rbm.Random(50, 25,
// 1/√25, 1, seed) at several n, with exact samples from the model itself
// (data set t keyed 1000 + t, B = 1000), for both bootstraps, and logs
// every rate with its standard error (EXPERIMENTS.md, gof-rbm-sigma). It
// requires each rate within 4 standard errors of α (the seed-1 RBM's
// multinomial rate at n = 100 sits 2.3 above: a small excess, said so).
//
//	go test -tags long -run LevelBKSDRBM -v -timeout 30m ./gof/
func TestLevelBKSDRBM(t *testing.T) {
	const alpha = 0.05
	for _, c := range []struct {
		seed      uint64
		n, trials int
		kinds     []Kind
	}{
		{1, 100, 600, []Kind{Multinomial, Rademacher}},
		{1, 50, 400, []Kind{Multinomial}},
		{1, 200, 300, []Kind{Multinomial}},
		{2, 100, 600, []Kind{Multinomial, Rademacher}},
	} {
		m, err := rbm.Random(50, 25, 1/math.Sqrt(25), 1, c.seed)
		if err != nil {
			t.Fatal(err)
		}
		truth, err := exact.For(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range c.kinds {
			rej := 0
			for tr := range c.trials {
				key := rng.NewKey(uint64(1000 + tr))
				s := sampler.NewSamples(c.n, m.Dim())
				truth.Sample(s.Z, key.For(rng.Sample).Rand())
				res, err := BKSD(context.Background(), m, s, Options{Key: key, Bootstrap: kind})
				if err != nil {
					t.Fatal(err)
				}
				if res.Reject {
					rej++
				}
			}
			p := float64(rej) / float64(c.trials)
			se := math.Sqrt(alpha * (1 - alpha) / float64(c.trials))
			t.Logf("RBM seed %d, n = %d, %s bootstrap: %d of %d rejected, %.3f ± %.3f", c.seed, c.n, kind, rej, c.trials, p, math.Sqrt(p*(1-p)/float64(c.trials)))
			if math.Abs(p-alpha) > 4*se {
				t.Errorf("RBM seed %d, n = %d, %s: level %.3f, more than 4 SE (%.3f) from α", c.seed, c.n, kind, p, se)
			}
		}
		if c.seed == 1 && c.n == 100 {
			// DKSD on the same data sets, for comparison (logged only:
			// its level fails on this RBM, as its tail check says).
			rej := 0
			for tr := range c.trials {
				key := rng.NewKey(uint64(1000 + tr))
				s := sampler.NewSamples(c.n, m.Dim())
				truth.Sample(s.Z, key.For(rng.Sample).Rand())
				res, err := DKSD(context.Background(), m, s, Options{Key: key})
				if err != nil {
					t.Fatal(err)
				}
				if res.Reject {
					rej++
				}
			}
			p := float64(rej) / float64(c.trials)
			t.Logf("RBM seed %d, n = %d, DKSD, multinomial bootstrap: %d of %d rejected, %.3f ± %.3f", c.seed, c.n, rej, c.trials, p, math.Sqrt(p*(1-p)/float64(c.trials)))
		}
	}
}

// TestSimulatedLevelStrongField: the simulated null on the 8-spin Ising
// model with strong fields of examples/gof/ising-field8.json (a cycle of
// couplings 0.4, two chords of −0.3, fields 2), n = 100, 600 exact data
// sets, B = 99: BKSD rejects at most α + 3 SE (its bootstrap rejected
// 0.145 of 200 such sets; EXPERIMENTS.md). About a minute on 2 cores.
func TestSimulatedLevelStrongField(t *testing.T) {
	const trials, n, alpha = 600, 100, 0.05
	edges := []ising.Edge{}
	for i := range 8 {
		edges = append(edges, ising.Edge{I: i, J: (i + 1) % 8, Coupling: 0.4})
	}
	edges = append(edges, ising.Edge{I: 0, J: 4, Coupling: -0.3}, ising.Edge{I: 2, J: 6, Coupling: -0.3})
	m, err := ising.New(8, edges, []float64{2, 2, 2, 2, 2, 2, 2, 2})
	if err != nil {
		t.Fatal(err)
	}
	rej := 0
	for tr := range trials {
		s := exactSamples(t, m, n, uint64(90000+tr))
		res, err := BKSD(context.Background(), m, s, Options{B: 99, Key: rng.NewKey(uint64(tr)), Bootstrap: Simulation})
		if err != nil {
			t.Fatal(err)
		}
		if res.Reject {
			rej++
		}
	}
	p := float64(rej) / trials
	se := math.Sqrt(alpha * (1 - alpha) / trials)
	t.Logf("BKSD, simulated null, n = %d: %d of %d rejected, %.3f ± %.3f", n, rej, trials, p, math.Sqrt(p*(1-p)/trials))
	if p > alpha+3*se {
		t.Errorf("rejection rate %.3f; want at most %.3f", p, alpha+3*se)
	}
}
