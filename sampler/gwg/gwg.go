// Package gwg implements Gibbs-with-Gradients (Grathwohl et al. 2021) for
// discrete models with a relaxed form: n independent Metropolis–Hastings
// chains whose single-site proposals are drawn in proportion to
// exp(Δ̃/2), where Δ̃ estimates the change of log p* of every move from the
// gradient of the model's relaxation at the current one-hot memberships.
//
// A move sets variable i to another state s'. With g the gradient of the
// relaxed log-probability with respect to the memberships at the current
// state z, Δ̃(i, s') = g[i, s'] − g[i, z_i]. The Ising model's relaxation is
// linear in each variable's memberships, so there Δ̃ is the exact change and
// the proposal is a locally balanced one (Zanella 2020); for the other models
// it is a first-order estimate. The acceptance probability uses the exact change of log p* (model.Delta) and
// the reverse proposal at the proposed state, so the chains leave p*
// invariant whatever the estimate's quality.
//
// A Step is one sweep: d proposals per chain, so that a step costs about as
// many moves as one Gibbs sweep. Chains run in parallel, each with its own
// random stream, so results do not depend on the number of cores.
package gwg

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dstein/dstein/internal/numeric"
	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/transform"
)

// Settings configure the sampler. The zero value is valid.
type Settings struct {
	// InitMean and InitStd give the initial draw x ~ N(InitMean, InitStd²)
	// whose Γ(x) starts the chains, as for Gibbs. Defaults 0 and 1.
	InitMean, InitStd float64
}

// Sampler is the state of n chains. It is not safe for concurrent use.
type Sampler struct {
	m      model.Relaxed
	delta  model.Delta
	off    []int
	n, d   int
	chains []chain
	sweeps int
	err    error
}

type chain struct {
	z        []int
	mem, g   []float64 // one-hot memberships and the gradient at z
	mem2, g2 []float64 // the same at the proposed state
	logits   []float64 // Δ̃/2 of every move from z; −Inf for the current states
	logits2  []float64 // the same from the proposed state
	lse      float64   // log normaliser of logits
	r        *rand.Rand
	accepted int64
	evals    int64
	err      error
}

// New starts n chains on m at Γ of the initial draw of seed (the draw
// GF-SVGD and Gibbs make from the same seed).
func New(m model.Model, t *transform.Transform, n int, set Settings, seed uint64) (*Sampler, error) {
	rm, ok := m.(model.Relaxed)
	if !ok {
		return nil, fmt.Errorf("gwg: the model has no relaxed form, so there is no gradient to guide the proposals")
	}
	if n < 1 {
		return nil, fmt.Errorf("gwg: need at least one chain, got %d", n)
	}
	if t.Dim() != m.Dim() {
		return nil, fmt.Errorf("gwg: model has %d variables but the transform has %d", m.Dim(), t.Dim())
	}
	if set.InitStd == 0 {
		set.InitStd = 1
	}
	if math.IsNaN(set.InitMean) || math.IsInf(set.InitMean, 0) || !(set.InitStd > 0) || math.IsInf(set.InitStd, 0) {
		return nil, fmt.Errorf("gwg: initial draw N(%v, %v²) is not valid", set.InitMean, set.InitStd)
	}
	d := m.Dim()
	x := sampler.InitialParticles(nil, n, d, set.InitMean, set.InitStd, rng.New(seed, rng.StreamInit))
	s := &Sampler{m: rm, off: model.Offsets(m), n: n, d: d, chains: make([]chain, n)}
	s.delta, _ = m.(model.Delta)
	f := s.off[d]
	for c := range s.chains {
		ch := &s.chains[c]
		ch.z = t.Gamma(nil, x[c*d:(c+1)*d])
		ch.mem, ch.g = make([]float64, f), make([]float64, f)
		ch.mem2, ch.g2 = make([]float64, f), make([]float64, f)
		ch.logits, ch.logits2 = make([]float64, f), make([]float64, f)
		ch.r = rng.New(seed, rng.Trial(rng.StreamSample, c))
		for i, st := range ch.z {
			ch.mem[s.off[i]+st] = 1
		}
		s.m.RelaxedLogProb(ch.g, ch.mem)
		ch.lse = s.fill(ch.logits, ch.g, ch.z)
		ch.evals++
	}
	return s, nil
}

