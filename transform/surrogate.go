package transform

import (
	"fmt"
	"math"
	"sync"

	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/internal/vexp"
	"github.com/dstein/dstein/model"
)

// Surrogate is a differentiable density ρ on R^d with its score, used by
// GF-SVGD in place of the non-differentiable p_c. Implementations must be
// safe for concurrent use.
type Surrogate interface {
	// LogProbScore returns log ρ(x) up to an additive constant and writes
	// ∇ log ρ(x) into score (length d). The value is finite or −Inf; the
	// score is finite wherever the value is finite.
	LogProbScore(score, x []float64) float64
}

// BaseSurrogate is ρ = p0, the surrogate that ignores the model.
type BaseSurrogate struct{ T *Transform }

var _ Surrogate = BaseSurrogate{}

// LogProbScore returns log p0(x) and its score.
func (s BaseSurrogate) LogProbScore(score, x []float64) float64 {
	b := s.T.base
	var f float64
	for i, v := range x {
		f += b.LogProb(v)
		score[i] = b.Score(v)
	}
	return f
}

// DefaultTemperature is the temperature of RelaxedSurrogate's logistic steps
// when none is given. At τ = 1 the soft spin of a ±1 variable is the
// paper's σ(x) = 2/(1+e^(−x)) − 1; the default 0.25 is a tighter relaxation
// that gave GF-SVGD several times lower errors on small Ising and RBM models
// (see the README's notes on settings).
const DefaultTemperature = 0.25

// MinMembership floors the soft memberships so that the relaxed
// log-density stays finite far out in the tails, where a logistic step
// underflows.
const MinMembership = 1e-300

// RelaxedSurrogate is ρ(x) = p0(x) · p̃*(m(x)), where m_is(x) is a soft
// membership of x_i in bin s and p̃* is the model's relaxation. The
// membership of bin [η_s, η_{s+1}) is L(x−η_s) − L(x−η_{s+1}) with
// L(u) = 1/(1+e^(−u/τ)), the outer bins using L(±Inf) = 1 or 0, so that the
// memberships are positive, sum to one and tend to the bin indicators as
// τ → 0. For ±1 variables the soft spin m_i+ − m_i− is tanh(x_i/(2τ)).
type RelaxedSurrogate struct {
	*SoftBins
	m    model.Relaxed
	off  []int
	pool sync.Pool
}

// SoftBins computes the soft bin memberships of a transform at temperature
// τ, the smoothing behind RelaxedSurrogate, for any use that needs them
// without a model relaxation (such as a kernel on memberships).
type SoftBins struct {
	t   *Transform
	tau float64
}

// NewSoftBins returns the soft memberships of t at temperature tau
// (DefaultTemperature when tau is 0).
func NewSoftBins(t *Transform, tau float64) (*SoftBins, error) {
	if tau == 0 {
		tau = DefaultTemperature
	}
	if !(tau > 0) || math.IsInf(tau, 1) {
		return nil, fmt.Errorf("surrogate temperature is %v; want a finite number > 0", tau)
	}
	return &SoftBins{t: t, tau: tau}, nil
}

var _ Surrogate = (*RelaxedSurrogate)(nil)

// NewRelaxed returns the relaxed surrogate of m over transform t with
// temperature tau (DefaultTemperature when tau is 0).
func NewRelaxed(t *Transform, m model.Relaxed, tau float64) (*RelaxedSurrogate, error) {
	sb, err := NewSoftBins(t, tau)
	if err != nil {
		return nil, err
	}
	if m.Dim() != t.Dim() {
		return nil, fmt.Errorf("model has %d variables but the transform has %d", m.Dim(), t.Dim())
	}
	for i := range m.Dim() {
		if len(m.States(i)) != t.k[i] {
			return nil, fmt.Errorf("variable %d has %d states but the transform has %d", i, len(m.States(i)), t.k[i])
		}
	}
	off := model.Offsets(m)
	s := &RelaxedSurrogate{SoftBins: sb, m: m, off: off}
	n := off[len(off)-1]
	s.pool.New = func() any { b := make([]float64, 3*n); return &b }
	return s, nil
}

// Temperature returns τ.
func (s *SoftBins) Temperature() float64 { return s.tau }

