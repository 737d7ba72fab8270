package pas

import (
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/transform"
)

// newS starts n chains at Γ of the N(0, 1) initial draw of seed.
func newS(m model.Model, tr *transform.Transform, n int, set Settings, seed uint64) (*Sampler, error) {
	return New(sampler.NewProblem(m, tr, n, sampler.Init{}, rng.NewKey(seed)), set)
}

func samples(s *Sampler) *sampler.Samples {
	return &sampler.Samples{N: s.n, D: s.d, Z: append([]int(nil), s.Current()...)}
}

func acceptance(s *Sampler) float64 {
	a, _ := s.Stats().Value("acceptance_rate")
	return a
}
