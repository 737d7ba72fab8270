// Package mhchain holds what the gradient-guided Metropolis–Hastings
// samplers (Gibbs-with-Gradients, DMALA) share: checking their arguments,
// starting n chains at Γ of the initial draw that GF-SVGD and Gibbs make
// from the same seed, and the per-chain state and counters behind their
// samples, evaluation counts and acceptance rates.
package mhchain

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/transform"
)

// Chain is the shared part of one chain: its state, the one-hot
// memberships of that state, its random stream, its counters and the error
// that stopped it.
type Chain struct {
	Z        []int
	Mem      []float64
	R        *rand.Rand
	Accepted int64
	Evals    int64
	Err      error
}

// Start checks the arguments of sampler pkg and returns the model's relaxed
// form, its membership offsets (model.Offsets) and n chains at Γ of the
// initial draw N(initMean, initStd²) of seed (initStd 0 means 1), each with
// its own random stream.
func Start(pkg string, m model.Model, t *transform.Transform, n int, initMean, initStd float64, seed uint64) (model.Relaxed, []int, []Chain, error) {
	rm, ok := m.(model.Relaxed)
	if !ok {
		return nil, nil, nil, fmt.Errorf("%s: the model has no relaxed form, so there is no gradient to guide the proposals", pkg)
	}
	if n < 1 {
		return nil, nil, nil, fmt.Errorf("%s: need at least one chain, got %d", pkg, n)
	}
	if t.Dim() != m.Dim() {
		return nil, nil, nil, fmt.Errorf("%s: model has %d variables but the transform has %d", pkg, m.Dim(), t.Dim())
	}
	if initStd == 0 {
		initStd = 1
	}
	if math.IsNaN(initMean) || math.IsInf(initMean, 0) || !(initStd > 0) || math.IsInf(initStd, 0) {
		return nil, nil, nil, fmt.Errorf("%s: initial draw N(%v, %v²) is not valid", pkg, initMean, initStd)
	}
	d := m.Dim()
	off := model.Offsets(m)
	x := sampler.InitialParticles(nil, n, d, initMean, initStd, rng.New(seed, rng.StreamInit))
	cs := make([]Chain, n)
	for c := range cs {
		ch := &cs[c]
		ch.Z = t.Gamma(nil, x[c*d:(c+1)*d])
		ch.Mem = make([]float64, off[d])
		for i, st := range ch.Z {
			ch.Mem[off[i]+st] = 1
		}
		ch.R = rng.New(seed, rng.Trial(rng.StreamSample, c))
	}
	return rm, off, cs, nil
}

// Set points at the shared part of every chain of a sampler.
type Set []*Chain

// Err returns the first chain's error, wrapped with the sampler's name and
// the chain's index, or nil.
func (s Set) Err(pkg string) error {
	for c, ch := range s {
		if ch.Err != nil {
			return fmt.Errorf("%s: chain %d: %w", pkg, c, ch.Err)
		}
	}
	return nil
}

// Samples returns a copy of the chains' current states.
func (s Set) Samples(d int) *sampler.Samples {
	out := sampler.NewSamples(len(s), d)
	for c, ch := range s {
		copy(out.Row(c), ch.Z)
	}
	return out
}

// Evaluations returns the model evaluations of all chains.
func (s Set) Evaluations() int64 {
	var e int64
	for _, ch := range s {
		e += ch.Evals
	}
	return e
}

// AcceptanceRate returns the fraction of accepted proposals when each
// chain has made perChain proposals (0 before any).
func (s Set) AcceptanceRate(perChain int64) float64 {
	if perChain == 0 {
		return 0
	}
	var a int64
	for _, ch := range s {
		a += ch.Accepted
	}
	return float64(a) / float64(perChain*int64(len(s)))
}
