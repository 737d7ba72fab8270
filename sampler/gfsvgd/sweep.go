package gfsvgd

import (
	"math"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
)

// sweep applies s.set.Sweeps single-site Gibbs sweeps (variables 0..d−1
// in order) to the n states in z (row-major n×d), in place. Each update of
// a particle draws from the model's exact conditional; with Stratified the
// uniforms of one variable's updates across the particles form one
// systematic sample, taken in a fresh random order of the particles. The
// result depends only on z and the settings.
func (s *Sampler) sweep(z []int) {
	n, d := s.n, s.d
	r := rng.New(s.set.SweepSeed, rng.StreamSample)
	tr := make([]model.Tracker, n)
	for j := range n {
		tr[j] = model.NewTracker(s.m, z[j*d:(j+1)*d])
	}
	kmax := 0
	for q := range d {
		kmax = max(kmax, len(s.m.States(q)))
	}
	prob := make([]float64, n*kmax)
	buf := make([]float64, kmax)
	order := make([]int, n)
	for j := range order {
		order[j] = j
	}
	for range s.set.Sweeps {
		for q := range d {
			k := len(s.m.States(q))
			for j := range n {
				lp := tr[j].LogConditional(buf[:0], q)
				normalize(prob[j*kmax:j*kmax+k], lp)
			}
			var v, c float64
			if s.set.Stratified {
				r.Shuffle(n, func(a, b int) { order[a], order[b] = order[b], order[a] })
				v = r.Float64()
			}
			for _, j := range order {
				p := prob[j*kmax : j*kmax+k]
				var u float64
				if s.set.Stratified {
					// Chain j takes state 0 when [c+v, c+v+p_0) holds an
					// integer: u = 1 − frac(c+v) is uniform on (0, 1].
					f := c + v
					u = 1 - (f - math.Floor(f))
					c += p[0]
				} else {
					u = r.Float64()
				}
				tr[j].Set(q, pick(p, u))
			}
		}
	}
	for j := range n {
		copy(z[j*d:(j+1)*d], tr[j].State())
	}
}

// normalize writes the probabilities exp(lp)/Σ exp(lp) into p; when every
// entry is −Inf it writes the uniform distribution.
func normalize(p, lp []float64) {
	m := math.Inf(-1)
	for _, v := range lp {
		m = max(m, v)
	}
	if math.IsInf(m, -1) {
		for i := range p {
			p[i] = 1 / float64(len(p))
		}
		return
	}
	var t float64
	for i, v := range lp {
		p[i] = math.Exp(v - m)
		t += p[i]
	}
	for i := range p {
		p[i] /= t
	}
}

// pick returns the state whose cumulative interval holds u ∈ [0, 1]:
// the smallest s with u < Σ_{t≤s} p_t, or the last state of positive
// probability.
func pick(p []float64, u float64) int {
	var c float64
	last := 0
	for s, v := range p {
		if v <= 0 {
			continue
		}
		c += v
		last = s
		if u < c {
			return s
		}
	}
	return last
}
