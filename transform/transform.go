package transform

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dstein/dstein/model"
)

// Transform is an even partition of a product base density: coordinate i is
// cut into bins of equal base probability, one per possible state of
// variable i, in the model's state order. It is immutable and safe for
// concurrent use.
type Transform struct {
	base Base
	// cuts[i] holds the interior cut points of coordinate i in increasing
	// order; bin b is [cuts[b−1], cuts[b]) with cuts[−1] = −Inf and
	// cuts[len] = +Inf.
	cuts [][]float64
	k    []int
	// binState[i][b] is the state of bin b and stateBin[i][s] the bin of
	// state s (−1 for a state without a bin); both nil when every state of
	// variable i has a bin.
	binState [][]int
	stateBin [][]int
	sym      bool // the base is symmetric about 0
	// pairCuts holds the cut of each coordinate of the leading run of
	// coordinates with two states, both with a bin (binary models: every
	// coordinate), for Gamma's and the soft memberships' fast paths.
	pairCuts []float64
}

// Symmetric marks a base as symmetric about zero, so that cut points above
// the median are the exact negatives of those below.
type Symmetric interface{ Symmetric() bool }

// Symmetric reports that N(0, 1) is symmetric.
func (Normal) Symmetric() bool { return true }

// New returns the even partition of the base for variables with the given
// numbers of states, every state with its own bin. A nil base means Normal.
func New(base Base, numStates []int) (*Transform, error) {
	return NewWithSupport(base, numStates, nil)
}

// NewWithSupport is New where only the states for which possible(i, s) is
// true get a bin; the others can never be reached through Γ. possible may
// be nil (every state possible).
func NewWithSupport(base Base, numStates []int, possible func(i, s int) bool) (*Transform, error) {
	if base == nil {
		base = Normal{}
	}
	d := len(numStates)
	t := &Transform{base: base, cuts: make([][]float64, d), k: append([]int(nil), numStates...),
		binState: make([][]int, d), stateBin: make([][]int, d)}
	if s, ok := base.(Symmetric); ok && s.Symmetric() {
		t.sym = true
	}
	memo := map[int][]float64{}
	for i, K := range numStates {
		if K < 1 {
			return nil, fmt.Errorf("transform: variable %d has %d states; want at least 1", i, K)
		}
		nb := K
		if possible != nil {
			var bs []int
			sb := make([]int, K)
			for s := range K {
				sb[s] = -1
				if possible(i, s) {
					sb[s] = len(bs)
					bs = append(bs, s)
				}
			}
			if len(bs) == 0 {
				return nil, fmt.Errorf("transform: every state of variable %d has probability zero", i)
			}
			if len(bs) < K {
				t.binState[i], t.stateBin[i] = bs, sb
				nb = len(bs)
			}
		}
		c, ok := memo[nb]
		if !ok {
			var err error
			if c, err = t.evenCuts(nb); err != nil {
				return nil, err
			}
			memo[nb] = c
		}
		t.cuts[i] = c
	}
	for i := range d {
		if t.k[i] != 2 || t.binState[i] != nil || len(t.cuts[i]) != 1 {
			break
		}
		t.pairCuts = append(t.pairCuts, t.cuts[i][0])
	}
	return t, nil
}

// evenCuts returns the K−1 cut points of the even partition into K bins.
func (t *Transform) evenCuts(K int) ([]float64, error) {
	c := make([]float64, K-1)
	for j := 1; j < K; j++ {
		switch {
		case t.sym && 2*j == K:
			c[j-1] = 0
		case t.sym && 2*j > K:
			c[j-1] = -c[K-j-1]
		case 2*j <= K:
			c[j-1] = t.base.Quantile(float64(j) / float64(K))
		default:
			c[j-1] = t.base.UpperQuantile(float64(K-j) / float64(K))
		}
	}
	for j := 1; j < len(c); j++ {
		if !(c[j] > c[j-1]) {
			return nil, fmt.Errorf("transform: base quantiles for %d bins are not increasing: %v", K, c)
		}
	}
	return c, nil
}

// ForModel returns the even partition of the base for m's variables. When m
// implements model.Support, states of probability zero get no bin.
func ForModel(base Base, m model.Model) (*Transform, error) {
	ks := make([]int, m.Dim())
	for i := range ks {
		ks[i] = len(m.States(i))
	}
	if sup, ok := m.(model.Support); ok {
		return NewWithSupport(base, ks, sup.Possible)
	}
	return New(base, ks)
}

// Dim returns the number of coordinates.
func (t *Transform) Dim() int { return len(t.k) }

// Base returns the base density of each coordinate.
func (t *Transform) Base() Base { return t.base }

// NumStates returns K_i, the number of states of variable i.
func (t *Transform) NumStates(i int) int { return t.k[i] }

// NumBins returns the number of bins of coordinate i: K_i less the states
// without a bin.
func (t *Transform) NumBins(i int) int { return len(t.cuts[i]) + 1 }

// Cuts returns the interior cut points of coordinate i. The caller must not
// modify the slice.
func (t *Transform) Cuts(i int) []float64 { return t.cuts[i] }

// HasBin reports whether state s of variable i has a bin.
func (t *Transform) HasBin(i, s int) bool {
	return t.stateBin[i] == nil || t.stateBin[i][s] >= 0
}

