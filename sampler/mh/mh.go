package mh

import (
	"fmt"
	"math/rand/v2"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
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

// Start checks the problem of sampler pkg and returns its model, the
// membership offsets (model.Offsets) and n = p.N chains at the states p.Z;
// chain c draws from p.Key.ForIndex(rng.Sample, c). Any model will do: the
// proposals' gradient is, in order of preference, its ProposalGradient, its
// relaxation's gradient or its log conditionals (model.NewProposalTracker).
func Start(pkg string, p *sampler.Problem) (model.Model, []int, []Chain, error) {
	if err := p.Check(); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", pkg, err)
	}
	rm := p.Model
	d := p.Model.Dim()
	off := model.Offsets(p.Model)
	cs := make([]Chain, p.N)
	for c := range cs {
		ch := &cs[c]
		ch.Z = append([]int(nil), p.Z[c*d:(c+1)*d]...)
		ch.Mem = make([]float64, off[d])
		for i, st := range ch.Z {
			ch.Mem[off[i]+st] = 1
		}
		ch.R = p.Key.ForIndex(rng.Sample, c).Rand()
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

// Current copies the chains' current states into dst (n×d) and returns it.
func (s Set) Current(dst []int, d int) []int {
	for c, ch := range s {
		copy(dst[c*d:(c+1)*d], ch.Z)
	}
	return dst
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
