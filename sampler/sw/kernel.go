package sw

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/sampler/gibbs"
)

// Kernel holds what Swendsen–Wang updates of a ferromagnetic spin model
// need at each inverse temperature β of a ladder: the update at β samples
// p*^β, whose couplings and fields are β·J and β·h, so each level has its
// own bond probabilities 1 − e^{−2βJ_ij} and single-site thresholds
// σ(2βh_i). The sampler of this package uses one level (β = 1); parallel
// tempering (package pt) uses one per temperature. A Kernel is read-only
// during updates and may be shared by goroutines; each needs its own Work.
type Kernel struct {
	d      int
	pairs  []pair
	h      []float64
	beta   []float64 // the ladder the thresholds were filled for
	th     []uint64  // level-major: th[lvl*len(pairs)+e] = ⌊(1 − e^{−2βJ_e})·2^64⌋
	single []uint64  // level-major: single[lvl*d+i] = ⌊σ(2βh_i)·2^64⌋
}

// pair is an edge with a positive coupling.
type pair struct {
	i, j int32
	j0   float64
}

// NewKernel returns the kernel of the model of d spins with the given
// edges and fields for a ladder of levels inverse temperatures, all 1
// until Fill. It refuses a negative (or NaN) coupling, naming the edge;
// edges of coupling 0 never bond and are left out.
func NewKernel(d int, edges []ising.Edge, h []float64, levels int) (*Kernel, error) {
	if d > math.MaxInt32 {
		return nil, fmt.Errorf("%d spins; at most %d", d, math.MaxInt32)
	}
	if len(h) != d {
		return nil, fmt.Errorf("%d fields for %d spins", len(h), d)
	}
	k := &Kernel{d: d, h: h}
	var err error
	for _, e := range edges {
		if k.pairs, err = appendPair(k.pairs, e.I, e.J, e.Coupling); err != nil {
			return nil, err
		}
	}
	k.beta = make([]float64, levels)
	k.th = make([]uint64, levels*len(k.pairs))
	k.single = make([]uint64, levels*d)
	k.Fill(ones(levels))
	return k, nil
}

// appendPair appends the edge (i, j) of coupling c to pairs when c > 0,
// leaves it out when c = 0 (it never bonds), and refuses c < 0 (or NaN),
// naming the edge.
func appendPair(pairs []pair, i, j int, c float64) ([]pair, error) {
	if !(c >= 0) {
		return nil, fmt.Errorf("variable pair (%d,%d) has coupling %v", i, j, c)
	}
	if c > 0 {
		pairs = append(pairs, pair{i: int32(i), j: int32(j), j0: c})
	}
	return pairs, nil
}

// ones returns a ladder of n levels at β = 1.
func ones(n int) []float64 {
	b := make([]float64, n)
	for l := range b {
		b[l] = 1
	}
	return b
}

// KernelBytes is the memory of a kernel of d spins, e edges and the
// given number of levels (the pairs and the thresholds).
func KernelBytes(d, e, levels float64) float64 { return 16*e + 8*levels*(e+d) }

// Fill computes the thresholds of every level of the ladder (len(ladder)
// must be the kernel's number of levels).
func (k *Kernel) Fill(ladder []float64) {
	copy(k.beta, ladder)
	np := len(k.pairs)
	for lvl, b := range ladder {
		for e, p := range k.pairs {
			k.th[lvl*np+e] = probThreshold(-math.Expm1(-2 * b * p.j0))
		}
		for i, h := range k.h {
			k.single[lvl*k.d+i] = gibbs.Threshold(b * h)
		}
	}
}

// Work is one chain's scratch space for updates, and what the last update
// measured. It is not safe for concurrent use.
type Work struct {
	newSpin  []uint8   // the spin drawn for each cluster, at its root
	parent   []int32   // union–find forest
	size     []int32   // cluster sizes, at the roots
	hsum     []float64 // cluster fields h_C, at the roots (Potts: q per root)
	prob     []float64 // Potts: a cluster's log weights
	Clusters int       // the number of clusters of the last update
	Largest  int       // the size of its largest cluster
}

