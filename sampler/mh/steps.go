package mh

import (
	"context"

	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/optim"
	"github.com/dstein/dstein/sampler"
)

// Steps is the step loop that the samplers of n chains with an adapted
// proposal size share (DMALA's α, DLMC's h, PAS's path length,
// multi-flip GWG's flips): one proposal in every chain per Step, in
// parallel; the first chain error or a cancellation stops the sampler for
// good; during the first Adapt steps the size follows the recursion Ad
// (optim.Averaged) on the chains' mean acceptance probability, then stays
// fixed.
type Steps struct {
	// Pkg names the sampler in errors.
	Pkg string
	// Set points at every chain's shared part.
	Set Set
	// Adapt is the number of adaptive steps, Ad their recursion.
	Adapt int
	Ad    optim.Averaged
	// Ctx is the context of the Step in progress (Background between
	// steps): the chains' proposals look at it.
	Ctx context.Context
	// Done counts the steps made.
	Done     int
	err      error
	tunedAcc int64 // proposals accepted by all chains when the adaptation ended
}

// Tuning reports whether the proposal size is still being adapted: whether
// the next Step's proposals may use another size than the last Step's.
func (s *Steps) Tuning() bool { return s.Done < s.Adapt }

// Step makes one proposal in every chain: body.Do over the chains [0, n)
// through parallel.For, with Ctx = ctx meanwhile. When ctx is canceled it
// returns ctx.Err(), and from then on; a chain's error likewise, named
// with the chain. During the adaptive steps it moves the recursion by the
// chains' mean acceptance probability accProb(c), summed in chain order
// so that the size, and the draws, do not depend on the number of cores,
// and returns the new value with adapted true (the sampler sets its size
// from it); after the last adaptive step the value is the recursion's
// average, fixed from then on.
func (s *Steps) Step(ctx context.Context, body parallel.Task, accProb func(c int) float64) (value float64, adapted bool, err error) {
	if s.err != nil {
		return 0, false, s.err
	}
	if err := ctx.Err(); err != nil {
		return 0, false, err
	}
	s.Ctx = ctx
	// About four chunks of neighbouring chains a core, not one chain a
	// chunk: a proposal is a few microseconds on small models, and chains
	// side by side in memory stay on one core (BENCHMARKS.md). Each chain
	// draws from its own stream, so the chunks do not change the draws.
	parallel.For(len(s.Set), parallel.Grain(len(s.Set), 1), body)
	s.Ctx = context.Background()
	if err := ctx.Err(); err != nil {
		s.err = err
		return 0, false, err
	}
	if s.err = s.Set.Err(s.Pkg); s.err != nil {
		return 0, false, s.err
	}
	s.Done++
	if s.Done > s.Adapt {
		return 0, false, nil
	}
	var sum float64
	for c := range s.Set {
		sum += accProb(c)
	}
	u, done := s.Ad.Update(s.Done, sum/float64(len(s.Set)))
	if done {
		for _, ch := range s.Set {
			s.tunedAcc += ch.Accepted
		}
	}
	return u, true, nil
}

// Stats returns the chains' evaluations and acceptance_rate, and with
// adaptation the size in use under the name size (adapted, then fixed)
// and tuned_acceptance_rate, the fraction of proposals accepted since the
// adaptation ended (0 until then): the rate of the exact chains.
func (s *Steps) Stats(size string, value float64) sampler.Stats {
	st := sampler.Stats{Evaluations: s.Set.Evaluations(), Values: []sampler.Stat{
		{Name: "acceptance_rate", Value: s.Set.AcceptanceRate(int64(s.Done))},
	}}
	if s.Adapt > 0 {
		var tuned float64
		if after := int64(s.Done - s.Adapt); after > 0 {
			var acc int64
			for _, ch := range s.Set {
				acc += ch.Accepted
			}
			tuned = float64(acc-s.tunedAcc) / (float64(after) * float64(len(s.Set)))
		}
		st.Values = append(st.Values, sampler.Stat{Name: size, Value: value},
			sampler.Stat{Name: "tuned_acceptance_rate", Value: tuned})
	}
	return st
}