// step returns L(u) = 1/(1+e^(−u/τ)), 1 − L(u) and L'(u), with each of the
// first two accurate when small.
func (s *SoftBins) step(u float64) (l, lc, dl float64) {
	a := u / s.tau
	// σ(a) and σ(−a) from one exponential, e = exp(−|a|): the same
	// operations numeric.Sigmoid does for each, so the same bits.
	e := math.Exp(-math.Abs(a))
	big, small := 1/(1+e), e/(1+e)
	if a >= 0 {
		l, lc = big, small
	} else {
		l, lc = small, big
	}
	return l, lc, l * lc / s.tau
}

// Memberships writes the soft memberships of coordinate i at x into mem and
// their derivatives with respect to x into dmem (both length K_i, in the
// model's state order). States without a bin have membership 0.
func (s *SoftBins) Memberships(mem, dmem []float64, i int, x float64) {
	cuts := s.t.cuts[i]
	K := len(cuts) + 1
	if s.t.binState[i] != nil {
		clear(mem)
		clear(dmem)
	}
	if K == 1 {
		st := s.t.StateOf(i, 0)
		mem[st], dmem[st] = 1, 0
		return
	}
	// Left edge of bin b: L(x − η_{b}) with L = 1 for b = 0.
	pl, plc, pdl := 1.0, 0.0, 0.0
	for b := range K {
		l, lc, dl := 0.0, 1.0, 0.0 // the step at the right edge of bin b
		if b < K-1 {
			l, lc, dl = s.step(x - cuts[b])
		}
		// membership = pl − l = lc − plc; use the form without cancellation.
		var v float64
		if pl < 0.5 {
			v = pl - l
		} else {
			v = lc - plc
		}
		st := s.t.StateOf(i, b)
		mem[st] = max(v, MinMembership)
		dmem[st] = pdl - dl
		pl, plc, pdl = l, lc, dl
	}
}

// LogProbScore returns log p0(x) + log p̃*(m(x)) and its gradient.
func (s *RelaxedSurrogate) LogProbScore(score, x []float64) float64 {
	bp := s.pool.Get().(*[]float64)
	buf := *bp
	n := s.off[len(s.off)-1]
	mem, dmem, grad := buf[:n], buf[n:2*n], buf[2*n:3*n]
	s.memberships(mem, dmem, x)
	f := s.chain(s.m.RelaxedLogProb(grad, mem), score, x, grad, dmem)
	s.pool.Put(bp)
	return f
}

// memberships writes the soft memberships of every coordinate of x and
// their derivatives (laid out by Offsets).
func (s *RelaxedSurrogate) memberships(mem, dmem, x []float64) {
	s.rowMemberships(mem, dmem, x, s.off)
}

// rowMemberships writes what Memberships writes for every coordinate of x
// into mem and dmem (laid out by off), with the same bits (for arguments
// that are not NaN: a NaN gives NaN memberships either way, though not
// always the same NaN), taking the exponentials of all the steps together
// (vexp.Exp). Where the CPU has AVX-512, the leading run of two-state
// coordinates goes through pairRows. Of the rest, a coordinate whose bins
// are in its states' order first keeps, in its own part of mem and dmem,
// each cut's u/τ and −|u/τ|; the exponentials replace the latter; then
// the bins run in order, each reading its cut's entries before it writes
// its own. Other coordinates go through Memberships.
func (s *SoftBins) rowMemberships(mem, dmem, x []float64, off []int) {
	k := off[len(x)]
	mem, dmem = mem[:k], dmem[:k]
	from := 0 // coordinates [0, from) done by the vector kernels
	if usePairs {
		from = s.pairRows(mem, dmem, x)
	}
	for i := from; i < len(x); i++ {
		v := x[i]
		cuts, a, b := s.t.cuts[i], off[i], off[i+1]
		if !s.batched(i, b-a) {
			clear(dmem[a:b])
			continue
		}
		for c, cut := range cuts {
			z := (v - cut) / s.tau
			mem[a+c], dmem[a+c] = z, -math.Abs(z)
		}
		dmem[b-1] = 0
	}
	vexp.Exp(dmem[off[from]:], dmem[off[from]:])
	for i := from; i < len(x); i++ {
		v := x[i]
		a, b := off[i], off[i+1]
		if !s.batched(i, b-a) {
			s.Memberships(mem[a:b], dmem[a:b], i, v)
			continue
		}
		m, dm := mem[a:b], dmem[a:b]
		if len(m) == 2 {
			// Two states (binary models, the common case): the loop
			// below for its two bins, unrolled, with the same operations.
			// Bin 0 sees pl, plc, pdl = 1, 0, 0, so u = lc − 0 = lc;
			// bin 1 has l, lc, dl = 0, 1, 0, so u is l(bin 0) − 0 or
			// 1 − lc(bin 0), and pdl − 0 = dl. dm[0] keeps the
			// subtraction 0 − dl, which gives +0 where −dl would be −0.
			z, e := m[0], dm[0]
			big, small := 1/(1+e), e/(1+e)
			l, lc := small, big
			if z >= 0 {
				l, lc = big, small
			}
			dl := l * lc / s.tau
			u := 1 - lc
			if l < 0.5 {
				u = l
			}
			m[0], dm[0] = max(lc, MinMembership), 0-dl
			m[1], dm[1] = max(u, MinMembership), dl
			continue
		}
		pl, plc, pdl := 1.0, 0.0, 0.0
		for c := range m {
			l, lc, dl := 0.0, 1.0, 0.0
			if c < len(m)-1 {
				// step's operations on the stored u/τ and exponential.
				z, e := m[c], dm[c]
				big, small := 1/(1+e), e/(1+e)
				if z >= 0 {
					l, lc = big, small
				} else {
					l, lc = small, big
				}
				dl = l * lc / s.tau
			}
			var u float64
			if pl < 0.5 {
				u = pl - l
			} else {
				u = lc - plc
			}
			m[c] = max(u, MinMembership) // the builtin: math.Max's results, inlined
			dm[c] = pdl - dl
			pl, plc, pdl = l, lc, dl
		}
	}
}

