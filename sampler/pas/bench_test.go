package pas

import (
	"context"
	"fmt"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/samplertest"
	"github.com/dstein/dstein/transform"
)

// One step (one parallel proposal per chain) of 100 chains, at the
// default path length and at R = 10.
func BenchmarkStep(b *testing.B) {
	for _, r := range []int{0, 10} {
		name := "default"
		if r > 0 {
			name = fmt.Sprintf("R=%d", r)
		}
		b.Run(name, func(b *testing.B) {
			samplertest.BenchSteps(b, func(m model.Model, t *transform.Transform) (sampler.Sampler, error) {
				return newS(m, t, 100, Settings{PathLength: r}, 1)
			})
		})
	}
}

// One step of 100 chains on the multi-state targets of
// samplertest.MultiStateTargets (200 categorical variables of 4 states; a
// 3-state Potts model on a 3×3 torus), at the default path length.
func BenchmarkStepMultiState(b *testing.B) {
	for _, tg := range samplertest.MultiStateTargets(b) {
		b.Run(tg.Name, func(b *testing.B) {
			tr, err := transform.ForModel(transform.Normal{}, tg.Model)
			if err != nil {
				b.Fatal(err)
			}
			s, err := newS(tg.Model, tr, 100, Settings{}, 1)
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
