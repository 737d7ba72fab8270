package gibbs

import (
	"context"
	"math"
	"math/rand/v2"

	"github.com/dstein/dstein/model"
)

// stratified holds n chains swept together: for each variable, every
// chain's conditional is computed, and the uniforms of their draws form one
// systematic sample over the chains in a fresh random order.
type stratified struct {
	m     model.Model
	n, d  int
	tr    []model.Tracker
	r     *rand.Rand
	lp    []float64 // n×kmax log conditionals
	kmax  int
	order []int
}

func newStratified(m model.Model, z []int, n int, r *rand.Rand) *stratified {
	d := m.Dim()
	st := &stratified{m: m, n: n, d: d, tr: make([]model.Tracker, n), r: r, order: make([]int, n)}
	for j := range n {
		st.tr[j] = model.NewTracker(m, z[j*d:(j+1)*d])
		st.order[j] = j
	}
	for q := range d {
		st.kmax = max(st.kmax, len(m.States(q)))
	}
	st.lp = make([]float64, n*st.kmax)
	return st
}

// sweep updates variables 0..d−1 of every chain. Chain j, visited at
// position j' of the random order, draws with the uniform
// u = 1 − frac(c + v), where v is one uniform for the variable and c the
// sum of the first-state probabilities of the chains visited before it; so
// the chain takes its first state exactly when [c + v, c + v + p) holds an
// integer, and u is uniform on (0, 1] for each chain alone.
//
// It looks at ctx every pollSites site updates, between variables, and
// returns ctx.Err() when it is canceled, with the variables visited so
// far updated in every chain and the others not.
func (st *stratified) sweep(ctx context.Context) error {
	work := 0
	for q := range st.d {
		if work >= pollSites {
			work = 0
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		work += st.n
		k := len(st.m.States(q))
		for j := range st.n {
			got := st.tr[j].LogConditional(st.lp[j*st.kmax:j*st.kmax], q)
			copy(st.lp[j*st.kmax:j*st.kmax+k], got)
		}
		st.r.Shuffle(st.n, func(a, b int) { st.order[a], st.order[b] = st.order[b], st.order[a] })
		v := st.r.Float64()
		var c float64
		for _, j := range st.order {
			lp := st.lp[j*st.kmax : j*st.kmax+k]
			f := c + v
			u := 1 - (f - math.Floor(f))
			c += firstProb(lp)
			st.tr[j].Set(q, Draw(lp, u))
		}
	}
	return nil
}

func (st *stratified) current(dst []int) []int {
	for j := range st.n {
		copy(dst[j*st.d:(j+1)*st.d], st.tr[j].State())
	}
	return dst
}
