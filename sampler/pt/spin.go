package pt

import (
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/dstein/dstein/sampler/gibbs"
)

// maxTableDegree is the largest degree of a site whose thresholds are
// tabulated (2^degree entries per site and level).
const maxTableDegree = 6

// spinKernel sweeps tempered ±1 spins of a pairwise model over flat
// arrays: at inverse temperature β, spin i becomes +1 with probability
// p = 1/(1 + exp(−2βL_i)), L_i = h_i + Σ_j J_ij z_j, when a uniform 64-bit
// integer falls below ⌊p·2^64⌋. For sites of degree ≤ maxTableDegree the
// thresholds of every neighbour pattern are tabulated per level of the
// ladder (and recomputed when the ladder moves), which removes the
// exponential from the sweep.
type spinKernel struct {
	d      int
	start  []int
	nbr    []int
	cpl    []float64
	h      []float64
	beta   []float64 // the ladder the tables were filled for
	tstart []int     // offset of site i's patterns in a level's table; −1: none
	size   int       // table entries per level
	table  []uint64  // level-major: table[lvl*size + tstart[i] + pattern]
}

func newSpinKernel(m gibbs.SpinModel, k int) *spinKernel {
	d := m.Dim()
	sk := &spinKernel{d: d, start: make([]int, d+1), h: append([]float64(nil), m.Fields()...), tstart: make([]int, d), beta: make([]float64, k)}
	for i := range d {
		nb, cp := m.Neighbors(i)
		sk.nbr = append(sk.nbr, nb...)
		sk.cpl = append(sk.cpl, cp...)
		sk.start[i+1] = len(sk.nbr)
	}
	for i := range d {
		deg := sk.start[i+1] - sk.start[i]
		if deg > maxTableDegree {
			sk.tstart[i] = -1
			continue
		}
		sk.tstart[i] = sk.size
		sk.size += 1 << deg
	}
	sk.table = make([]uint64, k*sk.size)
	return sk
}

// threshold returns ⌊p·2^64⌋ for p = 1/(1+exp(−2x)), saturating at 2^64−1.
func threshold(x float64) uint64 {
	p := 1 / (1 + math.Exp(-2*x))
	if p >= 1 {
		return math.MaxUint64
	}
	return uint64(p * (1 << 64))
}

// field returns L_i for the neighbour pattern pat (bit e set when the e-th
// neighbour is +1).
func (sk *spinKernel) field(i, pat int) float64 {
	l := sk.h[i]
	for e := sk.start[i]; e < sk.start[i+1]; e++ {
		l += sk.cpl[e] * float64(2*((pat>>(e-sk.start[i]))&1)-1)
	}
	return l
}

// fill tabulates the thresholds of every level of the ladder.
func (sk *spinKernel) fill(ladder []float64) {
	copy(sk.beta, ladder)
	for lvl, b := range ladder {
		tab := sk.table[lvl*sk.size : (lvl+1)*sk.size]
		for i := range sk.d {
			t := sk.tstart[i]
			if t < 0 {
				continue
			}
			for pat := range 1 << (sk.start[i+1] - sk.start[i]) {
				tab[t+pat] = threshold(b * sk.field(i, pat))
			}
		}
	}
}

// sweep updates the spins b (0 for −1, 1 for +1) in order at level lvl.
func (sk *spinKernel) sweep(b []uint8, lvl int, r *rand.Rand) {
	tab := sk.table[lvl*sk.size : (lvl+1)*sk.size]
	beta := sk.beta[lvl]
	for i := range b {
		lo, hi := sk.start[i], sk.start[i+1]
		var th uint64
		if t := sk.tstart[i]; t >= 0 {
			pat := 0
			for j, nb := range sk.nbr[lo:hi] {
				pat |= int(b[nb]) << j
			}
			th = tab[t+pat]
		} else {
			l := sk.h[i]
			for e := lo; e < hi; e++ {
				l += sk.cpl[e] * float64(2*int(b[sk.nbr[e]])-1)
			}
			th = threshold(beta * l)
		}
		// The borrow of u − th is 1 exactly when u < th.
		_, borrow := bits.Sub64(r.Uint64(), th, 0)
		b[i] = uint8(borrow)
	}
}

// logProb returns Σ_i z_i (h_i + ½ Σ_j J_ij z_j) = log p*(z), each edge
// counted once.
func (sk *spinKernel) logProb(b []uint8) float64 {
	var lp float64
	for i, v := range b {
		var pair float64
		for e := sk.start[i]; e < sk.start[i+1]; e++ {
			pair += sk.cpl[e] * float64(2*int(b[sk.nbr[e]])-1)
		}
		lp += float64(2*int(v)-1) * (sk.h[i] + pair/2)
	}
	return lp
}
