package exact

import (
	"context"
	"fmt"
	"math"
	"math/bits"

	"github.com/dstein/dstein/internal/gemm"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/rbm"
)

// rbmPairBlock is how many hidden configurations RBMPairs folds into one
// matrix product (fewer when the RBM has fewer); fixed, so that rounding
// does not depend on GOMAXPROCS.
const rbmPairBlock = 256

// rbmLogProdBlock is how many factors 1 + e ∈ (1, 2] RBMPairs multiplies
// before taking a log, so that the product cannot overflow.
const rbmLogProdBlock = 512

// rbmPairsWork is the work of RBMPairs in the units of MaxPairsWork.
func rbmPairsWork(d, m int) float64 {
	fd := float64(d)
	return math.Ldexp(fd*fd/2+20*fd, m)
}

// rbmPairsApplies reports whether PairsFor takes the hidden route for r:
// within MaxHidden and MaxPairsWork, and cheaper than enumerating the
// visible units (as For decides).
func rbmPairsApplies(r *rbm.RBM) bool {
	return r.Hidden() <= MaxHidden && (r.Hidden() < r.Dim() || model.StateCount(r) > DefaultMaxStates) &&
		rbmPairsWork(r.Dim(), r.Hidden()) <= MaxPairsWork
}

// rbmPairsBytes is RBMPairs' memory beyond the pair tables: the d×d
// accumulator and block product, two d×block matrices, and NewRBM's.
func rbmPairsBytes(d int) float64 {
	fd := float64(d)
	return 8*2*fd*fd + 8*2*fd*rbmPairBlock + 8*4*fd*MaxHidden + 1<<20
}

// RBMPairs returns the exact pair marginals of an RBM with ±1 units by
// enumerating its 2^M hidden configurations: given h the visible units are
// independent with E[z_i | h] = tanh(a_i), a = Wh + b, so that for i ≠ j
//
//	E[z_i z_j] = Σ_h p(h)·tanh(a_i)·tanh(a_j),  p(h) ∝ exp(cᵀh) Π_i 2cosh(a_i),
//
// and P(z_i = s, z_j = t) = (1 + s·m_i + t·m_j + s·t·E[z_i z_j])/4 in ±1
// values, with the means m from NewRBM (which also gives log Z, so that
// every weight p(h) ≤ 1 is formed directly). Configurations are visited in
// blocks of 256 in Gray-code order (a updated by one column of W per step,
// recomputed at each block start); each block adds the product
// (p·T)·Tᵀ of its d×256 matrix T of tanh values to a d×d accumulator (the
// lower triangle, on the worker pool), in block order, so results do not
// depend on GOMAXPROCS. Cost: about 2^M·(d²/2 + 20d) operations (25 ms for
// d = 100, M = 12, one core); RBMPairs refuses more than MaxHidden hidden
// units or work over MaxPairsWork.
func RBMPairs(ctx context.Context, r *rbm.RBM, budget memlimit.Budget) (*Pairs, error) {
	if r == nil {
		return nil, fmt.Errorf("exact: RBMPairs needs an RBM, got nil")
	}
	d, m := r.Dim(), r.Hidden()
	if m > MaxHidden {
		return nil, tooLarge("exact: the RBM has %d hidden units; hidden enumeration is limited to MaxHidden = %d", m, MaxHidden)
	}
	if w := rbmPairsWork(d, m); w > MaxPairsWork {
		return nil, fmt.Errorf("exact: pair moments of an RBM with %d visible and %d hidden units cost about %.3g operations, over MaxPairsWork = %.3g", d, m, w, float64(MaxPairsWork))
	}
	card := make([]int, d)
	vals := make([][]float64, d)
	for i := range card {
		card[i], vals[i] = 2, r.States(i)
	}
	if err := budget.Check("pair marginals of the RBM", memlimit.Base+pairsBytes(card)+rbmPairsBytes(d)); err != nil {
		return nil, err
	}
	t, err := newRBMTruthContext(ctx, r, rbmChunkBits, false)
	if err != nil {
		return nil, err
	}
	res := t.Result()
	acc, err := t.pairMoments(ctx, res.LogZ)
	if err != nil {
		return nil, err
	}
	p := newPairs(card, vals, "rbm-hidden")
	for i := range d {
		p.marg[i] = append([]float64(nil), res.Marginals[i]...)
	}
	for i := range d {
		for j := i + 1; j < d; j++ {
			e := acc[j*d+i] // lower triangle
			// The spin means E[±1 form of z], whatever values the RBM's
			// states report.
			mi := res.Marginals[i][1] - res.Marginals[i][0]
			mj := res.Marginals[j][1] - res.Marginals[j][0]
			tab := p.Joint(i, j)
			for s := range 2 {
				for u := range 2 {
					S, U := model.Spin(s), model.Spin(u)
					tab[2*s+u] = clampProb((1 + S*mi + U*mj + S*U*e) / 4)
				}
			}
		}
	}
	return p, nil
}

