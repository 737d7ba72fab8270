package compress_test

import (
	"context"
	"math"
	"testing"

	"github.com/dstein/dstein/compress"
	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	_ "github.com/dstein/dstein/sampler/all"
)

// plusFraction returns the fraction of the points with positive
// magnetisation.
func plusFraction(m model.Model, s *sampler.Samples) float64 {
	plus := 0
	for i := range s.N {
		var mag float64
		for l := range s.D {
			mag += m.States(l)[s.Z[i*s.D+l]]
		}
		if mag > 0 {
			plus++
		}
	}
	return float64(plus) / float64(s.N)
}

// TestMeasurePTHerding measures a lead for issue 16 (not a check): the
// draws of 4 parallel-tempering chains (500 warm-up rounds, 1000 draws
// each, thinned by 2: 80,000 sweeps) compressed to n = 100 points by
// herding (ℓ = d/4), with and without Stein weights, against n exact
// draws and against thinning the same chains, on the suite's weakly
// coupled 4×4 grid and its two-mode grid (J = 0.8, fields 0.015), 20
// seeds. go test ./compress -run MeasurePT -v -args -compress.measure
// (a few minutes).
func TestMeasurePTHerding(t *testing.T) {
	if !*measure {
		t.Skip("a measurement, not a check: -args -compress.measure")
	}
	for _, tc := range []struct {
		name string
		j, h float64
	}{{"grid4-weak", 0.3, 0}, {"grid4-strong", 0.8, 0.015}} {
		f := make([]float64, 16)
		r := rng.NewKey(1).For(rng.Model).Rand()
		for i := range f {
			f[i] = tc.h
			if tc.h == 0 {
				f[i] = -0.3 + 0.6*r.Float64()
			}
		}
		g, _ := ising.Grid(4, 4, false, tc.j, f)
		e, _ := exact.NewEnumerated(g, 0)
		pairs, _ := exact.PairsFor(context.Background(), g, memlimit.Budget{})
		means := e.Result().Means
		errs := func(s *sampler.Samples) (float64, float64, float64) {
			mse, pr := errors(g, s, means, pairs)
			return mse, pr, plusFraction(g, s)
		}
		const n, seeds = 100, 20
		type acc struct{ m, p, mode, mode2 float64 }
		res := map[string]*acc{}
		add := func(k string, s *sampler.Samples) {
			a, b, c := errs(s)
			if res[k] == nil {
				res[k] = &acc{}
			}
			res[k].m += a / seeds
			res[k].p += b / seeds
			res[k].mode += c / seeds
			res[k].mode2 += c * c / seeds
		}
		for seed := range uint64(seeds) {
			p, _ := sampler.Single("pt", nil, 1)
			out, err := infer.Run(context.Background(), g, infer.Spec{Pipeline: p, N: 4, Key: rng.NewKey(seed + 1), Keep: infer.Keep{Warmup: 500, Draws: 1000, Thin: 2}})
			if err != nil {
				t.Fatal(err)
			}
			c := out.Samples
			// iid reference
			iid := sampler.NewSamples(n, 16)
			rr := rng.NewKey(seed + 100).Rand()
			for i := range n {
				e.Sample(iid.Z[i*16:(i+1)*16], rr)
			}
			add("iid", iid)
			// thinning of the chain: every 40th draw
			th := sampler.NewSamples(n, 16)
			for i := range n {
				copy(th.Z[i*16:(i+1)*16], c.Z[(i*c.N/n)*16:(i*c.N/n+1)*16])
			}
			add("pt thinned", th)
			h, _ := compress.Herd(context.Background(), c, nil, n, compress.Options{})
			add("pt + herd", h.Points)
			w, err := compress.SteinWeights(context.Background(), g, c, compress.Options{}, 3000)
			if err == nil {
				hw, _ := compress.Herd(context.Background(), c, w.W, n, compress.Options{})
				add("pt + weights + herd", hw.Points)
			}
		}
		plus, err := exact.ModeMass(context.Background(), g, memlimit.Budget{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: exact P(M > 0) %.3f", tc.name, plus)
		for _, k := range []string{"iid", "pt thinned", "pt + herd", "pt + weights + herd"} {
			a := res[k]
			if a == nil {
				continue
			}
			sd := math.Sqrt(a.mode2 - a.mode*a.mode)
			t.Logf("  %-22s MSE of the means %.3g (%.2f× i.i.d.), pair RMSE %.3g (%.2f×), P(M > 0) %.3f (sd over seeds %.3f)", k, a.m, a.m/res["iid"].m, a.p, a.p/res["iid"].p, a.mode, sd)
		}
	}
}
