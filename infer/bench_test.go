package infer

import (
	"context"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// BenchmarkDiagnose times the diagnostics of 4 chains × 1000 draws: every
// quantity's R̂, ESS and MCSE on the 10×10 grid (102 quantities) and on an
// RBM with d = 1000 (1001 quantities).
func BenchmarkDiagnose(b *testing.B) {
	grid, err := ising.Grid(10, 10, false, 0.3, nil)
	if err != nil {
		b.Fatal(err)
	}
	big, err := rbm.Random(1000, 25, 0.05, 1, 7)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		m    model.Model
	}{{"ising-10x10", grid}, {"rbm-d=1000", big}} {
		b.Run(c.name, func(b *testing.B) {
			p, _ := sampler.Single("gibbs", nil, 1)
			out, err := Run(context.Background(), c.m, Spec{Pipeline: p, N: 4, Key: rng.NewKey(1), Keep: Keep{Warmup: 10, Draws: 1000}})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Diagnose(context.Background(), c.m, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkConditionals times the table of conditionals that
// Rao–Blackwellised estimates average, for 4 chains × 1000 draws, on the
// 10×10 grid and on an RBM with d = 1000.
func BenchmarkConditionals(b *testing.B) {
	grid, err := ising.Grid(10, 10, false, 0.3, nil)
	if err != nil {
		b.Fatal(err)
	}
	big, err := rbm.Random(1000, 25, 0.05, 1, 7)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		m    model.Model
	}{{"ising-10x10", grid}, {"rbm-d=1000", big}} {
		b.Run(c.name, func(b *testing.B) {
			p, _ := sampler.Single("gibbs", nil, 1)
			out, err := Run(context.Background(), c.m, Spec{Pipeline: p, N: 4, Key: rng.NewKey(1), Keep: Keep{Warmup: 10, Draws: 1000}, Estimates: Frequencies})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := conditionals(context.Background(), c.m, out.Samples); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