// pairMoments returns the d×d matrix whose lower triangle holds E[z_i z_j]
// (i > j).
func (t *RBMTruth) pairMoments(ctx context.Context, logZ float64) ([]float64, error) {
	d := t.d
	blk := min(rbmPairBlock, 1<<t.m)
	acc := make([]float64, d*d)
	prod := make([]float64, d*d)
	wt := make([]float64, d*blk) // p(h)·tanh(a_i), variable-major
	th := make([]float64, d*blk) // tanh(a_i)
	mul := &gemm.ABt{C: prod, A: wt, B: th, M: d, N: d, K: blk, Ldc: d, Lda: blk, Ldb: blk, Lower: true}
	err := t.walkHidden(ctx, logZ, blk, func(step int, tanh []float64, w float64) {
		for i, v := range tanh {
			th[i*blk+step] = v
			wt[i*blk+step] = w * v
		}
	}, func() {
		mul.Mul()
		for i := 1; i < d; i++ {
			ra, rp := acc[i*d:i*d+i], prod[i*d:i*d+i]
			for j, v := range rp {
				ra[j] += v
			}
		}
	})
	return acc, err
}

// walkHidden visits every hidden configuration h in blocks of blk (a power
// of two dividing 2^M), in Gray-code order within each block, calling
// config with the configuration's index in its block, tanh(a_i) = E[z_i | h]
// and its probability p(h) = exp(log weight − logZ), and block after each
// block. a = Wh + b is updated by one column of W per step and recomputed at
// each block start; ctx is checked at each block.
func (t *RBMTruth) walkHidden(ctx context.Context, logZ float64, blk int, config func(step int, tanh []float64, w float64), block func()) error {
	d, m := t.d, t.m
	a := make([]float64, d)
	th := make([]float64, d)
	h := make([]float64, m)
	for h0 := 0; h0 < 1<<m; h0 += blk {
		if err := ctx.Err(); err != nil {
			return err
		}
		lin := t.preact(a, h0)
		for k := range h {
			h[k] = -1
			if h0>>k&1 == 1 {
				h[k] = 1
			}
		}
		for step := range blk {
			if step > 0 {
				// Gray code: configuration h0 ^ gray(step) differs from
				// the previous one in bit trailingZeros(step).
				k := bits.TrailingZeros(uint(step))
				h[k] = -h[k]
				lin += 2 * h[k] * t.c[k]
				col := t.wt[k*d : (k+1)*d]
				col = col[:len(a)]
				f := 2 * h[k]
				for i := range a {
					a[i] += f * col[i]
				}
			}
			// log Π 2cosh(a_i) = Σ |a_i| + Σ log(1 + e_i), e_i = exp(−2|a_i|);
			// tanh(a_i) = sign(a_i)·(1 − e_i)/(1 + e_i).
			var abs, logs float64
			prodE := 1.0
			for i, ai := range a {
				x := math.Abs(ai)
				e := math.Exp(-2 * x)
				abs += x
				prodE *= 1 + e
				if (i+1)%rbmLogProdBlock == 0 {
					logs += math.Log(prodE)
					prodE = 1
				}
				tv := (1 - e) / (1 + e)
				if ai < 0 {
					tv = -tv
				}
				th[i] = tv
			}
			config(step, th, math.Exp(lin+abs+logs+math.Log(prodE)-logZ))
		}
		block()
	}
	return nil
}
