package factorgraph

import "math"

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