// pairRows writes the memberships of the leading run of two-state
// coordinates (Transform's pairCuts) in groups of eight, as
// rowMemberships' two-state branch does, with the AVX-512 kernels on
// blocks of 64 coordinates kept on the stack, and returns the number of
// coordinates done. The offsets of these coordinates are 0, 2, 4, ….
func (s *SoftBins) pairRows(mem, dmem, x []float64) int {
	cut := s.t.pairCuts
	n := len(cut) &^ 7
	if n == 0 {
		return 0
	}
	_, _, _ = x[n-1], mem[2*n-1], dmem[2*n-1]
	var z, e [64]float64
	for i := 0; i < n; i += len(z) {
		b := min(len(z), n-i)
		pairStepsAVX512(&z[0], &e[0], &x[i], &cut[i], s.tau, b/8)
		vexp.Exp(e[:b], e[:b])
		pairMembershipsAVX512(&mem[2*i], &dmem[2*i], &z[0], &e[0], s.tau, MinMembership, b/8)
	}
	return n
}

// batched reports whether rowMemberships handles coordinate i, with k
// states, in place: bins in state order, at least two, one per state.
func (s *SoftBins) batched(i, k int) bool {
	return s.t.binState[i] == nil && k >= 2 && len(s.t.cuts[i])+1 == k
}

// chain returns f + log p0(x) and writes the score: p0's plus the
// relaxation's gradient through the memberships' derivatives.
func (s *RelaxedSurrogate) chain(f float64, score, x, grad, dmem []float64) float64 {
	b := s.t.base
	if nb, ok := b.(Normal); ok {
		// The paper's base, its methods called on the concrete type
		// (inlined) instead of through the interface, twice a coordinate;
		// the leading two-state run (offsets 0, 2, 4, …) unrolled.
		np := min(len(s.t.pairCuts), len(x))
		pg, pd := grad[:2*np], dmem[:2*np]
		for i, v := range x[:np] {
			f += nb.LogProb(v)
			g := nb.Score(v)
			if dm := pd[2*i]; dm != 0 {
				g += pg[2*i] * dm
			}
			if dm := pd[2*i+1]; dm != 0 {
				g += pg[2*i+1] * dm
			}
			score[i] = g
		}
		for i := np; i < len(x); i++ {
			v := x[i]
			f += nb.LogProb(v)
			g := nb.Score(v)
			for k := s.off[i]; k < s.off[i+1]; k++ {
				if dmem[k] != 0 {
					g += grad[k] * dmem[k]
				}
			}
			score[i] = g
		}
		return f
	}
	for i, v := range x {
		f += b.LogProb(v)
		g := b.Score(v)
		for k := s.off[i]; k < s.off[i+1]; k++ {
			if dmem[k] != 0 {
				g += grad[k] * dmem[k]
			}
		}
		score[i] = g
	}
	return f
}

