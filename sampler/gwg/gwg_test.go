package gwg

import (
	"context"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/sampler/samplertest"
	"github.com/dstein/dstein/transform"
)

// The chains' marginals after enough sweeps match exact enumeration within
// 5 standard errors, sqrt(p(1−p)/n) over n independent chains (final states
// of independent chains are independent draws once the chains have mixed).
func TestMarginalsMatchExact(t *testing.T) {
	for name, m := range samplertest.SmallModels(t) {
		tr, err := transform.ForModel(transform.Normal{}, m)
		if err != nil {
			t.Fatal(err)
		}
		s, err := newS(m, tr, 4000, Settings{}, 3)
		if err != nil {
			t.Fatal(err)
		}
		for range 30 {
			if err := s.Step(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		samplertest.CheckMarginals(t, name, m, samples(s), 0)
		t.Logf("%s: acceptance rate %.2f", name, acceptance(s))
	}
}

func TestSameSeedSameSamples(t *testing.T) {
	m, err := ising.Grid(3, 3, true, 0.3, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := transform.ForModel(transform.Normal{}, m)
	run := func() []int {
		s, err := newS(m, tr, 50, Settings{}, 9)
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			if err := s.Step(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		return samples(s).Z
	}
	a, b := run(), run()
	for k := range a {
		if a[k] != b[k] {
			t.Fatal("the same seed gave different samples")
		}
	}
}

// plain hides the relaxed form.
type plain struct{ model.Model }

// A model without a relaxed form is sampled with its log conditionals as
// the proposals' gradient (samplertest's plain-potts checks the draws).
func TestAcceptsModelWithoutRelaxedForm(t *testing.T) {
	m, _ := ising.Grid(2, 2, false, 0.3, nil)
	tr, _ := transform.ForModel(transform.Normal{}, m)
	if _, err := newS(plain{m}, tr, 10, Settings{}, 1); err != nil {
		t.Errorf("a model without a relaxed form was refused: %v", err)
	}
}

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
