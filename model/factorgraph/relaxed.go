package factorgraph

import (
	"math"

	"github.com/dstein/dstein/model"
)

// scratch holds RelaxedLogProb's buffers; one per concurrent call, from a
// pool.
type scratch struct {
	logm   []float64 // log memberships, laid out like m
	inv    []float64 // 1/m, or 0 for memberships below tinyMembership
	terms  []float64 // log terms of one factor's sum, one per table entry
	digits []int
	vals   []float64 // log memberships of the current assignment
	prefix []float64 // prefix sums of vals
}

func (g *Graph) newScratch() *scratch {
	return &scratch{
		logm:   make([]float64, g.off[len(g.card)]),
		inv:    make([]float64, g.off[len(g.card)]),
		terms:  make([]float64, g.maxTable),
		digits: make([]int, g.maxScope),
		vals:   make([]float64, g.maxScope),
		prefix: make([]float64, g.maxScope+1),
	}
}

// tinyMembership is the membership below which RelaxedLogProb forms a
// gradient term from logarithms instead of dividing the whole term by the
// membership. Above it, a term that underflows or loses precision is below
// 1e-170 in absolute value.
const tinyMembership = 1e-150

// RelaxedLogProb returns the multilinear extension
//
//	log p̃(m) = Σ_f log Σ_a φ_f(a) Π_{v∈S_f} m_{v,a_v}
//
// and, when grad is not nil, its gradient with respect to every membership:
//
//	∂/∂m_{v,s} = Σ_{f∋v} Σ_{a: a_v=s} φ_f(a) Π_{u∈S_f, u≠v} m_{u,a_u} / Σ_a φ_f(a) Π_u m_{u,a_u}.
//
// At a one-hot m it equals LogProb exactly. Each factor's sum is taken in
// the log domain with its largest term factored out. A gradient term is the
// normalised term divided by m_{v,s}, or, for memberships below 1e-150
// (zero included), formed from the logarithms of the other memberships, so
// that memberships may be tiny or zero. Memberships ≤ 0 count as zero. A
// factor whose sum is zero (every non-zero entry has a zero membership)
// makes the value −Inf; it then contributes nothing to grad, where its
// derivative is undefined, so grad never holds NaN or Inf.
func (g *Graph) RelaxedLogProb(grad, m []float64) float64 {
	sc := g.pool.Get().(*scratch)
	defer g.pool.Put(sc)
	logm, inv := sc.logm, sc.inv
	for k, x := range m[:len(logm)] {
		switch {
		case x >= tinyMembership:
			logm[k], inv[k] = math.Log(x), 1/x
		case x > 0:
			logm[k], inv[k] = math.Log(x), 0
		default:
			logm[k], inv[k] = math.Inf(-1), 0
		}
	}
	if grad != nil {
		clear(grad[:len(logm)])
	}
	negInf := math.Inf(-1)
	var total float64
	for k := range g.fac {
		f := &g.fac[k]
		r := len(f.scope)
		if r == 0 {
			total += f.table[0]
			continue
		}
		// The log of each term φ(a) Π_v m_{v,a_v}, and their maximum.
		terms := sc.terms[:len(f.table)]
		d := sc.digits[:r]
		clear(d)
		top := negInf
		for a, t := range f.table {
			x := t
			if x != negInf {
				for j, o := range f.moff {
					x += logm[o+d[j]]
				}
				if x > top {
					top = x
				}
			}
			terms[a] = x
			advance(d, f.card)
		}
		if top == negInf {
			total = negInf
			continue
		}
		// The terms relative to the largest, in place.
		var sum float64
		for a, x := range terms {
			if x != negInf {
				terms[a] = math.Exp(x - top)
				sum += terms[a]
			} else {
				terms[a] = 0
			}
		}
		lse := top + math.Log(sum)
		total += lse
		if grad == nil {
			continue
		}
		// Gradient: for each non-zero entry and scope position j, the term
		// without m_{v_j,a_j}, normalised by the factor's sum.
		norm := 1 / sum
		vals, prefix := sc.vals[:r], sc.prefix[:r+1]
		for a, t := range f.table {
			if t == negInf {
				advance(d, f.card)
				continue
			}
			w := terms[a] * norm
			exact := false
			for j, o := range f.moff {
				if iv := inv[o+d[j]]; iv != 0 {
					grad[o+d[j]] += w * iv
				} else {
					exact = true
				}
			}
			if exact {
				// A tiny or zero membership: the product of the others is a
				// prefix sum plus a suffix sum of logs, so no −Inf is ever
				// subtracted.
				for j, o := range f.moff {
					vals[j] = logm[o+d[j]]
					prefix[j+1] = prefix[j] + vals[j]
				}
				var suffix float64
				for j := r - 1; j >= 0; j-- {
					if o := f.moff[j]; inv[o+d[j]] == 0 {
						if e := t + prefix[j] + suffix - lse; e != negInf {
							grad[o+d[j]] += math.Exp(e)
						}
					}
					suffix += vals[j]
				}
			}
			advance(d, f.card)
		}
	}
	return total
}

