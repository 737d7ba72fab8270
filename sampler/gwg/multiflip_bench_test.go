package gwg

import (
	"context"
	"fmt"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/balance"
	"github.com/dstein/dstein/sampler/samplertest"
	"github.com/dstein/dstein/transform"
)

// One step (one multi-flip proposal per chain) of 100 chains of gwg-multi
// at the default settings, on the 10×10 Ising grid and the d = 100 RBM.
func BenchmarkMultiStep(b *testing.B) {
	samplertest.BenchSteps(b, func(m model.Model, t *transform.Transform) (sampler.Sampler, error) {
		return NewMulti(sampler.NewProblem(m, t, 100, sampler.Init{}, rng.NewKey(1)), MultiSettings{})
	})
}

// The same with Ratio (a logarithm and an exponential per binary
// variable, where Sqrt takes an exponential), and with K = 1 and K = 30
// flips: K adds K binary searches of the cumulative weights to the
// weights of every variable at the proposed state.
func BenchmarkMultiStepVariants(b *testing.B) {
	for _, set := range []MultiSettings{{Balance: balance.Ratio}, {Flips: 1}, {Flips: 30}} {
		name := fmt.Sprintf("%v/K=%d", set.Balance, set.Resolved().(*MultiSettings).Flips)
		b.Run(name, func(b *testing.B) {
			samplertest.BenchSteps(b, func(m model.Model, t *transform.Transform) (sampler.Sampler, error) {
				return NewMulti(sampler.NewProblem(m, t, 100, sampler.Init{}, rng.NewKey(1)), set)
			})
		})
	}
}

// One step of 100 chains on the multi-state targets of
// samplertest.MultiStateTargets (200 categorical variables of 4 states; a
// 3-state Potts model on a 3×3 torus), at the default settings.
func BenchmarkMultiStepMultiState(b *testing.B) {
	for _, tg := range samplertest.MultiStateTargets(b) {
		b.Run(tg.Name, func(b *testing.B) {
			tr, err := transform.ForModel(transform.Normal{}, tg.Model)
			if err != nil {
				b.Fatal(err)
			}
			s, err := NewMulti(sampler.NewProblem(tg.Model, tr, 100, sampler.Init{}, rng.NewKey(1)), MultiSettings{})
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