// Step runs one sweep (d proposals) of every chain.
func (s *Sampler) Step() error {
	if s.err != nil {
		return s.err
	}
	parallel.For(s.n, 1, s)
	for c := range s.chains {
		if err := s.chains[c].err; err != nil {
			s.err = fmt.Errorf("gwg: chain %d: %w", c, err)
			return s.err
		}
	}
	s.sweeps++
	return nil
}

// Do advances chains [lo, hi) by one sweep (a parallel task).
func (s *Sampler) Do(lo, hi int) {
	for c := lo; c < hi; c++ {
		ch := &s.chains[c]
		for range s.d {
			if ch.err != nil {
				break
			}
			s.propose(ch)
		}
	}
}

// fill writes the proposal logits Δ̃/2 of every move from the state z with
// gradient g into logits and returns their log normaliser.
func (s *Sampler) fill(logits, g []float64, z []int) float64 {
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
func (s *Sampler) propose(ch *chain) {
	lse := ch.lse
	if math.IsInf(lse, -1) {
		return // no move has positive proposal probability (all variables have one state)
	}
	if math.IsNaN(lse) || math.IsInf(lse, 1) {
		ch.err = fmt.Errorf("proposal weights are %v", lse)
		return
	}
	// Draw a move by inverting the cumulative weights.
	u := ch.r.Float64()
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
	old, next := ch.z[i], k-s.off[i]
	logFwd := ch.logits[k] - lse
	var dlp float64
	if s.delta != nil {
		dlp = s.delta.DeltaLogProb(ch.z, i, next)
	} else {
		before := s.m.LogProb(ch.z)
		ch.z[i] = next
		dlp = s.m.LogProb(ch.z) - before
		ch.z[i] = old
	}
	ch.evals++
	if math.IsNaN(dlp) {
		ch.err = fmt.Errorf("log p* change is NaN")
		return
	}
	if math.IsInf(dlp, -1) {
		return // into an impossible state: rejected
	}
	// The reverse move from the proposed state.
	copy(ch.mem2, ch.mem)
	ch.mem2[s.off[i]+old], ch.mem2[k] = 0, 1
	s.m.RelaxedLogProb(ch.g2, ch.mem2)
	ch.evals++
	ch.z[i] = next
	lseRev := s.fill(ch.logits2, ch.g2, ch.z)
	logRev := ch.logits2[s.off[i]+old] - lseRev
	logA := dlp + logRev - logFwd
	if math.IsNaN(logA) {
		ch.z[i] = old
		ch.err = fmt.Errorf("acceptance ratio is NaN")
		return
	}
	if logA >= 0 || math.Log(ch.r.Float64()) < logA {
		ch.mem, ch.mem2 = ch.mem2, ch.mem
		ch.g, ch.g2 = ch.g2, ch.g
		ch.logits, ch.logits2 = ch.logits2, ch.logits
		ch.lse = lseRev
		ch.accepted++
		return
	}
	ch.z[i] = old
}

// Samples returns a copy of the chains' current states.
func (s *Sampler) Samples() *sampler.Samples {
	out := sampler.NewSamples(s.n, s.d)
	for c := range s.chains {
		copy(out.Row(c), s.chains[c].z)
	}
	return out
}

// Sweeps returns the number of completed sweeps.
func (s *Sampler) Sweeps() int { return s.sweeps }

// Evaluations returns the number of model evaluations so far: one relaxed
// log-probability with its gradient and one exact log p* change per
// proposal.
func (s *Sampler) Evaluations() int64 {
	var e int64
	for c := range s.chains {
		e += s.chains[c].evals
	}
	return e
}

// AcceptanceRate returns the fraction of accepted proposals so far.
func (s *Sampler) AcceptanceRate() float64 {
	var a int64
	for c := range s.chains {
		a += s.chains[c].accepted
	}
	if s.sweeps == 0 {
		return 0
	}
	return float64(a) / float64(int64(s.sweeps)*int64(s.n)*int64(s.d))
}
