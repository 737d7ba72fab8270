package transform

import (
	"fmt"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/rng"
)

// BenchmarkMemberships times the soft memberships of one point (what the
// relaxed surrogate computes for every particle at every GF-SVGD
// iteration): d two-state coordinates, with the AVX-512 kernels and with
// the scalar loop (usePairs off), and d four-state ones (the scalar loop
// only).
func BenchmarkMemberships(b *testing.B) {
	for _, c := range []struct {
		states, d int
	}{{2, 100}, {2, 1000}, {4, 100}} {
		vars := make([]categorical.Variable, c.d)
		for i := range vars {
			st, pr := make([]float64, c.states), make([]float64, c.states)
			for k := range st {
				st[k], pr[k] = float64(k), 1/float64(c.states)
			}
			vars[i] = categorical.Variable{States: st, Probs: pr}
		}
		m, err := categorical.New(vars)
		if err != nil {
			b.Fatal(err)
		}
		tr, err := ForModel(nil, m)
		if err != nil {
			b.Fatal(err)
		}
		s, err := NewRelaxed(tr, m, 0)
		if err != nil {
			b.Fatal(err)
		}
		off := model.Offsets(m)
		k := off[len(off)-1]
		x := make([]float64, c.d)
		r := rng.Key{Seed: 3, Stream: 0}.Rand()
		for i := range x {
			x[i] = r.NormFloat64()
		}
		mem, dmem := make([]float64, k), make([]float64, k)
		paths := []bool{false}
		if usePairs && c.states == 2 {
			paths = []bool{true, false}
		}
		for _, vec := range paths {
			name := fmt.Sprintf("states=%d/d=%d/scalar", c.states, c.d)
			if vec {
				name = fmt.Sprintf("states=%d/d=%d/avx512", c.states, c.d)
			}
			b.Run(name, func(b *testing.B) {
				old := usePairs
				usePairs = vec
				defer func() { usePairs = old }()
				for b.Loop() {
					s.memberships(mem, dmem, x)
				}
			})
		}
	}
}
