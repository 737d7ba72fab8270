package gwg

import (
	"context"
	"fmt"
	"math"
	"math/bits"

	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/internal/vexp"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/mh"
)

// Why one file of about 500 lines: Gibbs-with-Gradients' proposal, its reverse probability
// and the gradient bookkeeping are one algorithm; the multi-flip variant is multiflip.go.

// Name is the name of single-site Gibbs-with-Gradients in the sampler registry; pipelines name the method by it.
const Name = "gwg"

func init() {
	sampler.Register(sampler.Method{
		Name:        Name,
		Description: "n independent chains of Gibbs-with-Gradients (Grathwohl et al. 2021): single-site Metropolis–Hastings proposals guided by a gradient of the model (its proposal gradient or its relaxation's)",
		NewSettings: func() sampler.Settings { return new(Settings) },
		New: func(p *sampler.Problem, s sampler.Settings) (sampler.Sampler, error) {
			return New(p, *s.(*Settings))
		},
		Iters: 500,
		Unit:  "sweep of d proposals",
		Memory: func(m model.Model, n int, _ sampler.Settings) float64 {
			// Per chain: the state (three times), the one-hot memberships,
			// logits, weights and their copies for a tried move, the
			// tracker's two gradients (and memberships), and the sum tree
			// (at most 4d entries).
			d, f := float64(m.Dim()), float64(sampler.States(m))
			return float64(n) * (8*3*d + 8*8*f + 8*4*d + 512)
		},
	})
}

// Settings configure the sampler. Gibbs-with-Gradients has no settings;
// the type is there for the registry and for settings to come.
type Settings struct{}

// Validate accepts every value.
func (*Settings) Validate() error { return nil }

// Resolved returns a copy.
func (s *Settings) Resolved() sampler.Settings { c := *s; return &c }

// The proposal weights are kept as w = exp(logit − ref) with a reference
// ref per chain. ref is moved to the largest logit (a rebase, O(F)) when a
// new logit would exceed it by more than maxShift, so that no weight
// overflows, and when the total falls below minTotal, so that the weights
// that matter stay far from underflow (a weight below 1e-308 is then below
// 1e-208 of the total).
const (
	maxShift = 300
	minTotal = 1e-100
)

// Sampler is the state of n chains. It is not safe for concurrent use.
type Sampler struct {
	m      model.Model
	off    []int
	n, d   int
	leaves int // leaves of each sum tree: the smallest power of two ≥ d
	depth  int // log2(leaves)
	chains []chain
	binary bool  // every variable has two states: weights in bulk (bulkWeights)
	all    []int // 0, 1, …, d−1
	set    mh.Set
	cur    []int
	sweeps int
	err    error
	ctx    context.Context // the context of the Step in progress
}

type chain struct {
	mh.Chain                       // the state Z, stream, counters
	t        model.GradientTracker // Z and the proposal gradient at it (model.NewProposalTracker)
	logit    []float64             // Δ̃/2 of every move from Z, laid out like the memberships; −Inf at the current states
	w        []float64             // exp(logit − ref)
	tree     []float64             // sum tree: tree[leaves+i] = Σ_s w of variable i, tree[j] = tree[2j] + tree[2j+1]
	ref      float64               // the reference of w
	bad      float64               // a NaN or +Inf logit at Z (only at the start), else 0
	args     []float64             // bulkWeights' exponents (binary models)
	work     int                   // work since the chain last looked at the context
}

// New starts n = p.N chains at the states p.Z; chain c draws from
// p.Key.ForIndex(rng.Sample, c).
func New(p *sampler.Problem, _ Settings) (*Sampler, error) {
	rm, off, base, err := mh.Start(Name, p)
	if err != nil {
		return nil, err
	}
	n, d := p.N, p.Model.Dim()
	leaves := 1
	for leaves < d {
		leaves *= 2
	}
	s := &Sampler{m: rm, off: off, n: n, d: d, leaves: leaves, depth: bits.TrailingZeros(uint(leaves)),
		chains: make([]chain, n), set: make(mh.Set, n), cur: make([]int, n*d), binary: true, all: make([]int, d),
		ctx: context.Background()}
	for i := range s.all {
		s.all[i] = i
		if off[i+1]-off[i] != 2 {
			s.binary = false // not every variable has two states (the total can still be 2d)
		}
	}
	f := off[d]
	for c := range s.chains {
		ch := &s.chains[c]
		ch.Chain = base[c]
		ch.Mem = nil // the tracker keeps what it needs
		s.set[c] = &ch.Chain
		ch.t = model.NewProposalTracker(rm, ch.Z)
		ch.logit, ch.w = make([]float64, f), make([]float64, f)
		ch.tree = make([]float64, 2*leaves)
		if s.binary {
			ch.args = make([]float64, d)
		}
		g := ch.t.Grad()
		for i := range d {
			if top := s.blockLogits(ch.logit, g, i, ch.Z[i]); isBad(top) && !(ch.bad > 0) {
				ch.bad = top
			}
		}
		if ch.bad == 0 {
			s.rebase(ch)
		}
		ch.Evals++
	}
	return s, nil
}

