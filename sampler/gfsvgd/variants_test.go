package gfsvgd

import (
	"math"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/internal/numeric"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/transform"
)

func TestNewSettingsValidate(t *testing.T) {
	good := []Settings{
		{},
		{Kernel: Coordinatewise},
		{WeightPower: 0.3, WeightAnneal: 100},
		{WeightPower: 1, Weights: Rank},
		{Sweeps: 3},
		{Sweeps: 3, Stratified: true, SweepSeed: 7},
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
		{WeightPower: 0.5, Weights: Rank},
		{Sweeps: -1},
		{Stratified: true},
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
	set := Settings{Kernel: Coordinatewise, WeightPower: 0.5}
	s, err := New(m, tr, rho, n, set, rng.New(3, 0))
	if err != nil {
		t.Fatal(err)
	}
	x := append([]float64(nil), s.Particles()...)
	if err := s.Step(); err != nil {
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
	b, _ := run(t, m, true, 50, 40, Settings{Kernel: Coordinatewise}, 5)
	for k, v := range a.Particles() {
		if w := b.Particles()[k]; math.Abs(v-w) > 1e-9*(1+math.Abs(v)) {
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
	for k, v := range a.Particles() {
		if b.Particles()[k] != v {
			t.Fatalf("WeightPower 1 changed particle value %d: %v vs %v", k, v, b.Particles()[k])
		}
	}
	// Tempering raises the weights' ESS.
	c, _ := run(t, g, true, 30, 20, Settings{WeightPower: 0.1}, 2)
	if c.Last().WeightESS <= a.Last().WeightESS {
		t.Errorf("ESS with β = 0.1 is %v; untempered %v", c.Last().WeightESS, a.Last().WeightESS)
	}
}

// Results with sweeps are deterministic, finite states, and leave the
// particles alone.
func TestSweepsDeterministic(t *testing.T) {
	m, _ := rbm.Random(12, 4, 0.5, 1, 3)
	for _, strat := range []bool{false, true} {
		set := Settings{Sweeps: 3, Stratified: strat}
		s1, r1 := run(t, m, true, 40, 10, set, 4)
		x := append([]float64(nil), s1.Particles()...)
		r1b, err := s1.Result()
		if err != nil {
			t.Fatal(err)
		}
		_, r2 := run(t, m, true, 40, 10, set, 4)
		_, plain := run(t, m, true, 40, 10, Settings{}, 4)
		same := true
		for k, v := range r1.Samples.Z {
			if v != r1b.Samples.Z[k] || v != r2.Samples.Z[k] {
				t.Fatalf("stratified %v: state %d differs between results of one seed", strat, k)
			}
			if v < 0 || v > 1 {
				t.Fatalf("state %d is %d", k, v)
			}
			same = same && v == plain.Samples.Z[k]
		}
		if same {
			t.Errorf("stratified %v: sweeps changed no state", strat)
		}
		for k, v := range s1.Particles() {
			if v != x[k] {
				t.Fatalf("Result moved particle value %d", k)
			}
		}
	}
}

// With one two-state variable every particle has the same conditional p,
// so a stratified sweep puts ⌊np⌋ or ⌈np⌉ particles in the first state.
func TestStratifiedSweepCounts(t *testing.T) {
	for _, p := range []float64{0.137, 0.5, 0.91} {
		m, _ := categorical.New([]categorical.Variable{{States: []float64{0, 1}, Probs: []float64{p, 1 - p}}})
		tr, _ := transform.ForModel(nil, m)
		for seed := range uint64(20) {
			n := 37
			s, err := New(m, tr, transform.BaseSurrogate{T: tr}, n, Settings{Sweeps: 1, Stratified: true}, rng.New(seed, 0))
			if err != nil {
				t.Fatal(err)
			}
			res, _ := s.Result()
			c := 0
			for _, v := range res.Samples.Z {
				if v == 0 {
					c++
				}
			}
			if f := float64(n) * p; float64(c) < math.Floor(f) || float64(c) > math.Ceil(f) {
				t.Fatalf("p = %v, seed %d: %d of %d particles in state 0; want ⌊%v⌋ or ⌈%v⌉", p, seed, c, n, f, f)
			}
		}
	}
}

// Sweeps draw from exact conditionals: from a poor start (no transport at
// all) a few sweeps give means within 2.5 i.i.d. standard errors, and the
// stratified ones at least as close as i.i.d. sampling on average over
// seeds.
func TestSweepsMeansAgreeWithEnumeration(t *testing.T) {
	r := rng.New(11, rng.StreamModel)
	fields := make([]float64, 16)
	for i := range fields {
		fields[i] = -0.3 + 0.6*r.Float64()
	}
	g, err := ising.Grid(4, 4, false, 0.3, fields)
	if err != nil {
		t.Fatal(err)
	}
	meansCheck(t, "ising 4×4, 500 its + 5 sweeps", g, true, Settings{Sweeps: 5})
	meansCheck(t, "ising 4×4, 500 its + 5 stratified sweeps", g, true, Settings{Sweeps: 5, Stratified: true})
	b, err := rbm.Random(10, 4, 0.5, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []model.Model{g, b} {
		ex, err := exact.Enumerate(m, 0)
		if err != nil {
			t.Fatal(err)
		}
		const n, seeds = 100, 20
		var iid, mse float64
		for _, mu := range ex.Means {
			iid += (1 - mu*mu) / n // ±1 variables
		}
		iid /= float64(m.Dim())
		for seed := range uint64(seeds) {
			_, res := run(t, m, true, n, 0, Settings{Sweeps: 10, Stratified: true, InitMean: -2}, seed)
			got := sampler.Means(m, sampler.Marginals(m, res.Samples))
			for i := range got {
				mse += (got[i] - ex.Means[i]) * (got[i] - ex.Means[i]) / float64(m.Dim()*seeds)
			}
		}
		t.Logf("%d variables: MSE of the means after 10 stratified sweeps %.2e; i.i.d. %.2e", m.Dim(), mse, iid)
		if mse > iid {
			t.Errorf("%d variables: MSE %v above the i.i.d. MSE %v", m.Dim(), mse, iid)
		}
	}
}
