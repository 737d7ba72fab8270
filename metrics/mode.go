package metrics

import (
	"context"
	"fmt"
	"math"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
)

// ModeMass is the mass of the positive-magnetisation mode of a model with
// ±1 variables, P(M > 0) + ½·P(M = 0) with M = Σ_i z_i (ties count half, so
// that a symmetric model has mass ½): exact (SE = 0), or estimated from an
// exact i.i.d. reference sample with its standard error. A sampler that
// stays in one mode of a symmetric model gets a mass near 0 or 1.
type ModeMass struct {
	// P is the exact mass, or the reference sample's estimate.
	P float64
	// SE is the standard error of P: 0 when exact, else
	// sqrt(Var(Y)/N) of the per-row indicators Y ∈ {0, ½, 1}.
	SE float64
	// N is the size of the reference sample (0 when exact).
	N int
}

// ExactModeMass returns the exact mass by exact.ModeMass (an open Ising
// grid, an RBM with few hidden units, or enumeration); for other models it
// returns exact.ModeMass's error, and the mass must come from
// ReferenceModeMass.
func ExactModeMass(ctx context.Context, m model.Model, budget memlimit.Budget) (ModeMass, error) {
	p, err := exact.ModeMass(ctx, m, budget)
	if err != nil {
		return ModeMass{}, err
	}
	return ModeMass{P: p}, nil
}

// ReferenceModeMass estimates the mass from an exact i.i.d. reference sample
// of m, with its standard error. An empty reference estimates 0 with SE 0.
func ReferenceModeMass(m model.Model, ref *sampler.Samples) (ModeMass, error) {
	p, sq, err := modeIndicators(m, ref)
	if err != nil {
		return ModeMass{}, err
	}
	mm := ModeMass{P: p, N: ref.N}
	if ref.N > 0 {
		mm.SE = math.Sqrt(max(sq-p*p, 0) / float64(ref.N))
	}
	return mm, nil
}

// SampleModeMass returns the sample's estimate of the mass: the mean over
// its rows of 1[M > 0] + ½·1[M = 0]; 0 for an empty sample. It returns an
// error unless every variable of m takes the values −1 and +1.
func SampleModeMass(m model.Model, s *sampler.Samples) (float64, error) {
	p, _, err := modeIndicators(m, s)
	return p, err
}

// Score returns the squared error (p̂ − P)² of the sample's estimate p̂
// (SampleModeMass) against the mass. Against a reference estimate its
// expectation includes SE², the reference's own variance.
func (mm ModeMass) Score(m model.Model, s *sampler.Samples) (float64, error) {
	p, err := SampleModeMass(m, s)
	if err != nil {
		return 0, err
	}
	return (p - mm.P) * (p - mm.P), nil
}

// modeIndicators returns the mean of Y = 1[M > 0] + ½·1[M = 0] over the rows
// and the mean of Y².
func modeIndicators(m model.Model, s *sampler.Samples) (mean, sq float64, err error) {
	if !exact.SpinModel(m) {
		return 0, 0, fmt.Errorf("metrics: the magnetisation mode needs a model whose variables all take the values −1 and +1")
	}
	if s.D != m.Dim() {
		panic(fmt.Sprintf("metrics: samples of dimension %d for a model of dimension %d", s.D, m.Dim()))
	}
	if s.N == 0 {
		return 0, 0, nil
	}
	// M counted in integers: the number of +1 values against −1 ones.
	up := make([]int, m.Dim())
	for i := range up {
		if m.States(i)[1] == 1 {
			up[i] = 1
		}
	}
	var half, pos int
	for r := range s.N {
		mag := 0
		for i, st := range s.Row(r) {
			if st == up[i] {
				mag++
			} else {
				mag--
			}
		}
		switch {
		case mag > 0:
			pos++
		case mag == 0:
			half++
		}
	}
	n := float64(s.N)
	return (float64(pos) + 0.5*float64(half)) / n, (float64(pos) + 0.25*float64(half)) / n, nil
}