// isBad reports a logit maximum that is NaN or +Inf.
func isBad(top float64) bool { return math.IsNaN(top) || math.IsInf(top, 1) }

// Between two looks at the context a chain does about pollWork units of
// work: proposalWork per proposal (a tree descent, a gradient update, two
// random numbers), plus one per block whose weights the move changed, plus
// F for a rebase.
const (
	pollWork     = 1 << 12
	proposalWork = 16
)

// Step runs one sweep (d proposals) of every chain. Each chain looks at
// ctx before its sweep and every pollWork units of work (see above);
// when ctx is canceled the chains stop between proposals and Step returns
// ctx.Err(), from then on (see sampler.Sampler).
func (s *Sampler) Step(ctx context.Context) error {
	if s.err != nil {
		return s.err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.ctx = ctx
	parallel.For(s.n, 1, s)
	s.ctx = context.Background()
	if err := ctx.Err(); err != nil {
		s.err = err
		return err
	}
	if s.err = s.set.Err(Name); s.err != nil {
		return s.err
	}
	s.sweeps++
	return nil
}

// Do advances chains [lo, hi) by one sweep (a parallel task), stopping
// between proposals when the step's context is canceled.
func (s *Sampler) Do(lo, hi int) {
	for c := lo; c < hi; c++ {
		if s.ctx.Err() != nil {
			return
		}
		ch := &s.chains[c]
		ch.work = 0
		for range s.d {
			if ch.Err != nil {
				break
			}
			if ch.work += proposalWork; ch.work >= pollWork {
				ch.work = 0
				if s.ctx.Err() != nil {
					return
				}
			}
			s.propose(ch)
		}
	}
}

// blockLogits writes the proposal logits Δ̃/2 = (g[i, s'] − g[i, zi])/2 of
// variable i's moves from state zi, with gradient g, into logit (−Inf for
// zi itself) and returns their maximum, NaN when one is NaN.
func (s *Sampler) blockLogits(logit, g []float64, i, zi int) float64 {
	a := s.off[i]
	if s.off[i+1]-a != 2 {
		return s.blockLogitsK(logit, g, i, zi)
	}
	// One move: to the other state.
	cur, k := a+zi, a+1-zi
	l := (g[k] - g[cur]) / 2
	logit[cur], logit[k] = negInf, l
	return l
}

var negInf = math.Inf(-1)

// blockLogitsK is blockLogits for a variable with other than two states.
func (s *Sampler) blockLogitsK(logit, g []float64, i, zi int) float64 {
	a, b := s.off[i], s.off[i+1]
	cur := g[a+zi]
	top, nan := negInf, false
	for k := a; k < b; k++ {
		if k == a+zi {
			logit[k] = negInf
			continue
		}
		l := (g[k] - cur) / 2
		logit[k] = l
		if l > top {
			top = l
		} else if l != l {
			nan = true
		}
	}
	if nan {
		return math.NaN()
	}
	return top
}

// logits writes the logits of the variables in vs from the gradient g, as
// blockLogits does for each, and returns their maximum and whether one is
// NaN.
func (s *Sampler) logits(ch *chain, g []float64, vs []int) (top float64, nan bool) {
	top = negInf
	if !s.binary {
		for _, v := range vs {
			if t := s.blockLogits(ch.logit, g, v, ch.Z[v]); t > top {
				top = t
			} else if t != t {
				nan = true
			}
		}
		return top, nan
	}
	logit, z := ch.logit, ch.Z
	for _, v := range vs {
		cur := 2*v + z[v]
		k := cur ^ 1 // the other state
		l := (g[k] - g[cur]) / 2
		logit[cur], logit[k] = negInf, l
		if l > top {
			top = l
		} else if l != l {
			nan = true
		}
	}
	return top, nan
}

// blockWeights sets the weights of variable i from its logits and returns
// their sum (the tree leaf). The current state's weight is 0.
func (s *Sampler) blockWeights(ch *chain, i int) float64 {
	a := s.off[i]
	if s.off[i+1]-a != 2 {
		return s.blockWeightsK(ch, i)
	}
	// One move: to the other state.
	cur, k := a+ch.Z[i], a+1-ch.Z[i]
	x := math.Exp(ch.logit[k] - ch.ref)
	ch.w[k], ch.w[cur] = x, 0
	return x
}

// blockWeightsK is blockWeights for a variable with other than two states.
func (s *Sampler) blockWeightsK(ch *chain, i int) float64 {
	var sum float64
	for k := s.off[i]; k < s.off[i+1]; k++ {
		if l := ch.logit[k]; math.IsInf(l, -1) {
			ch.w[k] = 0
		} else {
			ch.w[k] = math.Exp(l - ch.ref)
			sum += ch.w[k]
		}
	}
	return sum
}

// rebase moves ch.ref to the largest logit (0 when none is finite) and
// recomputes every weight and the tree.
func (s *Sampler) rebase(ch *chain) {
	ref := math.Inf(-1)
	for _, l := range ch.logit {
		ref = max(ref, l)
	}
	if math.IsInf(ref, -1) {
		ref = 0
	}
	ch.ref = ref
	s.bulkWeights(ch, s.all)
	s.rebuild(ch.tree)
	ch.work += len(ch.logit)
}

// bulkWeights sets the weights and leaves of the variables in vs, as
// blockWeights does for each, without the inner nodes. In a binary model
// the exponentials are taken together (vexp.Exp: the same bits as
// math.Exp, four at a time).
func (s *Sampler) bulkWeights(ch *chain, vs []int) {
	if !s.binary {
		for _, v := range vs {
			ch.tree[s.leaves+v] = s.blockWeights(ch, v)
		}
		return
	}
	args, logit, w, z, ref := ch.args[:len(vs)], ch.logit, ch.w, ch.Z, ch.ref
	leaf := ch.tree[s.leaves:]
	for j, v := range vs {
		args[j] = logit[(2*v+z[v])^1] - ref // the other state's logit
	}
	vexp.Exp(args, args)
	for j, v := range vs {
		cur := 2*v + z[v]
		w[cur^1], w[cur] = args[j], 0
		leaf[v] = args[j]
	}
}

// rebuild recomputes every inner node of a tree from its leaves.
func (s *Sampler) rebuild(tree []float64) {
	for j := s.leaves - 1; j >= 1; j-- {
		tree[j] = tree[2*j] + tree[2*j+1]
	}
}

// setLeaf sets leaf i and recomputes the nodes above it. Every node is the
// sum of its children, so the tree is a function of its leaves, whatever
// the order of the updates.
func (s *Sampler) setLeaf(tree []float64, i int, x float64) {
	j := s.leaves + i
	tree[j] = x
	for j >>= 1; j >= 1; j >>= 1 {
		tree[j] = tree[2*j] + tree[2*j+1]
	}
}

// updateWeights recomputes the weights and leaves of the variables in vs
// from their logits and then the nodes above them: along each one's path,
// or, when that would cost more, the whole tree.
func (s *Sampler) updateWeights(ch *chain, vs []int) {
	if len(vs)*s.depth >= s.leaves {
		s.bulkWeights(ch, vs)
		s.rebuild(ch.tree)
		return
	}
	for _, v := range vs {
		s.setLeaf(ch.tree, v, s.blockWeights(ch, v))
	}
}

// find descends the tree to the variable whose range of cumulative weights
// holds target (0 ≤ target < total) and returns it with the remainder of
// target within its leaf. A child whose sum is 0 is never entered, so the
// variable has positive weight whatever the rounding.
func (s *Sampler) find(tree []float64, target float64) (int, float64) {
	j := 1
	for j < s.leaves {
		l, r := tree[2*j], tree[2*j+1]
		if r == 0 || (l > 0 && target < l) {
			j = 2 * j
		} else {
			target -= l
			j = 2*j + 1
		}
	}
	return j - s.leaves, target
}

// propose makes one Metropolis–Hastings move. The logits, weights and sum
// tree of the current state are kept between proposals; a proposal
// updates them for the blocks that the move changes (the tracker names
// them), which gives the reverse proposal's normaliser, and restores those
// blocks when the move is rejected.
func (s *Sampler) propose(ch *chain) {
	if ch.bad != 0 {
		ch.Err = fmt.Errorf("proposal weights are %v", ch.bad)
		return
	}
	total := ch.tree[1]
	if total == 0 {
		return // no move has positive proposal probability (all variables have one state)
	}
	// Draw a move: a variable from the tree, then its state.
	u := ch.R.Float64()
	i, rest := s.find(ch.tree, u*total)
	a, b := s.off[i], s.off[i+1]
	k, acc := -1, 0.0
	for j := a; j < b; j++ {
		if ch.w[j] == 0 {
			continue
		}
		acc += ch.w[j]
		k = j
		if rest < acc {
			break
		}
	}
	old, next := ch.Z[i], k-a
	lFwd := ch.logit[k] // log q(next | old) = lFwd − ref − log total
	dlp := ch.t.DeltaLogProb(i, next)
	ch.Evals++
	if math.IsNaN(dlp) {
		ch.Err = fmt.Errorf("log p* change is NaN")
		return
	}
	if math.IsInf(dlp, -1) {
		return // into an impossible state: rejected
	}
	// The logits and weights at the proposed state, for the reverse move.
	changed, g := ch.t.Try(i, next)
	ch.Evals++
	ch.work += len(changed)
	ch.Z[i] = next
	top, nan := s.logits(ch, g, changed)
	ref := ch.ref
	var logA float64
	if nan || math.IsInf(top, 1) {
		// A weight at the proposed state is +Inf (the reverse move's
		// probability is 0: reject) or else NaN.
		logA = math.NaN()
		if math.IsInf(top, 1) && !isBad(ch.logit[a+old]) {
			logA = math.Inf(-1)
		}
	} else {
		if top-ch.ref > maxShift {
			s.rebase(ch)
		} else if s.updateWeights(ch, changed); ch.tree[1] < minTotal {
			s.rebase(ch)
		}
		// log q(old | next) − log q(next | old), with the logarithms of
		// the totals taken as one of their ratio.
		logA = dlp + ((ch.logit[a+old] - ch.ref) - (lFwd - ref)) + math.Log(total/ch.tree[1])
		if math.IsInf(dlp, 1) {
			// Out of an impossible state (only at the start): accepted,
			// even when the move back has proposal weight 0 (a zero of p*).
			logA = dlp
		}
	}
	if math.IsNaN(logA) {
		s.restore(ch, changed, i, old, ref)
		ch.Err = fmt.Errorf("acceptance ratio is NaN")
		return
	}
	if logA >= 0 || math.Log(ch.R.Float64()) < logA {
		ch.t.Commit()
		ch.Accepted++
		return
	}
	s.restore(ch, changed, i, old, ref)
}

// restore undoes a tried move of variable i from state old: the changed
// blocks' logits and weights are recomputed from the gradient of the
// current state, which the tracker still holds, with the reference ref of
// before the try (bit for bit what they were), or the weights are rebased
// when the try moved the reference.
func (s *Sampler) restore(ch *chain, changed []int, i, old int, ref float64) {
	ch.Z[i] = old
	g := ch.t.Grad()
	for _, v := range changed {
		s.blockLogits(ch.logit, g, v, ch.Z[v])
	}
	if ch.ref != ref {
		s.rebase(ch)
		return
	}
	s.updateWeights(ch, changed)
}

// Current returns the chains' current states.
func (s *Sampler) Current() []int { return s.set.Current(s.cur, s.d) }

// Sweeps returns the number of completed sweeps.
func (s *Sampler) Sweeps() int { return s.sweeps }

// Stats reports acceptance_rate, the fraction of accepted proposals so
// far (d proposals per chain and Step; a proposal into a state of
// probability zero counts as rejected). Evaluations count one gradient at
// the proposed state (a tracker's Try) and one exact log p* change per
// proposal, and the first gradient.
func (s *Sampler) Stats() sampler.Stats {
	return sampler.Stats{Evaluations: s.set.Evaluations(), Values: []sampler.Stat{
		{Name: "acceptance_rate", Value: s.set.AcceptanceRate(int64(s.sweeps) * int64(s.d))},
	}}
}
