package samplertest

import (
	"fmt"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	_ "github.com/dstein/dstein/sampler/all"
	"github.com/dstein/dstein/transform"
)

type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.errors = append(r.errors, fmt.Sprintf(f, a...)) }

// CheckMarginals accepts exact draws and rejects draws that all sit in one
// state.
func TestCheckMarginalsCanFail(t *testing.T) {
	for name, m := range SmallModels(t) {
		truth, err := exact.NewEnumerated(m, 1<<12)
		if err != nil {
			t.Fatal(err)
		}
		good := sampler.NewSamples(4000, m.Dim())
		truth.Sample(good.Z, rng.NewKey(1).For(rng.Sample).Rand())
		r := &recorder{TB: t}
		CheckMarginals(r, name, m, good, 0)
		if len(r.errors) > 0 {
			t.Errorf("%s: exact draws rejected: %v", name, r.errors)
		}
		bad := sampler.NewSamples(4000, m.Dim()) // every variable in its first state
		r = &recorder{TB: t}
		CheckMarginals(r, name, m, bad, 0)
		if len(r.errors) == 0 {
			t.Errorf("%s: draws all in one state accepted", name)
		}
	}
}

// Every registered method that claims exact draws (all but the
// approximate ones) converges to the exact marginals on every small model
// it supports (a relaxed form where it needs one; a method with declared
// needs may refuse other models with an error from New, and those pairs
// are skipped): 2000 chains, the method's default settings and default
// number of iterations (which a method must choose large enough to mix on
// models this small); tolerance as in CheckMarginals (5 binomial SE plus
// slack 0.002 for residual bias).
func TestEveryMethodMatchesExact(t *testing.T) {
	for _, meth := range sampler.Methods() {
		if meth.Approximate {
			continue
		}
		for name, m := range SmallModels(t) {
			if meth.Needs == "a relaxed form" {
				if _, ok := m.(model.Relaxed); !ok {
					continue
				}
			}
			t.Run(meth.Name+"/"+name, func(t *testing.T) {
				if err := refuses(meth, m); err != nil {
					t.Skipf("%s needs %s: %v", meth.Name, meth.Needs, err)
				}
				s := Run(t, meth.Name, nil, m, 2000, -1, 7)
				worst := CheckMarginals(t, meth.Name+" on "+name, m, s, 0.002)
				t.Logf("%s on %s: largest error %.1f SE", meth.Name, name, worst)
			})
		}
	}
}

// refuses returns the error with which a method that declares needs
// (Method.Needs) refuses a model when it is built, or nil; methods without
// needs must accept every model.
func refuses(meth *sampler.Method, m model.Model) error {
	if meth.Needs == "" {
		return nil
	}
	tr, err := transform.ForModel(transform.Normal{}, m)
	if err != nil {
		return nil // Run reports it
	}
	_, err = meth.New(sampler.NewProblem(m, tr, 1, sampler.Init{}, rng.NewKey(1)), meth.NewSettings())
	return err
}
