package model

import (
	"math"
	"slices"
)

// ProposalGradient is a model that gives gradient-guided samplers
// (Gibbs-with-Gradients, DMALA) the gradient their proposals use, instead of
// the gradient of its relaxation.
//
// Those samplers estimate the change of log p* when variable i moves from
// z_i to s as Δ̃(i, s) = g[i, s] − g[i, z_i], with g a gradient at z's
// one-hot memberships. For the estimate to be good, g must be the gradient
// of an extension of log p* that is linear in each variable's block of
// memberships (the energy of the Gibbs-with-Gradients and DMALA papers and
// of the DISCS benchmark). A relaxation that is not (the multilinear
// extension log Σ_a φ(a) Π m of a categorical model or a factor graph, whose
// gradient at a one-hot state is a ratio of probabilities, not a log-ratio)
// makes very poor proposals; such a model implements ProposalGradient with
// the gradient of its log-multilinear energy
//
//	E(m) = Σ_f Σ_a log φ_f(a) Π_{v∈S_f} m_{v,a_v}
//
// (products of zero memberships skipped, so that no 0 · (−Inf) appears),
// whose block of variable i at a one-hot z is Σ_{f∋i} log φ_f(z with
// z_i = s): log p*(z with z_i = s) up to a constant. The estimate is then
// the exact change of log p*.
//
// The contract: at every z of positive probability, every entry of
// ProposalGrad is finite or −Inf (never NaN or +Inf), the current state's
// entry g[i, z_i] is finite, and g[i, s] − g[i, z_i] equals
// log p*(z with z_i = s) − log p*(z) up to rounding (−Inf where that state
// has probability zero, so that a sampler gives the move weight zero). At a
// state of probability zero (a chain's start) the entries are still finite
// or −Inf with every current entry finite: a factor that is zero at z
// contributes nothing (as in the relaxation's gradient), so that Δ̃ is
// never NaN.
type ProposalGradient interface {
	Model
	// ProposalGrad writes the proposal gradient at z into grad (laid out
	// like the memberships, Offsets) and returns grad. It reads z but
	// leaves it unchanged, and must be safe for concurrent use.
	ProposalGrad(grad []float64, z []int) []float64
}

// ProposalIncremental is a ProposalGradient model with its own fast tracker
// of the proposal gradient.
type ProposalIncremental interface {
	ProposalGradient
	// NewProposalTracker returns a tracker of the proposal gradient at a
	// copy of z: a GradientTracker whose Grad and tried gradients equal
	// ProposalGrad (rather than RelaxedLogProb's gradient), with the same
	// contract otherwise.
	NewProposalTracker(z []int) GradientTracker
}

// NewProposalTracker returns a tracker of the proposal gradient of m (the
// gradient that Gibbs-with-Gradients' proposals use) at a copy of z, a
// GradientTracker whose Grad is, in order of preference:
//
//   - ProposalGrad, tracked by the model's own tracker (ProposalIncremental)
//     or by a generic one that evaluates ProposalGrad whole
//     (ProposalGradient; every variable counts as changed by a Try);
//   - the gradient of RelaxedLogProb at the one-hot memberships, as
//     NewGradientTracker tracks it (a Relaxed model: the Ising model, whose
//     relaxation is linear in each spin, and the RBM, whose relaxation gives
//     the first-order estimate of the Gibbs-with-Gradients paper);
//   - otherwise the log conditionals of a Tracker (NewTracker): block i is
//     LogConditional(i), log p*(z with z_i = s) up to a constant, which gives
//     the same estimate as a block-linear energy. A block whose current
//     entry is −Inf (z has probability zero) is written as zeros, so that
//     the estimate is never NaN. Every variable counts as changed by a Try.
func NewProposalTracker(m Model, z []int) GradientTracker {
	switch pm := m.(type) {
	case ProposalIncremental:
		return pm.NewProposalTracker(z)
	case ProposalGradient:
		t := &genericTracker{m: m, z: slices.Clone(z)}
		return newWholeTracker(m, t, func(grad []float64) { pm.ProposalGrad(grad, t.z) })
	case Relaxed:
		return NewGradientTracker(pm, z)
	}
	t, off := NewTracker(m, z), Offsets(m)
	return newWholeTracker(m, t, func(grad []float64) { condBlocks(t, off, grad) })
}

