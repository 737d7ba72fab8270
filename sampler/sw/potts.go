package sw

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/sampler/gibbs"
)

// PottsKernel holds what Swendsen–Wang updates of a ferromagnetic Potts
// model need at each inverse temperature β of a ladder. For
// log p*(z) = Σ_{(i,j)} J_ij·[z_i = z_j] + Σ_i h_i(z_i) with every J_ij ≥ 0,
// exp(βJ·[z_i = z_j]) = e^{βJ}·[(1 − p) + p·[z_i = z_j]] with
// p = 1 − e^{−βJ}, so bonds join equal neighbours with probability p and a
// cluster C then takes state s with probability ∝ exp(β Σ_{i∈C} h_i(s)),
// independently of the other clusters (the Ising kernel is the case q = 2
// with J_Potts = 2J and h(±1) = ±h, which Kernel tabulates). Like Kernel it
// is read-only during updates; each goroutine needs its own Work.
type PottsKernel struct {
	d, q   int
	pairs  []pair
	h      []float64 // d×q, row-major; nil when every field is 0
	beta   []float64
	th     []uint64 // level-major: th[lvl*len(pairs)+e] = ⌊(1 − e^{−βJ_e})·2^64⌋
	single []uint64 // level-major, d×(q−1) per level: a lone site's cumulative thresholds
}

// NewPottsKernel returns the kernel of a Potts model of d variables with q
// states, its edges and its fields (d×q row-major, or nil for none) for a
// ladder of levels inverse temperatures, all 1 until Fill. It refuses a
// negative (or NaN) coupling, naming the edge, and q outside [2, 256].
func NewPottsKernel(d, q int, edges []potts.Edge, h []float64, levels int) (*PottsKernel, error) {
	if d > math.MaxInt32 {
		return nil, fmt.Errorf("%d variables; at most %d", d, math.MaxInt32)
	}
	if q < 2 || q > 256 {
		return nil, fmt.Errorf("%d states; the cluster kernel takes 2 to 256", q)
	}
	if h != nil && len(h) != d*q {
		return nil, fmt.Errorf("%d fields for %d variables of %d states", len(h), d, q)
	}
	k := &PottsKernel{d: d, q: q}
	for _, v := range h {
		if v != 0 {
			k.h = h
			break
		}
	}
	var err error
	for _, e := range edges {
		if k.pairs, err = appendPair(k.pairs, e.I, e.J, e.Coupling); err != nil {
			return nil, err
		}
	}
	k.beta = make([]float64, levels)
	k.th = make([]uint64, levels*len(k.pairs))
	if k.h != nil {
		k.single = make([]uint64, levels*d*(q-1))
	}
	k.Fill(ones(levels))
	return k, nil
}

// PottsKernelBytes is the memory of a Potts kernel of d variables with q
// states, e edges and the given number of levels.
func PottsKernelBytes(d, q, e, levels float64) float64 {
	return 16*e + 8*d*q + 8*levels*(e+d*(q-1))
}

// PottsWorkBytes is the memory of one Work of a Potts kernel.
func PottsWorkBytes(d, q float64) float64 { return 9*d + 8*d*q + 128 }

// Fill computes the thresholds of every level of the ladder.
func (k *PottsKernel) Fill(ladder []float64) {
	copy(k.beta, ladder)
	np := len(k.pairs)
	for lvl, b := range ladder {
		for e, p := range k.pairs {
			k.th[lvl*np+e] = probThreshold(-math.Expm1(-b * p.j0))
		}
		if k.h == nil {
			continue
		}
		w := make([]float64, k.q)
		for i := range k.d {
			for s := range k.q {
				w[s] = b * k.h[i*k.q+s]
			}
			cumThresholds(k.single[(lvl*k.d+i)*(k.q-1):(lvl*k.d+i+1)*(k.q-1)], w)
		}
	}
}

// cumThresholds writes the cumulative probabilities of the first q − 1
// states of the distribution ∝ exp(w) as 64-bit thresholds: a uniform
// 64-bit u is state s for the first s with u < th[s], else the last state.
func cumThresholds(th []uint64, w []float64) {
	top := math.Inf(-1)
	for _, v := range w {
		top = max(top, v)
	}
	var z float64
	for _, v := range w {
		z += math.Exp(v - top)
	}
	var c float64
	for s := range th {
		c += math.Exp(w[s]-top) / z
		th[s] = probThreshold(c)
	}
}

// NewWork returns the scratch space of a chain.
func (k *PottsKernel) NewWork() *Work {
	w := &Work{newSpin: make([]uint8, k.d), parent: make([]int32, k.d), size: make([]int32, k.d)}
	if k.h != nil {
		w.hsum = make([]float64, k.d*k.q)
		w.prob = make([]float64, k.q)
	}
	return w
}

// Update makes one Swendsen–Wang update of the states at level lvl: bonds
// given the states, then a state per cluster given the bonds. The draws
// come in a fixed order (edges, then roots by index). It looks at ctx
// every pollBonds bonds and abandons the update, states unchanged,
// returning false, when ctx is canceled.
func (k *PottsKernel) Update(ctx context.Context, z []uint8, lvl int, r *rand.Rand, w *Work) bool {
	if !bond(ctx, k.pairs, k.th[lvl*len(k.pairs):(lvl+1)*len(k.pairs)], z, r, w) {
		return false
	}
	q := k.q
	if k.h != nil {
		clear(w.hsum)
	}
	for i := range w.parent {
		root := find(w.parent, int32(i))
		w.parent[i] = root
		if k.h != nil {
			hs, hi := w.hsum[int(root)*q:int(root+1)*q], k.h[i*q:(i+1)*q]
			for s, v := range hi {
				hs[s] += v
			}
		}
	}
	beta := k.beta[lvl]
	w.Clusters, w.Largest = 0, 0
	for i, p := range w.parent {
		if p != int32(i) {
			continue
		}
		w.Clusters++
		w.Largest = max(w.Largest, int(w.size[i]))
		switch {
		case k.h == nil:
			w.newSpin[i] = uint8(r.IntN(q))
		case w.size[i] == 1:
			w.newSpin[i] = pick(k.single[(lvl*k.d+i)*(q-1):(lvl*k.d+i+1)*(q-1)], r.Uint64())
		default:
			w.newSpin[i] = uint8(gibbs.Draw(scaled(w.prob, w.hsum[i*q:(i+1)*q], beta), r.Float64()))
		}
	}
	for i := range z {
		z[i] = w.newSpin[w.parent[i]]
	}
	return true
}

// scaled writes β·h into dst and returns it.
func scaled(dst, h []float64, beta float64) []float64 {
	for s, v := range h {
		dst[s] = beta * v
	}
	return dst
}

// pick returns the state whose cumulative threshold first exceeds u.
func pick(th []uint64, u uint64) uint8 {
	for s, t := range th {
		if u < t {
			return uint8(s)
		}
	}
	return uint8(len(th))
}
