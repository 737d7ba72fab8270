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

// TestPairRowsMatchPointwise checks the vector kernels of the leading run
// of two-state coordinates (pairRows, where the CPU has AVX-512) against
// Memberships bit for bit, and against rowMemberships with the kernels
// switched off: runs of 8·9 + 5 two-state coordinates (blocks of 64, a
// group of eight and a tail left to the scalar loop) with cuts at several
// places, followed by a three-state and a two-state coordinate outside the
// run; arguments at every scale from 0 to beyond the exponentials'
// underflow, on the cuts, and infinite.
func TestPairRowsMatchPointwise(t *testing.T) {
	var vars []categorical.Variable
	pairs := [][]float64{{-1, 1}, {0, 1}, {5, 6}, {-3, 2.5}}
	for i := range 77 {
		vars = append(vars, categorical.Variable{States: pairs[i%len(pairs)], Probs: []float64{0.4, 0.6}})
	}
	vars = append(vars,
		categorical.Variable{States: []float64{-1, 0, 1}, Probs: []float64{0.2, 0.3, 0.5}},
		categorical.Variable{States: []float64{-1, 1}, Probs: []float64{0.5, 0.5}})
	ca, err := categorical.New(vars)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ForModel(nil, ca)
	if err != nil {
		t.Fatal(err)
	}
	off := model.Offsets(ca)
	k := off[len(off)-1]
	r := rng.Key{Seed: 11, Stream: 0}.Rand()
	scales := []float64{0, 1e-300, 1e-3, 0.3, 1, 3, 30, 300, 1e5}
	for _, tau := range []float64{0.01, 0.25, 1, 7} {
		s, err := NewRelaxed(tr, ca, tau)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.pairCuts) != 77 {
			t.Fatalf("the run of two-state coordinates has %d coordinates; want 77", len(tr.pairCuts))
		}
		x := make([]float64, ca.Dim())
		mem, dmem := make([]float64, k), make([]float64, k)
		sm, sd := make([]float64, k), make([]float64, k)
		wm, wd := make([]float64, k), make([]float64, k)
		for trial := range 2000 {
			sc := scales[trial%len(scales)]
			for i := range x {
				x[i] = sc * r.NormFloat64()
			}
			switch trial % 13 {
			case 0:
				x[trial%len(x)] = tr.cuts[trial%len(x)][0] // on a cut
			case 1:
				x[trial%64] = math.Inf(1)
				x[(trial+1)%64] = math.Inf(-1)
			}
			for i := range mem {
				mem[i], dmem[i] = math.NaN(), math.NaN()
			}
			s.memberships(mem, dmem, x)
			func() {
				old := usePairs
				usePairs = false
				defer func() { usePairs = old }()
				s.memberships(sm, sd, x)
			}()
			for i, v := range x {
				s.Memberships(wm[off[i]:off[i+1]], wd[off[i]:off[i+1]], i, v)
			}
			for j := range wm {
				for _, c := range [][2][2]float64{{{mem[j], dmem[j]}, {wm[j], wd[j]}}, {{sm[j], sd[j]}, {wm[j], wd[j]}}} {
					if math.Float64bits(c[0][0]) != math.Float64bits(c[1][0]) || math.Float64bits(c[0][1]) != math.Float64bits(c[1][1]) {
						t.Fatalf("τ = %v, trial %d: entry %d (coordinate %d) is (%v, %v) in a row, (%v, %v) pointwise (usePairs %v)", tau, trial, j, j/2, c[0][0], c[0][1], c[1][0], c[1][1], usePairs)
					}
				}
			}
		}
	}
	if !usePairs {
		t.Log("no AVX-512 here: only the scalar path was checked")
	}
}
