package exact

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/dstein/dstein/model"
)

// Truth is exact ground truth for one model: its normaliser, marginals and
// means, and independent exact samples.
type Truth interface {
	// Result returns log Z, the marginals and the means. The caller must not
	// modify it.
	Result() *Result
	// Sample fills dst (length a multiple of d) with independent exact
	// samples, row-major state indices, drawing randomness from r only.
	Sample(dst []int, r *rand.Rand)
}

// Enumerated is the ground truth of a small model by enumeration of every
// joint state: it keeps the cumulative distribution over states to sample
// from.
type Enumerated struct {
	m   model.Model
	res *Result
	cdf []float64 // cumulative probability of the states in odometer order
	k   []int
}

var _ Truth = (*Enumerated)(nil)

// NewEnumerated is Enumerate with sampling: it refuses more than maxStates
// joint states (DefaultMaxStates when maxStates ≤ 0).
func NewEnumerated(m model.Model, maxStates int) (*Enumerated, error) {
	res, err := Enumerate(m, maxStates)
	if err != nil {
		return nil, err
	}
	d := m.Dim()
	k := make([]int, d)
	for i := range k {
		k[i] = len(m.States(i))
	}
	n := model.StateCount(m)
	cdf := make([]float64, n)
	z := make([]int, d)
	var acc float64
	for idx := range n {
		lp := m.LogProb(z)
		if !math.IsInf(lp, -1) {
			acc += math.Exp(lp - res.LogZ)
		}
		cdf[idx] = acc
		for i := d - 1; i >= 0; i-- {
			z[i]++
			if z[i] < k[i] {
				break
			}
			z[i] = 0
		}
	}
	return &Enumerated{m: m, res: res, cdf: cdf, k: k}, nil
}

// Result returns the exact answers.
func (e *Enumerated) Result() *Result { return e.res }

// Sample draws states by inverting the cumulative distribution.
func (e *Enumerated) Sample(dst []int, r *rand.Rand) {
	d := len(e.k)
	if len(dst)%d != 0 {
		panic(fmt.Sprintf("exact: sample buffer of length %d for dimension %d", len(dst), d))
	}
	total := e.cdf[len(e.cdf)-1]
	for o := 0; o < len(dst); o += d {
		u := r.Float64() * total
		idx := sort.SearchFloat64s(e.cdf, u)
		// SearchFloat64s finds the first cdf ≥ u; a zero-probability state
		// has the same cdf as its predecessor, so move past ties with u.
		for idx < len(e.cdf)-1 && e.cdf[idx] <= u {
			idx++
		}
		for i := d - 1; i >= 0; i-- {
			dst[o+i] = idx % e.k[i]
			idx /= e.k[i]
		}
	}
}
