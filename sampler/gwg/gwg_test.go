package gwg

import (
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
		s, err := New(m, tr, 4000, Settings{}, 3)
		if err != nil {
			t.Fatal(err)
		}
		for range 30 {
			if err := s.Step(); err != nil {
				t.Fatal(err)
			}
		}
		samplertest.CheckMarginals(t, name, m, s.Samples(), 0)
		t.Logf("%s: acceptance rate %.2f", name, s.AcceptanceRate())
	}
}

func TestSameSeedSameSamples(t *testing.T) {
	m, err := ising.Grid(3, 3, true, 0.3, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := transform.ForModel(transform.Normal{}, m)
	run := func() []int {
		s, err := New(m, tr, 50, Settings{}, 9)
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			if err := s.Step(); err != nil {
				t.Fatal(err)
			}
		}
		return s.Samples().Z
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

func TestNeedsRelaxedForm(t *testing.T) {
	m, _ := ising.Grid(2, 2, false, 0.3, nil)
	tr, _ := transform.ForModel(transform.Normal{}, m)
	if _, err := New(plain{m}, tr, 10, Settings{}, 1); err == nil {
		t.Error("a model without a relaxed form was accepted")
	}
}
