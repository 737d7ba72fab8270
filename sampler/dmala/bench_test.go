package dmala

import (
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/transform"
)

// One step (one parallel proposal per chain) of 100 chains.
func BenchmarkStep(b *testing.B) {
	grid, err := ising.Grid(10, 10, false, 0.1, nil)
	if err != nil {
		b.Fatal(err)
	}
	r, err := rbm.Random(100, 25, 0.2236, 1, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		m    model.Model
	}{{"ising-10x10", grid}, {"rbm-d=100-M=25", r}} {
		b.Run(c.name, func(b *testing.B) {
			tr, _ := transform.ForModel(transform.Normal{}, c.m)
			s, err := New(c.m, tr, 100, Settings{}, 1)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Step(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