// ByName builds the surrogate named "base" (ρ = p0) or "relaxed" (the
// model's relaxation at temperature tau; 0 means DefaultTemperature) for m
// over t.
func ByName(name string, m model.Model, t *Transform, tau float64) (Surrogate, error) {
	switch name {
	case "base":
		return BaseSurrogate{T: t}, nil
	case "relaxed":
		r, ok := m.(model.Relaxed)
		if !ok {
			return nil, fmt.Errorf("this model has no relaxed form; use the base surrogate")
		}
		return NewRelaxed(t, r, tau)
	}
	return nil, fmt.Errorf("unknown surrogate %q; want base or relaxed", name)
}

// BatchSurrogate is a surrogate that can evaluate many points at once.
type BatchSurrogate interface {
	Surrogate
	// NewBatch returns an evaluator for n points, or nil when the
	// surrogate has no faster way than point by point.
	NewBatch(n int) SurrogateBatch
}

// SurrogateBatch evaluates LogProbScore at n points: lr[j] and row j of
// score (n×d) for row j of x, equal to LogProbScore's up to rounding. Only
// LogProbScoresRows on disjoint ranges is safe for concurrent use.
type SurrogateBatch interface {
	LogProbScores(lr, score, x []float64)
	// LogProbScoresRows evaluates points [lo, hi) alone on the calling
	// goroutine, with LogProbScores's bits; calls on disjoint ranges may
	// run concurrently.
	LogProbScoresRows(lo, hi int, lr, score, x []float64)
	// RowWork is the element operations of one point (see
	// model.LogProbBatcher).
	RowWork() float64
}

var _ BatchSurrogate = (*RelaxedSurrogate)(nil)

// NewBatch returns a batch evaluator when the model relaxes in batches
// (model.RelaxedBatch: an RBM's two matrix products), else nil. It holds
// 24nK bytes of memberships, their derivatives and the gradient (K the
// total number of states) besides the model's own buffers.
func (s *RelaxedSurrogate) NewBatch(n int) SurrogateBatch {
	rb, ok := s.m.(model.RelaxedBatch)
	if !ok {
		return nil
	}
	k := s.off[len(s.off)-1]
	b := &relaxedBatch{s: s, n: n, mb: rb.NewRelaxedBatch(n), mem: make([]float64, n*k), dmem: make([]float64, n*k), grad: make([]float64, n*k)}
	b.task.b = b
	return b
}

type relaxedBatch struct {
	s               *RelaxedSurrogate
	n               int
	mb              model.RelaxedBatcher
	mem, dmem, grad []float64
	task            batchTask
}

// batchTask hands chunks of points to LogProbScoresRows.
type batchTask struct {
	b            *relaxedBatch
	lr, score, x []float64
}

func (t *batchTask) Do(lo, hi int) { t.b.LogProbScoresRows(lo, hi, t.lr, t.score, t.x) }

// RowWork is the element operations of one point: about 30 per state
// for the memberships and the chain rule, and the model's.
func (b *relaxedBatch) RowWork() float64 {
	return 30*float64(b.s.off[len(b.s.off)-1]) + b.mb.RowWork()
}

// LogProbScoresRows evaluates points [lo, hi) on the calling goroutine:
// their memberships, the model's relaxation of their rows alone and the
// chain rule. Calls on disjoint ranges may run concurrently; the bits are
// those of LogProbScores.
func (b *relaxedBatch) LogProbScoresRows(lo, hi int, lr, score, x []float64) {
	if hi <= lo {
		return
	}
	s := b.s
	d, k := len(s.off)-1, s.off[len(s.off)-1]
	for j := lo; j < hi; j++ {
		s.memberships(b.mem[j*k:(j+1)*k], b.dmem[j*k:(j+1)*k], x[j*d:(j+1)*d])
	}
	b.mb.RelaxedLogProbRows(lo, hi, lr, b.grad, b.mem)
	for j := lo; j < hi; j++ {
		lr[j] = s.chain(lr[j], score[j*d:(j+1)*d], x[j*d:(j+1)*d], b.grad[j*k:(j+1)*k], b.dmem[j*k:(j+1)*k])
	}
}

// LogProbScores evaluates the n points of x (n×d), chunks of points on
// the cores, each chunk start to end on one (LogProbScoresRows): the
// phases of a point never wait for the other cores, and its data stay in
// one core's cache.
func (b *relaxedBatch) LogProbScores(lr, score, x []float64) {
	t := &b.task
	t.lr, t.score, t.x = lr, score, x
	parallel.For(b.n, parallel.GrainWork(b.n, b.RowWork()), t)
	t.lr, t.score, t.x = nil, nil, nil
}
