package sw

import (
	"math"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/transform"
)

// One update of 100 chains on the experiments' 10×10 grid (coupling 0.1)
// and at the critical coupling of the square lattice (about 0.44), where
// clusters span the grid; and on a 10×10 3-state Potts grid at its
// critical coupling log(1 + √3), with and without per-state fields. (samplertest.BenchSteps also times an RBM, which
// sw does not sample.)
func BenchmarkUpdate(b *testing.B) {
	jc := math.Log(1 + math.Sqrt(3))
	fields := make([]float64, 300)
	for i := range 100 {
		fields[3*i+i%3] = 0.1
	}
	for _, c := range []struct {
		name   string
		j      float64
		q      int
		fields []float64
	}{{"ising-10x10", 0.1, 2, nil}, {"ising-10x10-J=0.44", 0.44, 2, nil}, {"potts3-10x10-Jc", jc, 3, nil}, {"potts3-10x10-Jc-fields", jc, 3, fields}} {
		b.Run(c.name, func(b *testing.B) {
			var m model.Model
			var err error
			if c.q == 2 {
				m, err = ising.Grid(10, 10, false, c.j, nil)
			} else {
				m, err = potts.Grid(10, 10, false, c.q, c.j, c.fields)
			}
			if err != nil {
				b.Fatal(err)
			}
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
