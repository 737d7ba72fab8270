package dlmc

import (
	"context"
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
