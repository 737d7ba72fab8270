package metrics

import (
	"context"
	"fmt"
	"math"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
)

// FirstOrderMMD2 returns the first-order part of MMD² (kernel exp(−H/d),
// see the package documentation) between distributions whose one-variable marginals are
// marginals and exactMarginals (for variable i, one probability per state;
// K_i = len(exactMarginals[i])): Σ_i (1−c)·Π_{j≠i}(c + (1−c)/K_j)·
// Σ_s (q_i(s) − p_i(s))², c = exp(−1/d). It is 0 for no variables and
// panics on mismatched lengths. Cost O(Σ K_i).
func FirstOrderMMD2(marginals, exactMarginals [][]float64) float64 {
	d := len(exactMarginals)
	if len(marginals) != d {
		panic(fmt.Sprintf("metrics: %d marginals against %d exact ones", len(marginals), d))
	}
	if d == 0 {
		return 0
	}
	c := math.Exp(-1 / float64(d))
	// Π_j α_j with every α_j ∈ [c, 1], so the product stays ≥ e^−1.
	all := 1.0
	for i, p := range exactMarginals {
		if len(marginals[i]) != len(p) {
			panic(fmt.Sprintf("metrics: variable %d has %d estimated and %d exact state probabilities", i, len(marginals[i]), len(p)))
		}
		all *= c + (1-c)/float64(len(p))
	}
	var s float64
	for i, p := range exactMarginals {
		var e float64
		for k, v := range p {
			x := marginals[i][k] - v
			e += x * x
		}
		s += all / (c + (1-c)/float64(len(p))) * e
	}
	return (1 - c) * s
}

// MMD2Dists returns MMD² with the kernel exp(−H/d) between two distributions
// q and p over the joint states of variables with card[i] states (odometer
// order, the last variable fastest; each of length Π K_i) and its parts by
// order: orders[r] is the part of the subsets of r variables (r = 0 … d),
// and the orders sum to total up to rounding. Neither q nor p need be
// normalised (an empty sample's all-zero q gives a positive order 0).
//
// total is computed directly as ⟨D, K D⟩, D = q − p, applying the kernel's
// factor c·J + (1−c)·I along each axis; the orders come from another
// computation, an orthonormal Helmert basis along each axis (first vector
// constant, with eigenvalue c·K_i + 1 − c, the others with 1 − c), so the
// two check each other. Cost O(Π K_i · Σ K_i), memory 16·Π K_i bytes. It
// panics on mismatched lengths.
func MMD2Dists(card []int, q, p []float64) (total float64, orders []float64) {
	n := 1
	for _, k := range card {
		n *= k
	}
	if len(q) != n || len(p) != n {
		panic(fmt.Sprintf("metrics: distributions of %d and %d entries over %d joint states", len(q), len(p), n))
	}
	d := len(card)
	c := math.Exp(-1 / float64(d))
	diff := make([]float64, n)
	for k := range diff {
		diff[k] = q[k] - p[k]
	}
	kd := append([]float64(nil), diff...)
	var buf []float64
	stride := n
	for _, k := range card {
		stride /= k
		buf = alongAxis(kd, k, stride, buf, func(x []float64) {
			var s float64
			for _, v := range x {
				s += v
			}
			for t := range x {
				x[t] = c*s + (1-c)*x[t]
			}
		})
	}
	for k, v := range diff {
		total += v * kd[k]
	}

	// Helmert basis: y_0 = Σx/√K, y_r = (Σ_{s<r} x_s − r·x_r)/√(r(r+1)).
	stride = n
	for _, k := range card {
		stride /= k
		buf = alongAxis(diff, k, stride, buf, func(x []float64) {
			var sum float64
			for _, v := range x {
				sum += v
			}
			pre := x[0]
			for r := 1; r < len(x); r++ {
				xr := x[r]
				x[r] = (pre - float64(r)*xr) / math.Sqrt(float64(r*(r+1)))
				pre += xr
			}
			x[0] = sum / math.Sqrt(float64(len(x)))
		})
	}
	lam0 := make([]float64, d)
	for i, k := range card {
		lam0[i] = c*float64(k) + 1 - c
	}
	orders = make([]float64, d+1)
	z := make([]int, d)
	for _, y := range diff {
		w := 1.0
		r := 0
		for i, s := range z {
			if s == 0 {
				w *= lam0[i]
			} else {
				w *= 1 - c
				r++
			}
		}
		orders[r] += w * y * y
		for i := d - 1; i >= 0; i-- {
			z[i]++
			if z[i] < card[i] {
				break
			}
			z[i] = 0
		}
	}
	return total, orders
}

// alongAxis applies f in place to every fiber of t along the axis with k
// states and the given stride (row-major, last axis fastest), through buf,
// which it returns for reuse.
func alongAxis(t []float64, k, stride int, buf []float64, f func(x []float64)) []float64 {
	buf = append(buf[:0], make([]float64, k)...)
	for base := 0; base < len(t); base += k * stride {
		for o := range stride {
			for s := range k {
				buf[s] = t[base+s*stride+o]
			}
			f(buf)
			for s := range k {
				t[base+s*stride+o] = buf[s]
			}
		}
	}
	return buf
}

// ExactMMD2 returns the V-statistic MMD² (kernel exp(−H/d)) between the
// empirical distribution of the rows of s and the exact distribution of m,
// E_QQ k − 2·E_QP k + E_PP k with P computed by enumerating every joint
// state (exact.LogProbs, at most maxStates, DefaultMaxStates when
// maxStates ≤ 0), and its parts by order (MMD2Dists). It is what
// Reference.MMD2 estimates with an infinite reference sample. An empty
// sample is the zero measure: MMD² = E_PP k, all in order 0 and above.
// Memory: 32 bytes per joint state.
func ExactMMD2(ctx context.Context, m model.Model, s *sampler.Samples, maxStates int) (total float64, orders []float64, err error) {
	if s.D != m.Dim() {
		panic(fmt.Sprintf("metrics: samples of dimension %d for a model of dimension %d", s.D, m.Dim()))
	}
	lp, logZ, err := exact.LogProbs(ctx, m, maxStates)
	if err != nil {
		return 0, nil, err
	}
	card := make([]int, m.Dim())
	for i := range card {
		card[i] = len(m.States(i))
	}
	p := make([]float64, len(lp))
	for k, v := range lp {
		p[k] = math.Exp(v - logZ)
	}
	q := lp[:len(p)] // reuse: the log-probabilities are no longer needed
	clear(q)
	inv := 1 / float64(max(s.N, 1))
	for r := range s.N {
		idx := 0
		for i, st := range s.Row(r) {
			if st < 0 || st >= card[i] {
				panic(fmt.Sprintf("metrics: sample %d has state %d for variable %d of %d states", r, st, i, card[i]))
			}
			idx = idx*card[i] + st
		}
		q[idx] += inv
	}
	total, orders = MMD2Dists(card, q, p)
	return total, orders, nil
}
