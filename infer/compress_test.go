package infer

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// A compressed run keeps the draws' diagnostics and returns n points, each
// one of the draws, whose means and marginals are the points' own; without
// the compression the same key gives the same draws.
func TestRunCompressesTheDraws(t *testing.T) {
	g := grid4(t)
	p, _, err := Pipeline("compact")
	if err != nil {
		t.Fatal(err)
	}
	const n = 30
	spec := SpecFor("compact", p, n, rng.NewKey(5))
	if spec.Compress.N != n || spec.Compress.Rule != RuleHerding || spec.N != CompactChains.Chains {
		t.Fatalf("compact spec: %+v", spec)
	}
	if want := (n*CompactChains.PerPoint + spec.N - 1) / spec.N; spec.Keep.Draws != want {
		t.Fatalf("%d draws per chain, want %d", spec.Keep.Draws, want)
	}
	out, err := Run(context.Background(), g, spec)
	if err != nil {
		t.Fatal(err)
	}
	plain := spec
	plain.Compress = Compression{}
	draws, err := Run(context.Background(), g, plain)
	if err != nil {
		t.Fatal(err)
	}
	c := out.Compressed
	if c == nil || out.Samples.N != n || c.Candidates != draws.Samples.N || c.Ell != 4 {
		t.Fatalf("compressed %+v, %d samples, from %d draws", c, out.Samples.N, draws.Samples.N)
	}
	if out.Diagnostics.Quantity("log_p").Mean != draws.Diagnostics.Quantity("log_p").Mean {
		t.Error("the compressed run's diagnostics are not those of its draws")
	}
	rows := map[string]bool{}
	for r := range draws.Samples.N {
		rows[key(draws.Samples.Row(r))] = true
	}
	d := g.Dim()
	mean := make([]float64, d)
	for r := range n {
		row := out.Samples.Row(r)
		if !rows[key(row)] {
			t.Fatalf("point %d is not one of the draws", r)
		}
		for i, z := range row {
			mean[i] += g.States(i)[z] / n
		}
	}
	var gap float64
	for i := range d {
		if math.Abs(mean[i]-out.Means[i]) > 1e-12 {
			t.Fatalf("mean %d: %g, the points' is %g", i, out.Means[i], mean[i])
		}
		gap = max(gap, math.Abs(out.Means[i]-draws.Means[i]))
	}
	if math.Abs(gap-c.MaxMeanGap) > 1e-12 {
		t.Errorf("max mean gap %g, want %g", c.MaxMeanGap, gap)
	}
	// Herding reproduces the draws' means far better than n of them
	// would: its gap is below the largest standard error of a mean of n
	// independent draws (1/√n ≈ 0.18 for ±1 spins).
	if gap > 1/math.Sqrt(n) {
		t.Errorf("the points' means are %g from the draws', more than 1/√n", gap)
	}
	if Memory(g, spec) <= Memory(g, plain) {
		t.Error("the memory estimate ignores the compression")
	}
	again, err := Run(context.Background(), g, spec)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.Samples.Z, out.Samples.Z) {
		t.Error("the same key gave other points")
	}
}

func key(z []int) string {
	b := make([]byte, len(z))
	for i, v := range z {
		b[i] = byte(v)
	}
	return string(b)
}

// Compressions that cannot run are refused before the run.
func TestCompressionValidate(t *testing.T) {
	g := grid4(t)
	p, _ := sampler.Single("gibbs", nil, 1)
	for _, c := range []struct {
		c    Compression
		want string
	}{
		{Compression{Rule: "herd", N: 5}, "unknown compression rule"},
		{Compression{Rule: RuleHerding}, "at least 1"},
		{Compression{Rule: RuleStein, N: 5, Ell: -1}, "bandwidth"},
		{Compression{Rule: RuleStein, N: 5, Ell: math.Inf(1)}, "bandwidth"},
		{Compression{Rule: RuleStein, N: 5, Reweight: true}, "before herding"},
	} {
		_, err := Run(context.Background(), g, Spec{Pipeline: p, N: 4, Key: rng.NewKey(1), Keep: Keep{Draws: 10}, Compress: c.c})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want %q", c.c, err, c.want)
		}
	}
	// Stein weights on more draws than their kernel matrix takes are
	// refused before the run, not after it.
	big := Spec{Pipeline: p, N: 4, Key: rng.NewKey(1), Keep: Keep{Draws: 1000}, Compress: Compression{Rule: RuleHerding, N: 5, Reweight: true}}
	if _, err := big.Plan(); err == nil || !strings.Contains(err.Error(), "at most 3000 draws") {
		t.Errorf("4000 draws with Stein weights: %v", err)
	}
	// Stein thinning and reweighted herding run as stages too.
	for _, c := range []Compression{{Rule: RuleStein, N: 8}, {Rule: RuleHerding, N: 8, Reweight: true}} {
		out, err := Run(context.Background(), g, Spec{Pipeline: p, N: 4, Key: rng.NewKey(1), Keep: Keep{Draws: 50}, Compress: c})
		if err != nil || out.Samples.N != 8 || (c.Reweight && !(out.Compressed.WeightsESS > 0)) {
			t.Fatalf("%+v: %v", c, err)
		}
		if c.Reweight {
			// The weighted marginals are distributions.
			// and the gap is measured to the weighted means, which the
			// points stand for.
			var gap float64
			for i, mg := range out.Compressed.WeightedMarginals {
				if tot := mg[0] + mg[1]; math.Abs(tot-1) > 1e-9 || len(out.Compressed.WeightedMeans) != g.Dim() {
					t.Fatalf("weighted marginal %d sums to %g", i, tot)
				}
				gap = max(gap, math.Abs(out.Means[i]-out.Compressed.WeightedMeans[i]))
			}
			if gap != out.Compressed.MaxMeanGap {
				t.Errorf("max mean gap %g; the points are %g from the weighted means", out.Compressed.MaxMeanGap, gap)
			}
		}
	}
}
