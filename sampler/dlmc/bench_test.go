package dlmc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/samplertest"
	"github.com/dstein/dstein/transform"
)

// One step (one parallel proposal per chain) of 100 chains.
func BenchmarkStep(b *testing.B) {
	samplertest.BenchSteps(b, func(m model.Model, t *transform.Transform) (sampler.Sampler, error) {
		return newS(m, t, 100, Settings{}, 1)
	})
}

// One step of 100 chains on the multi-state targets of
// samplertest.MultiStateTargets (200 categorical variables of 4 states; a
// 3-state Potts model on a 3×3 torus), at the default step size and at
// h = 10, where the kernel squares its matrices.
func BenchmarkStepMultiState(b *testing.B) {
	for _, tg := range samplertest.MultiStateTargets(b) {
		for _, h := range []float64{0, 10} {
			name := tg.Name + "/default"
			if h > 0 {
				name = tg.Name + "/h=10"
			}
			b.Run(name, func(b *testing.B) {
				tr, err := transform.ForModel(transform.Normal{}, tg.Model)
				if err != nil {
					b.Fatal(err)
				}
				s, err := newS(tg.Model, tr, 100, Settings{StepSize: h}, 1)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				ctx := context.Background()
				for b.Loop() {
					if err := s.Step(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// One step of 100 chains on DISCS's categorical target (2000 independent
// variables of 4 states, logits N(0, 1.5²); samplertest.CategoricalTarget)
// at h = 1 and at h = 10⁹, the step size that the adaptation reaches on it
// (every proposal of independent variables is accepted).
func BenchmarkStepCategorical(b *testing.B) {
	tg := samplertest.CategoricalTarget(b, 2000)
	for _, c := range []struct {
		bal Balance
		h   float64
	}{{Sqrt, 1}, {Sqrt, 1e9}, {Ratio, 1}, {Ratio, 1e9}} {
		b.Run(fmt.Sprintf("%v/h=%g", c.bal, c.h), func(b *testing.B) {
			tr, err := transform.ForModel(transform.Normal{}, tg.Model)
			if err != nil {
				b.Fatal(err)
			}
			s, err := newS(tg.Model, tr, 100, Settings{StepSize: c.h, Balance: c.bal}, 1)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				if err := s.Step(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// One row of transition probabilities of a variable of 4 states, logits
// N(0, 1.5²) (64 variables in turn, from each state), at step sizes from
// the default to 10⁹: the kernel's cost per variable and chain.
func BenchmarkRow(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const q, vars = 4, 64
	ells := make([]float64, q*vars)
	for j := range ells {
		ells[j] = 1.5 * r.NormFloat64()
	}
	k := newKernel(q)
	logq, pr := make([]float64, q), make([]float64, q)
	for _, bal := range []Balance{Sqrt, Ratio} {
		for _, h := range []float64{0.15, 1, 10, 100, 1e9} {
			b.Run(fmt.Sprintf("%v/h=%g", bal, h), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					v := i % vars
					if err := k.row(logq, pr, ells[v*q:(v+1)*q], (i/vars)%q, h, bal); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}
