package pt

import (
	"github.com/dstein/dstein/internal/vec"
	"github.com/dstein/dstein/internal/vexp"
	"github.com/dstein/dstein/model"
)

// rbmModel is an RBM with ±1 visible units z and ±1 hidden units h,
// log p*(z) = bᵀz + Σ_k log 2cosh(W_kᵀz + c_k), the marginal of the joint
// log p(z, h) = bᵀz + Σ_k h_k (W_kᵀz + c_k) + const (package model/rbm).
type rbmModel interface {
	model.Model
	Hidden() int
	// HiddenWeights returns column k of W (length d).
	HiddenWeights(k int) []float64
	VisibleBias() []float64
	HiddenBias() []float64
}

// rbmKernel sweeps the replicas of an RBM by block Gibbs on the tempered
// joint distribution of visible and hidden units: replica k targets
// π_β(z, h) ∝ exp(β·L(z, h)), L(z, h) = bᵀz + hᵀ(Wᵀz + c), whose β = 1
// marginal in z is p*. A sweep draws every hidden unit given z
// (P(h_k = +1) = σ(2β a_k), a = Wᵀz + c), then every visible unit given
// h (P(z_i = +1) = σ(2β u_i), u = b + W h): two matrix–vector products
// instead of d single-site conditionals of O(M) exponentials and
// logarithms each. Swaps compare L, so the product of the tempered joints
// is invariant and the β = 1 replica's z are draws of p*. Tempering the
// joint, not the marginal p*^β, is what makes both blocks exact at every
// β (Desjardins et al. 2010 temper RBMs the same way).
type rbmKernel struct {
	d, m int
	b, c []float64
	wt   []float64 // wt[k*d+i] = W_ik: hidden unit k's weights
	w    []float64 // w[i*m+k] = W_ik: visible unit i's weights
}

func newRBMKernel(r rbmModel) *rbmKernel {
	d, m := r.Dim(), r.Hidden()
	rk := &rbmKernel{d: d, m: m, b: r.VisibleBias(), c: r.HiddenBias(), wt: make([]float64, d*m), w: make([]float64, d*m)}
	for k := range m {
		col := r.HiddenWeights(k)
		copy(rk.wt[k*d:(k+1)*d], col)
		for i, v := range col {
			rk.w[i*m+k] = v
		}
	}
	return rk
}

// rbmKernelBytes is the kernel's memory: both layouts of W.
func rbmKernelBytes(d, m float64) float64 { return 16 * d * m }

// rbmReplica is one replica's state: the visible and hidden spins (±1)
// and a = Wᵀz + c for the current z.
type rbmReplica struct {
	z, h, a []float64
}

// newReplica returns a replica at the state indices zi (hidden units +1
// until the first sweep draws them).
func (rk *rbmKernel) newReplica(zi []int) rbmReplica {
	rp := rbmReplica{z: make([]float64, rk.d), h: make([]float64, rk.m), a: make([]float64, rk.m)}
	for i, s := range zi {
		rp.z[i] = float64(2*s - 1)
	}
	for k := range rp.h {
		rp.h[k] = 1
	}
	rk.preact(rp.a, rp.z)
	return rp
}

// preact writes a = Wᵀz + c, four visible units at a time.
func (rk *rbmKernel) preact(a, z []float64) {
	copy(a, rk.c)
	m := rk.m
	i := 0
	var t [4]float64
	for ; i+4 <= rk.d; i += 4 {
		t = [4]float64{z[i], z[i+1], z[i+2], z[i+3]}
		vec.AddMul4(a, &t, rk.w[i*m:(i+1)*m], rk.w[(i+1)*m:(i+2)*m], rk.w[(i+2)*m:(i+3)*m], rk.w[(i+3)*m:(i+4)*m])
	}
	for ; i < rk.d; i++ {
		vec.AddMul(a, z[i], rk.w[i*m:(i+1)*m])
	}
}

// sweep draws the hidden then the visible units of rp at inverse
// temperature beta from the m + d uniform words in draws (hidden units
// first; u is scratch of length d) and returns L(z, h).
func (rk *rbmKernel) sweep(rp *rbmReplica, beta float64, u []float64, draws []uint64) float64 {
	hd, vd := draws[:rk.m], draws[rk.m:rk.m+rk.d]
	drawSpins(rp.h, rp.a, beta, hd)
	copy(u, rk.b)
	d := rk.d
	k := 0
	var t [4]float64
	for ; k+4 <= rk.m; k += 4 {
		t = [4]float64{rp.h[k], rp.h[k+1], rp.h[k+2], rp.h[k+3]}
		vec.AddMul4(u, &t, rk.wt[k*d:(k+1)*d], rk.wt[(k+1)*d:(k+2)*d], rk.wt[(k+2)*d:(k+3)*d], rk.wt[(k+3)*d:(k+4)*d])
	}
	for ; k < rk.m; k++ {
		vec.AddMul(u, rp.h[k], rk.wt[k*d:(k+1)*d])
	}
	drawSpins(rp.z, u, beta, vd)
	var lv float64
	for i, zi := range rp.z {
		lv += rk.b[i] * zi
	}
	rk.preact(rp.a, rp.z)
	for k, a := range rp.a {
		lv += rp.h[k] * a
	}
	return lv
}

// drawSpins sets s[i] = +1 when the word w[i] falls below
// gibbs.Threshold(beta·l[i]), else −1: P(+1) = σ(2β l_i). It takes the
// exponentials of a block of units together (vexp.Exp, math.Exp's bits),
// so the spins are those of Threshold one unit at a time.
func drawSpins(s, l []float64, beta float64, w []uint64) {
	var e [spinBlock]float64
	for k0 := 0; k0 < len(l); k0 += spinBlock {
		blk := e[:min(spinBlock, len(l)-k0)]
		for j := range blk {
			blk[j] = -2 * (beta * l[k0+j])
		}
		vexp.Exp(blk, blk)
		vec.Spins(s[k0:k0+len(blk)], blk, w[k0:]) // +1 where w < gibbs.ThresholdFromExp
	}
}

// spinBlock is the number of units whose exponentials drawSpins takes
// together.
const spinBlock = 64

// states writes the state indices of rp's visible units.
func (rp *rbmReplica) states(dst []int) {
	for i, v := range rp.z {
		dst[i] = int(v+1) / 2
	}
}
