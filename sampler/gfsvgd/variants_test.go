package gfsvgd

import (
	"context"
	"github.com/dstein/dstein/svgd"
	"math"
	"testing"

	"github.com/dstein/dstein/internal/numeric"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/transform"
)

func TestNewSettingsValidate(t *testing.T) {
	good := []Settings{
		{},
		{Kernel: svgd.Coordinatewise},
		{WeightPower: 0.3, WeightAnneal: 100},
		{WeightPower: 1, Weights: svgd.Rank},
	}
	for _, s := range good {
		if err := s.Validate(); err != nil {
			t.Errorf("%+v rejected: %v", s, err)
		}
	}
	bad := []Settings{
		{Kernel: 7},
		{WeightPower: -0.1},
		{WeightPower: 1.5},
		{WeightPower: math.NaN()},
		{WeightAnneal: -1},
		{WeightPower: 0.5, Weights: svgd.Rank},
	}
	for _, s := range bad {
		if err := s.Validate(); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
}

// The coordinatewise direction against a brute-force sum with per-coordinate
// median bandwidths.
func TestCoordinatewiseDirectionMatchesBruteForce(t *testing.T) {
	m, err := rbm.Random(5, 3, 0.8, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := transform.ForModel(nil, m)
	rho, _ := transform.NewRelaxed(tr, m, 0.7)
	n, d := 9, 5
	set := Settings{Kernel: svgd.Coordinatewise, WeightPower: 0.5}
	s, err := newGF(m, tr, rho, n, set, rng.Key{Seed: 3, Stream: 0}.Rand())
	if err != nil {
		t.Fatal(err)
	}
	x := append([]float64(nil), s.Positions()...)
	if err := s.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	score := make([]float64, n*d)
	logw := make([]float64, n)
	z := make([]int, d)
	for j := range n {
		xj := x[j*d : (j+1)*d]
		lr := rho.LogProbScore(score[j*d:(j+1)*d], xj)
		logw[j] = 0.5 * (lr - tr.LogTarget(m, xj, z))
	}
	w := append([]float64(nil), logw...)
	numeric.NormalizeLogWeights(w)
	for q := range d {
		var d2 []float64
		for i := range n {
			for j := range i {
				e := x[i*d+q] - x[j*d+q]
				d2 = append(d2, e*e)
			}
		}
		med := median(d2)
		h := set.Bandwidth.FromMedian(med, n)
		for i := range n {
			var want float64
			for j := range n {
				e := x[i*d+q] - x[j*d+q]
				k := math.Exp(-e * e / h)
				want += w[j] * k * (score[j*d+q] + 2/h*e)
			}
			if got := s.grad[i*d+q]; math.Abs(got-want) > 1e-10*(1+math.Abs(want)) {
				t.Fatalf("direction[%d][%d] = %v; brute force %v", i, q, got, want)
			}
		}
	}
}

func median(v []float64) float64 {
	c := append([]float64(nil), v...)
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && c[j] < c[j-1]; j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
	return (c[(len(c)-1)/2] + c[len(c)/2]) / 2
}

// In one dimension the coordinatewise kernel is the RBF kernel.
func TestCoordinatewiseIsRBFInOneDimension(t *testing.T) {
	m, _ := categorical.New([]categorical.Variable{paperCategorical})
	a, _ := run(t, m, true, 50, 40, Settings{}, 5)
	b, _ := run(t, m, true, 50, 40, Settings{Kernel: svgd.Coordinatewise}, 5)
	for k, v := range a.Positions() {
		if w := b.Positions()[k]; math.Abs(v-w) > 1e-9*(1+math.Abs(v)) {
			t.Fatalf("particle %d: rbf %v, coordinatewise %v", k, v, w)
		}
	}
}

func TestWeightPowerSchedule(t *testing.T) {
	s := &Sampler{set: Settings{WeightPower: 0.2, WeightAnneal: 10}}
	for _, c := range []struct {
		iter int
		want float64
	}{{0, 0.2}, {5, 0.6}, {10, 1}, {50, 1}} {
		s.iter = c.iter
		if got := s.weightPower(); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("iteration %d: β = %v; want %v", c.iter, got, c.want)
		}
	}
	// β = 1 given explicitly is the default, to the bit.
	g, _ := ising.Grid(3, 3, false, 0.3, []float64{0.1, -0.2, 0.3, 0, 0.1, 0.2, -0.1, 0, 0.2})
	a, _ := run(t, g, true, 30, 20, Settings{}, 2)
	b, _ := run(t, g, true, 30, 20, Settings{WeightPower: 1, WeightAnneal: 5}, 2)
	for k, v := range a.Positions() {
		if b.Positions()[k] != v {
			t.Fatalf("WeightPower 1 changed particle value %d: %v vs %v", k, v, b.Positions()[k])
		}
	}
	// Tempering raises the weights' ESS.
	c, _ := run(t, g, true, 30, 20, Settings{WeightPower: 0.1}, 2)
	if c.Last().WeightESS <= a.Last().WeightESS {
		t.Errorf("ESS with β = 0.1 is %v; untempered %v", c.Last().WeightESS, a.Last().WeightESS)
	}
}
