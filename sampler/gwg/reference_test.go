package gwg

// This file keeps the previous implementation of the sampler, which
// recomputes the whole proposal gradient (model.ProposalGrads) and the
// proposal's normaliser for every proposal, as the oracle of the incremental one: the tests run both
// from the same key and compare their draws, and the benchmarks time both
// under the same load.

import (
	"context"
	"fmt"
	"math"

	"github.com/dstein/dstein/internal/numeric"
	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/mh"
)

// refSampler is the state of n chains. It is not safe for concurrent use.
type refSampler struct {
	m      model.Model
	delta  model.Delta
	off    []int
	n, d   int
	chains []refChain
	set    mh.Set
	cur    []int
	sweeps int
	err    error
}

type refChain struct {
	mh.Chain                      // the state Z, stream, counters
	pg       *model.ProposalGrads // the proposal gradient at whole states
	g        []float64            // the gradient at Z
	g2       []float64            // the gradient at the proposed state
	logits   []float64            // Δ̃/2 of every move from Z; −Inf for the current states
	logits2  []float64            // the same from the proposed state
	lse      float64              // log normaliser of logits
}

// newRef starts n = p.N chains at the states p.Z; chain c draws from
// p.Key.ForIndex(rng.Sample, c).
func newRef(p *sampler.Problem) (*refSampler, error) {
	rm, off, base, err := mh.Start("gwg", p)
	if err != nil {
		return nil, err
	}
	m, n, d := p.Model, p.N, p.Model.Dim()
	s := &refSampler{m: rm, off: off, n: n, d: d, chains: make([]refChain, n), set: make(mh.Set, n), cur: make([]int, n*d)}
	s.delta, _ = m.(model.Delta)
	f := off[d]
	for c := range s.chains {
		ch := &s.chains[c]
		ch.Chain = base[c]
		s.set[c] = &ch.Chain
		ch.pg = model.NewProposalGrads(m)
		ch.g, ch.g2 = make([]float64, f), make([]float64, f)
		ch.logits, ch.logits2 = make([]float64, f), make([]float64, f)
		ch.pg.Grad(ch.g, ch.Z)
		ch.lse = s.fill(ch.logits, ch.g, ch.Z)
		ch.Evals++
	}
	return s, nil
}

// Step runs one sweep (d proposals) of every chain.
func (s *refSampler) Step(context.Context) error {
	if s.err != nil {
		return s.err
	}
	parallel.For(s.n, 1, s)
	if s.err = s.set.Err("gwg"); s.err != nil {
		return s.err
	}
	s.sweeps++
	return nil
}

// Do advances chains [lo, hi) by one sweep (a parallel task).
func (s *refSampler) Do(lo, hi int) {
	for c := lo; c < hi; c++ {
		ch := &s.chains[c]
		for range s.d {
			if ch.Err != nil {
				break
			}
			s.propose(ch)
		}
	}
}

// fill writes the proposal logits Δ̃/2 of every move from the state z with
// gradient g into logits and returns their log normaliser.
func (s *refSampler) fill(logits, g []float64, z []int) float64 {
	for i := range s.d {
		a, b := s.off[i], s.off[i+1]
		cur := g[a+z[i]]
		for k := a; k < b; k++ {
			if k == a+z[i] {
				logits[k] = math.Inf(-1)
				continue
			}
			logits[k] = (g[k] - cur) / 2
		}
	}
	return numeric.LogSumExp(logits)
}

// propose makes one Metropolis–Hastings move. The forward logits of the
// current state are kept between proposals: a rejection leaves them valid,
// an acceptance replaces them by the reverse logits it has computed.
func (s *refSampler) propose(ch *refChain) {
	lse := ch.lse
	if math.IsInf(lse, -1) {
		return // no move has positive proposal probability (all variables have one state)
	}
	if math.IsNaN(lse) || math.IsInf(lse, 1) {
		ch.Err = fmt.Errorf("proposal weights are %v", lse)
		return
	}
	// Draw a move by inverting the cumulative weights.
	u := ch.R.Float64()
	k, acc := -1, 0.0
	for j, l := range ch.logits {
		if math.IsInf(l, -1) {
			continue
		}
		acc += math.Exp(l - lse)
		k = j
		if u < acc {
			break
		}
	}
	i := 0
	for s.off[i+1] <= k {
		i++
	}
	old, next := ch.Z[i], k-s.off[i]
	logFwd := ch.logits[k] - lse
	var dlp float64
	if s.delta != nil {
		dlp = s.delta.DeltaLogProb(ch.Z, i, next)
	} else {
		before := s.m.LogProb(ch.Z)
		ch.Z[i] = next
		dlp = s.m.LogProb(ch.Z) - before
		ch.Z[i] = old
	}
	ch.Evals++
	if math.IsNaN(dlp) {
		ch.Err = fmt.Errorf("log p* change is NaN")
		return
	}
	if math.IsInf(dlp, -1) {
		return // into an impossible state: rejected
	}
	// The reverse move from the proposed state.
	ch.Z[i] = next
	ch.pg.Grad(ch.g2, ch.Z)
	ch.Evals++
	lseRev := s.fill(ch.logits2, ch.g2, ch.Z)
	logRev := ch.logits2[s.off[i]+old] - lseRev
	logA := dlp + logRev - logFwd
	if math.IsInf(dlp, 1) {
		logA = dlp // out of an impossible state: accepted
	}
	if math.IsNaN(logA) {
		ch.Z[i] = old
		ch.Err = fmt.Errorf("acceptance ratio is NaN")
		return
	}
	if logA >= 0 || math.Log(ch.R.Float64()) < logA {
		ch.g, ch.g2 = ch.g2, ch.g
		ch.logits, ch.logits2 = ch.logits2, ch.logits
		ch.lse = lseRev
		ch.Accepted++
		return
	}
	ch.Z[i] = old
}

// Current returns the chains' current states.
func (s *refSampler) Current() []int { return s.set.Current(s.cur, s.d) }

// Sweeps returns the number of completed sweeps.
func (s *refSampler) Sweeps() int { return s.sweeps }

// Stats reports acceptance_rate, the fraction of accepted proposals so
// far. Evaluations count one proposal gradient and one exact log p* change
// per proposal.
func (s *refSampler) Stats() sampler.Stats {
	return sampler.Stats{Evaluations: s.set.Evaluations(), Values: []sampler.Stat{
		{Name: "acceptance_rate", Value: s.set.AcceptanceRate(int64(s.sweeps) * int64(s.d))},
	}}
}
