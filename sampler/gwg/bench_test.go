package gwg

import (
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/samplertest"
	"github.com/dstein/dstein/transform"
)

// One sweep (d proposals per chain) of 100 chains.
func BenchmarkSweep(b *testing.B) {
	samplertest.BenchSteps(b, func(m model.Model, t *transform.Transform) (sampler.Sampler, error) {
		return newS(m, t, 100, Settings{}, 1)
	})
}
