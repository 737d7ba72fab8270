package sw

import (
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/transform"
)

// One update of 100 chains on the experiments' 10×10 grid (coupling 0.1)
// and at the critical coupling of the square lattice (about 0.44), where
// clusters span the grid. (samplertest.BenchSteps also times an RBM, which
// sw does not sample.)
func BenchmarkUpdate(b *testing.B) {
	for _, c := range []struct {
		name string
		j    float64
	}{{"ising-10x10", 0.1}, {"ising-10x10-J=0.44", 0.44}} {
		b.Run(c.name, func(b *testing.B) {
			g, err := ising.Grid(10, 10, false, c.j, nil)
			if err != nil {
				b.Fatal(err)
			}
			var m model.Model = g
			tr, err := transform.ForModel(transform.Normal{}, m)
			if err != nil {
				b.Fatal(err)
			}
			s, err := New(sampler.NewProblem(m, tr, 100, sampler.Init{}, rng.NewKey(1)), Settings{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				s.Step(b.Context())
			}
			b.ReportMetric(float64(100*100*b.N)/b.Elapsed().Seconds()/1e6, "Msites/s")
		})
	}
}
