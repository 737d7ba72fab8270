package samplertest

import (
	"fmt"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
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