// ProposalGrads evaluates a model's proposal gradient (see
// NewProposalTracker) at whole configurations, for samplers that move every
// variable at once (DMALA). It is not safe for concurrent use; make one per
// chain.
type ProposalGrads struct {
	pg  ProposalGradient
	r   Relaxed
	t   Tracker
	off []int
	mem []float64 // one-hot memberships (Relaxed)
}

// NewProposalGrads returns an evaluator of m's proposal gradient.
func NewProposalGrads(m Model) *ProposalGrads {
	p := &ProposalGrads{off: Offsets(m)}
	switch pm := m.(type) {
	case ProposalGradient:
		p.pg = pm
	case Relaxed:
		p.r = pm
		p.mem = make([]float64, p.off[len(p.off)-1])
	default:
		p.t = NewTracker(m, make([]int, m.Dim()))
	}
	return p
}

// Grad writes the proposal gradient at z into grad (laid out like the
// memberships) and returns grad. For a Relaxed model that is not a
// ProposalGradient it is RelaxedLogProb's gradient at z's one-hot
// memberships, bit for bit.
func (p *ProposalGrads) Grad(grad []float64, z []int) []float64 {
	switch {
	case p.pg != nil:
		return p.pg.ProposalGrad(grad, z)
	case p.r != nil:
		clear(p.mem)
		for i, s := range z {
			p.mem[p.off[i]+s] = 1
		}
		p.r.RelaxedLogProb(grad, p.mem)
		return grad
	}
	p.t.Reset(z)
	condBlocks(p.t, p.off, grad)
	return grad
}

// condBlocks writes the log conditionals of every variable at t's state
// into grad, a block of zeros where the current state's entry is −Inf.
func condBlocks(t Tracker, off []int, grad []float64) {
	z := t.State()
	for i := range z {
		b := grad[off[i]:off[i+1]]
		c := t.LogConditional(b[:0:len(b)], i)
		if len(c) > 0 && &c[0] != &b[0] {
			copy(b, c)
		}
		if math.IsInf(b[z[i]], -1) {
			clear(b)
		}
	}
}

// wholeTracker tracks a gradient that fill evaluates whole at the state
// of the Tracker t: a Try moves t, fills the gradient at the tried
// configuration and moves t back, and every variable counts as changed.
type wholeTracker struct {
	t      Tracker // the configuration and DeltaLogProb
	fill   func(grad []float64)
	g, g2  []float64 // gradient at t's state and at the tried configuration
	all    []int     // 0, 1, …, d−1
	ti, ts int       // the pending Try (ti < 0: none)
}

func newWholeTracker(m Model, t Tracker, fill func(grad []float64)) *wholeTracker {
	off := Offsets(m)
	f := off[len(off)-1]
	w := &wholeTracker{t: t, fill: fill, g: make([]float64, f), g2: make([]float64, f), all: make([]int, m.Dim()), ti: -1}
	for i := range w.all {
		w.all[i] = i
	}
	w.fill(w.g)
	return w
}

func (w *wholeTracker) State() []int                  { return w.t.State() }
func (w *wholeTracker) Grad() []float64               { return w.g }
func (w *wholeTracker) DeltaLogProb(i, s int) float64 { return w.t.DeltaLogProb(i, s) }

func (w *wholeTracker) Try(i, s int) ([]int, []float64) {
	old := w.t.State()[i]
	w.t.Set(i, s)
	w.fill(w.g2)
	w.t.Set(i, old)
	w.ti, w.ts = i, s
	return w.all, w.g2
}

func (w *wholeTracker) Commit() {
	if w.ti < 0 {
		panic("model: GradientTracker.Commit without a pending Try")
	}
	w.t.Set(w.ti, w.ts)
	w.g, w.g2 = w.g2, w.g
	w.ti = -1
}

func (w *wholeTracker) Reset(z []int) {
	w.t.Reset(z)
	w.fill(w.g)
	w.ti = -1
}
