package pt

import (
	"math/bits"

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
	gibbs.SpinGraph
	d      int
	beta   []float64 // the ladder the tables were filled for
	tstart []int     // offset of site i's patterns in a level's table; −1: none
	size   int       // table entries per level
	table  []uint64  // level-major: table[lvl*size + tstart[i] + pattern]
}

func newSpinKernel(m gibbs.SpinModel, k int) *spinKernel {
	d := m.Dim()
	sk := &spinKernel{SpinGraph: gibbs.NewSpinGraph(m), d: d, tstart: make([]int, d), beta: make([]float64, k)}
	for i := range d {
		deg := sk.Degree(i)
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
			for pat := range 1 << (sk.Start[i+1] - sk.Start[i]) {
				tab[t+pat] = gibbs.Threshold(b * sk.PatternField(i, pat))
			}
		}
	}
}

// sweep updates the spins b (0 for −1, 1 for +1) in order at level lvl,
// site i by the uniform word draws[i].
func (sk *spinKernel) sweep(b []uint8, lvl int, draws []uint64) {
	draws = draws[:len(b)]
	tab := sk.table[lvl*sk.size : (lvl+1)*sk.size]
	beta := sk.beta[lvl]
	for i := range b {
		lo, hi := sk.Start[i], sk.Start[i+1]
		var th uint64
		if t := sk.tstart[i]; t >= 0 {
			pat := 0
			for j, nb := range sk.Nbr[lo:hi] {
				pat |= int(b[nb]) << j
			}
			th = tab[t+pat]
		} else {
			l := sk.H[i]
			for e := lo; e < hi; e++ {
				l += sk.Cpl[e] * float64(2*int(b[sk.Nbr[e]])-1)
			}
			th = gibbs.Threshold(beta * l)
		}
		// The borrow of u − th is 1 exactly when u < th.
		_, borrow := bits.Sub64(draws[i], th, 0)
		b[i] = uint8(borrow)
	}
}

// logProb returns Σ_i z_i (h_i + ½ Σ_j J_ij z_j) = log p*(z), each edge
// counted once.
func (sk *spinKernel) logProb(b []uint8) float64 {
	var lp float64
	for i, v := range b {
		var pair float64
		for e := sk.Start[i]; e < sk.Start[i+1]; e++ {
			pair += sk.Cpl[e] * float64(2*int(b[sk.Nbr[e]])-1)
		}
		lp += float64(2*int(v)-1) * (sk.H[i] + pair/2)
	}
	return lp
}
