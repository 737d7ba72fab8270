package transform

import (
	"math"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/rng"
)

// TestRowMembershipsMatchPointwise checks that the row evaluation (the
// exponentials of all cuts taken together) writes the same bits as
// Memberships coordinate by coordinate: for binary, many-state and
// one-state variables, a variable with a state without a bin (bins not in
// state order), several temperatures, and arguments from 0 to far beyond
// the range where the exponentials underflow.
func TestRowMembershipsMatchPointwise(t *testing.T) {
	ca, err := categorical.New([]categorical.Variable{
		{States: []float64{-1, 1}, Probs: []float64{0.3, 0.7}},
		{States: []float64{1, 2, 3, 4, 5}, Probs: []float64{0.2, 0.2, 0.2, 0.2, 0.2}},
		{States: []float64{-1, 0, 1}, Probs: []float64{0.25, 0, 0.75}},
		{States: []float64{7}, Probs: []float64{1}},
		{States: []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Probs: []float64{1. / 36, 2. / 36, 3. / 36, 4. / 36, 5. / 36, 6. / 36, 5. / 36, 4. / 36, 3. / 36, 2. / 36, 1. / 36}},
		{States: []float64{5, 6}, Probs: []float64{0.5, 0.5}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ForModel(nil, ca)
	if err != nil {
		t.Fatal(err)
	}
	off := model.Offsets(ca)
	k := off[len(off)-1]
	r := rng.Key{Seed: 9, Stream: 0}.Rand()
	scales := []float64{0, 1e-300, 1e-3, 0.3, 1, 3, 30, 300, 1e5}
	for _, tau := range []float64{0.01, 0.25, 1, 7} {
		s, err := NewRelaxed(tr, ca, tau)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float64, ca.Dim())
		mem, dmem := make([]float64, k), make([]float64, k)
		wm, wd := make([]float64, k), make([]float64, k)
		for trial := range 3000 {
			sc := scales[trial%len(scales)]
			for i := range x {
				x[i] = sc * r.NormFloat64()
			}
			if trial%17 == 0 {
				x[trial%len(x)] = 0 // exactly on a cut of the symmetric variables
			}
			for i := range mem {
				mem[i], dmem[i] = math.NaN(), math.NaN() // no stale entry may survive
			}
			s.memberships(mem, dmem, x)
			for i, v := range x {
				s.Memberships(wm[off[i]:off[i+1]], wd[off[i]:off[i+1]], i, v)
			}
			for j := range wm {
				if math.Float64bits(mem[j]) != math.Float64bits(wm[j]) || math.Float64bits(dmem[j]) != math.Float64bits(wd[j]) {
					t.Fatalf("τ = %v, x = %v: entry %d is (%v, %v) in a row, (%v, %v) pointwise", tau, x, j, mem[j], dmem[j], wm[j], wd[j])
				}
			}
		}
	}
}