// NewWork returns the scratch space of a chain.
func (k *Kernel) NewWork() *Work {
	return &Work{newSpin: make([]uint8, k.d), parent: make([]int32, k.d), size: make([]int32, k.d), hsum: make([]float64, k.d)}
}

// WorkBytes is the memory of one Work for d spins.
func WorkBytes(d float64) float64 { return 17*d + 128 }

// pollBonds is the number of bonds drawn between two looks at the context.
const pollBonds = 1 << 16

// find returns the root of i's cluster, halving the path on the way.
func find(parent []int32, i int32) int32 {
	for parent[i] != i {
		parent[i] = parent[parent[i]]
		i = parent[i]
	}
	return i
}

// Update makes one Swendsen–Wang update of the spins (0 for −1, 1 for +1)
// at level lvl: bonds given the spins, then a spin per cluster given the
// bonds, from the cluster field β·h_C. The draws come in a fixed order
// (edges, then roots by index). It looks at ctx every pollBonds bonds and
// abandons the update, spins unchanged, returning false, when ctx is
// canceled.
func (k *Kernel) Update(ctx context.Context, spin []uint8, lvl int, r *rand.Rand, w *Work) bool {
	np := len(k.pairs)
	if !bond(ctx, k.pairs, k.th[lvl*np:(lvl+1)*np], spin, r, w) {
		return false
	}
	clear(w.hsum)
	for i := range w.parent {
		r := find(w.parent, int32(i))
		w.parent[i] = r // every site now points at its root
		w.hsum[r] += k.h[i]
	}
	beta, single := k.beta[lvl], k.single[lvl*k.d:(lvl+1)*k.d]
	w.Clusters, w.Largest = 0, 0
	for i, p := range w.parent {
		if p != int32(i) {
			continue
		}
		w.Clusters++
		w.Largest = max(w.Largest, int(w.size[i]))
		t := single[i]
		if w.size[i] > 1 {
			t = gibbs.Threshold(beta * w.hsum[i])
		}
		if r.Uint64() < t {
			w.newSpin[i] = 1
		} else {
			w.newSpin[i] = 0
		}
	}
	for i := range spin {
		spin[i] = w.newSpin[w.parent[i]]
	}
	return true
}

// bond draws the bonds between equal neighbours (pair e with probability
// th[e]/2^64) and joins their sites in w's union–find forest, started
// afresh. It looks at ctx every pollBonds pairs and reports false when it
// was canceled.
func bond(ctx context.Context, pairs []pair, th []uint64, spin []uint8, r *rand.Rand, w *Work) bool {
	for i := range w.parent {
		w.parent[i] = int32(i)
		w.size[i] = 1
	}
	np := len(pairs)
	for lo := 0; lo < np; lo += pollBonds {
		if lo > 0 && ctx.Err() != nil {
			return false
		}
		for e, b := range pairs[lo:min(lo+pollBonds, np)] {
			if spin[b.i] != spin[b.j] || r.Uint64() >= th[lo+e] {
				continue
			}
			ri, rj := find(w.parent, b.i), find(w.parent, b.j)
			if ri == rj {
				continue
			}
			if w.size[ri] < w.size[rj] {
				ri, rj = rj, ri
			}
			w.parent[rj] = ri
			w.size[ri] += w.size[rj]
		}
	}
	return true
}

// probThreshold returns ⌊p·2^64⌋ for p ∈ [0, 1], saturating at 2^64 − 1, so
// that a uniform 64-bit integer u satisfies u < threshold with probability
// p to within 2^−64.
func probThreshold(p float64) uint64 {
	if p >= 1 {
		return math.MaxUint64
	}
	if p <= 0 {
		return 0
	}
	return uint64(p * (1 << 64))
}