// gradTracker keeps one configuration and a gradient at its one-hot
// memberships: that of RelaxedLogProb, for variable v and state s
// Σ_{f∋v} φ_f(z with z_v = s)/φ_f(z) over the factors that are not zero at z
// (1 per such factor at s = z_v), or, when proposal is set, the proposal
// gradient Σ_{f∋v} log φ_f(z with z_v = s) over the same factors
// (ProposalGrad). A change of variable i changes the blocks of the
// variables that share a factor with i (i's Markov blanket) and i's own;
// each is recomputed from scratch, adding the factors in the order
// RelaxedLogProb (or ProposalGrad) does, so Grad equals that gradient bit
// for bit.
type gradTracker struct {
	g        *Graph
	z        []int
	gr, gr2  []float64 // gradient at z; gr2 equals gr outside the pending Try's blocks
	changed  []int     // the pending Try's variables
	stamp    []int     // stamp[v] == epoch when v is in changed
	epoch    int
	ti, ts   int  // the pending Try (ti < 0: none)
	proposal bool // the proposal gradient, not the relaxation's
}

var (
	_ model.RelaxedIncremental  = (*Graph)(nil)
	_ model.ProposalIncremental = (*Graph)(nil)
)

// NewGradientTracker returns a gradient tracker at a copy of z.
func (g *Graph) NewGradientTracker(z []int) model.GradientTracker { return g.newGradTracker(z, false) }

// NewProposalTracker returns a tracker of the proposal gradient
// (ProposalGrad) at a copy of z. Its Try costs O(Σ over the Markov
// blanket's variables of their factors' scopes and states) and allocates
// nothing.
func (g *Graph) NewProposalTracker(z []int) model.GradientTracker { return g.newGradTracker(z, true) }

func (g *Graph) newGradTracker(z []int, proposal bool) *gradTracker {
	n, f := len(g.card), g.off[len(g.card)]
	t := &gradTracker{g: g, z: make([]int, n), gr: make([]float64, f), gr2: make([]float64, f), stamp: make([]int, n), ti: -1, proposal: proposal}
	t.Reset(z)
	return t
}

// block writes variable v's block of the tracked gradient at t.z into dst.
func (t *gradTracker) block(dst []float64, v int) {
	if t.proposal {
		t.g.logBlock(dst, t.z, v)
	} else {
		t.g.block(dst, t.z, v)
	}
}