// BinOf returns the bin of state s of variable i, or −1.
func (t *Transform) BinOf(i, s int) int {
	if t.stateBin[i] == nil {
		return s
	}
	return t.stateBin[i][s]
}

// StateOf returns the state of bin b of variable i.
func (t *Transform) StateOf(i, b int) int {
	if t.binState[i] == nil {
		return b
	}
	return t.binState[i][b]
}

// Bin returns the bounds [lo, hi) of the bin of state s of coordinate i;
// the outer bins extend to ∓Inf. It panics for a state without a bin.
func (t *Transform) Bin(i, s int) (lo, hi float64) {
	b := t.BinOf(i, s)
	if b < 0 {
		panic(fmt.Sprintf("transform: state %d of variable %d has no bin", s, i))
	}
	return t.binBounds(i, b)
}

func (t *Transform) binBounds(i, b int) (lo, hi float64) {
	c := t.cuts[i]
	lo, hi = math.Inf(-1), math.Inf(1)
	if b > 0 {
		lo = c[b-1]
	}
	if b < len(c) {
		hi = c[b]
	}
	return lo, hi
}

// bin returns the index of the bin of coordinate i that holds x.
func (t *Transform) bin(i int, x float64) int {
	c := t.cuts[i]
	if len(c) < 8 {
		b := 0
		for _, v := range c {
			if x >= v {
				b++
			} else {
				break
			}
		}
		return b
	}
	lo, hi := 0, len(c) // first cut > x
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if c[mid] <= x {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// State returns Γ_i(x): the state whose bin of coordinate i holds x.
func (t *Transform) State(i int, x float64) int {
	return t.StateOf(i, t.bin(i, x))
}

// Gamma writes Γ(x) into dst and returns it; dst is allocated when nil.
func (t *Transform) Gamma(dst []int, x []float64) []int {
	if dst == nil {
		dst = make([]int, len(x))
	}
	pc := t.pairCuts[:min(len(t.pairCuts), len(x))]
	if len(dst) < len(x) {
		_ = dst[len(x)-1] // too short: the index panic of the general loop
	}
	dz := dst[:len(x)]
	for i, c := range pc {
		b := 0 // bin 0 below the cut, else bin 1 (NaN in bin 0, as in bin)
		if x[i] >= c {
			b = 1
		}
		dz[i] = b
	}
	for i := len(pc); i < len(x); i++ {
		dst[i] = t.State(i, x[i])
	}
	return dst
}

// LogBase returns log p0(x) = Σ_i log p0(x_i).
func (t *Transform) LogBase(x []float64) float64 {
	var s float64
	if nb, ok := t.base.(Normal); ok {
		// The paper's base: its method on the concrete type (inlined).
		for _, v := range x {
			s += nb.LogProb(v)
		}
		return s
	}
	for _, v := range x {
		s += t.base.LogProb(v)
	}
	return s
}

// LogTarget returns log p_c(x) = log p0(x) + log p*(Γ(x)), up to the model's
// constant, using z (length d) as scratch for Γ(x). It is −Inf where p*
// gives Γ(x) probability zero.
func (t *Transform) LogTarget(m model.Model, x []float64, z []int) float64 {
	lp := m.LogProb(t.Gamma(z, x))
	if math.IsInf(lp, -1) {
		return lp
	}
	return t.LogBase(x) + lp
}

// openUniform returns a uniform draw in (0, 1), never 0 or 1: the midpoint
// of one of 2^52 equal cells (with 2^53 cells the top midpoint would round
// to 1).
func openUniform(r *rand.Rand) float64 {
	return (float64(r.Uint64()>>12) + 0.5) / (1 << 52)
}

// SampleGiven draws x given z: each x_i from the base truncated to the bin
// of z_i, by drawing its base probability uniformly inside the bin and
// inverting. Bins that start above the median are drawn through their
// upper-tail probability, so draws stay accurate far out in either tail;
// every draw is finite and lies in its bin. dst is allocated when nil. It
// panics when a state has no bin (check with HasBin).
func (t *Transform) SampleGiven(dst []float64, z []int, r *rand.Rand) []float64 {
	if dst == nil {
		dst = make([]float64, len(z))
	}
	for i, s := range z {
		b := t.BinOf(i, s)
		if b < 0 {
			panic(fmt.Sprintf("transform: state %d of variable %d has no bin", s, i))
		}
		K := t.NumBins(i)
		u := openUniform(r)
		var x float64
		if 2*b < K {
			x = t.base.Quantile((float64(b) + u) / float64(K))
		} else {
			x = t.base.UpperQuantile((float64(K-b) - u) / float64(K))
		}
		dst[i] = t.clampToBin(i, b, x)
	}
	return dst
}

// clampToBin moves x into bin b of coordinate i when rounding in the
// quantile function put it just outside, and keeps it finite.
func (t *Transform) clampToBin(i, b int, x float64) float64 {
	lo, hi := t.binBounds(i, b)
	if x < lo {
		x = lo
	}
	if x >= hi {
		x = math.Nextafter(hi, math.Inf(-1))
	}
	if math.IsInf(x, -1) {
		x = -math.MaxFloat64
	}
	if math.IsInf(x, 1) {
		x = math.MaxFloat64
	}
	return x
}
