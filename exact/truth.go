package exact

import (
	"context"
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
	// SampleContext is Sample that looks at ctx as it goes (every few
	// thousand variables drawn) and returns ctx.Err() when it is
	// canceled, with dst partly filled: the samples before some row drawn,
	// whole, and the rest of dst as it was. Uncanceled, it draws exactly
	// what Sample draws.
	SampleContext(ctx context.Context, dst []int, r *rand.Rand) error
}

// pollDraws is the number of variables a sampler draws between two looks
// at its context.
const pollDraws = 1 << 14

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
	return newEnumeratedContext(context.Background(), m, maxStates)
}

// newEnumeratedContext is NewEnumerated that stops with ctx's error when
// ctx is canceled.
func newEnumeratedContext(ctx context.Context, m model.Model, maxStates int) (*Enumerated, error) {
	res, err := enumerateContext(ctx, m, maxStates)
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
		if idx&(pollStates-1) == pollStates-1 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
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
	_ = e.SampleContext(context.Background(), dst, r)
}

// SampleContext is Sample that stops with ctx's error when ctx is
// canceled (see Truth).
func (e *Enumerated) SampleContext(ctx context.Context, dst []int, r *rand.Rand) error {
	d := len(e.k)
	if len(dst)%d != 0 {
		panic(fmt.Sprintf("exact: sample buffer of length %d for dimension %d", len(dst), d))
	}
	total := e.cdf[len(e.cdf)-1]
	work := 0
	for o := 0; o < len(dst); o += d {
		if work += d + 32; work >= pollDraws {
			work = 0
			if err := ctx.Err(); err != nil {
				return err
			}
		}
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
	return nil
}
