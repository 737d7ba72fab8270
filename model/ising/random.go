package ising

import (
	"fmt"
	"math"

	"github.com/dstein/dstein/rng"
)

// UniformFields returns n fields drawn independently from U(−a, a), each
// −a + 2a·u for a uniform u of the model stream of seed
// (rng.NewKey(seed).For(rng.Model)). It is the one draw of random fields
// in dstein: model files' "random", the demo's grid and the experiments'
// grids all use it, so a seed names the same fields everywhere.
func UniformFields(n int, a float64, seed uint64) ([]float64, error) {
	if n < 0 {
		return nil, fmt.Errorf("ising: %d fields; want n ≥ 0", n)
	}
	if !(a >= 0) || math.IsInf(a, 0) {
		return nil, fmt.Errorf("ising: random field range %v; want a finite number ≥ 0", a)
	}
	r := rng.NewKey(seed).For(rng.Model).Rand()
	f := make([]float64, n)
	for i := range f {
		f[i] = -a + 2*a*r.Float64()
	}
	return f, nil
}

// RandomGrid returns the open side×side grid with coupling j and fields
// from UniformFields(side², a, seed); a = 0 gives the grid without
// fields.
func RandomGrid(side int, j, a float64, seed uint64) (*Ising, error) {
	if side < 1 {
		return nil, fmt.Errorf("ising grid must have at least one row and one column, got %d×%d", side, side)
	}
	var fields []float64
	if a != 0 {
		var err error
		if fields, err = UniformFields(side*side, a, seed); err != nil {
			return nil, err
		}
	}
	return Grid(side, side, false, j, fields)
}

// SpinGlassGrid returns the open side×side ±J spin glass: every grid edge's
// coupling +j or −j with probability ½ each (an IntN(2) of the model
// stream of seed per edge, in GridEdges' order), no fields.
func SpinGlassGrid(side int, j float64, seed uint64) (*Ising, error) {
	if side < 1 {
		return nil, fmt.Errorf("ising grid must have at least one row and one column, got %d×%d", side, side)
	}
	r := rng.NewKey(seed).For(rng.Model).Rand()
	edges := GridEdges(side, side, false, j)
	for k := range edges {
		if r.IntN(2) == 0 {
			edges[k].Coupling = -j
		}
	}
	return NewGrid(side, side, false, edges, make([]float64, side*side))
}