// ProposalGrad writes the proposal gradient at z (model.ProposalGradient):
// the gradient at z's one-hot memberships of the log-multilinear energy
//
//	E(m) = Σ_f Σ_a log φ_f(a) Π_{v∈S_f} m_{v,a_v}
//
// (terms whose product of memberships is zero skipped), linear in each
// variable's memberships. Variable v's block is Σ_{f∋v} log φ_f(z with
// z_v = s), log p*(z with z_v = s) up to a constant: −Inf where a factor is
// zero, so that a move into a zero of p* has proposal weight zero, and
// g[v, s] − g[v, z_v] is the exact change of log p*. A factor that is zero
// at z itself (z impossible, possible only at a chain's start) contributes
// nothing, as in the relaxation's gradient, so that the current state's
// entries stay finite and no difference is NaN.
func (g *Graph) ProposalGrad(grad []float64, z []int) []float64 {
	for v := range g.card {
		g.logBlock(grad, z, v)
	}
	return grad
}

// logBlock writes variable v's block of the proposal gradient at z into
// dst.
func (g *Graph) logBlock(dst []float64, z []int, v int) {
	b := dst[g.off[v]:g.off[v+1]]
	clear(b)
	zv := z[v]
	for a := g.adjStart[v]; a < g.adjStart[v+1]; a++ {
		f := &g.fac[g.adjF[a]]
		idx := f.index(z)
		if math.IsInf(f.table[idx], -1) {
			continue // a zero factor contributes nothing
		}
		st := f.stride[g.adjPos[a]]
		base := idx - zv*st
		for s := range b {
			b[s] += f.table[base+s*st]
		}
	}
}

func (t *gradTracker) State() []int                  { return t.z }
func (t *gradTracker) Grad() []float64               { return t.gr }
func (t *gradTracker) DeltaLogProb(i, s int) float64 { return t.g.DeltaLogProb(t.z, i, s) }

// block writes variable v's block of the gradient at z into dst (laid out
// like the memberships).
func (g *Graph) block(dst []float64, z []int, v int) {
	b := dst[g.off[v]:g.off[v+1]]
	clear(b)
	zv := z[v]
	for a := g.adjStart[v]; a < g.adjStart[v+1]; a++ {
		f := &g.fac[g.adjF[a]]
		idx := f.index(z)
		top := f.table[idx]
		if math.IsInf(top, -1) {
			continue // a zero factor contributes nothing
		}
		st := f.stride[g.adjPos[a]]
		base := idx - zv*st
		for s := range b {
			if s == zv {
				b[s] += 1
				continue
			}
			if x := f.table[base+s*st]; !math.IsInf(x, -1) {
				b[s] += math.Exp(x - top)
			}
		}
	}
}

func (t *gradTracker) Try(i, s int) ([]int, []float64) {
	g := t.g
	if t.ti >= 0 {
		for _, v := range t.changed {
			copy(t.gr2[g.off[v]:g.off[v+1]], t.gr[g.off[v]:g.off[v+1]])
		}
	}
	t.epoch++
	t.changed = append(t.changed[:0], i)
	t.stamp[i] = t.epoch
	for a := g.adjStart[i]; a < g.adjStart[i+1]; a++ {
		for _, v := range g.fac[g.adjF[a]].scope {
			if t.stamp[v] != t.epoch {
				t.stamp[v] = t.epoch
				t.changed = append(t.changed, v)
			}
		}
	}
	old := t.z[i]
	t.z[i] = s
	for _, v := range t.changed {
		t.block(t.gr2, v)
	}
	t.z[i] = old
	t.ti, t.ts = i, s
	return t.changed, t.gr2
}

func (t *gradTracker) Commit() {
	if t.ti < 0 {
		panic("factorgraph: GradientTracker.Commit without a pending Try")
	}
	t.z[t.ti] = t.ts
	for _, v := range t.changed {
		copy(t.gr[t.g.off[v]:t.g.off[v+1]], t.gr2[t.g.off[v]:t.g.off[v+1]])
	}
	t.ti = -1
}

func (t *gradTracker) Reset(z []int) {
	copy(t.z, z)
	for v := range t.z {
		t.block(t.gr, v)
	}
	copy(t.gr2, t.gr)
	t.ti = -1
}
