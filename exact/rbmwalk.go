// The walk over the hidden configurations of the RBM truth (see RBMTruth):
// chunks of Gray-code steps, fast and exact paths.

package exact

import (
	"math"
	"math/bits"
)

// rbmWalker holds one worker's scratch for walking chunks.
type rbmWalker struct {
	t *RBMTruth
	a []float64 // a at the chunk start, then the slow path's running a
	s []float64 // orientation ±1 per visible unit
	v []float64
	// up[k*d+i] = exp(−4s_i·W_ik) and dn[k*d+i] = exp(4s_i·W_ik) for k < g.
	up, dn     []float64
	f1, f2, f3 []float64 // the factors of the other three low combinations
	ones       []float64
	dlin       []float64    // change of the linear term when unit k < g goes up
	pre, q     [][4]float64 // prefix products and factors of the four lanes
	acc        []float64    // Σ w·P(z_i = s_i | h), relative to exp(ref)
	ps         []float64    // slow path: P(z_i = s_i | h) of one configuration
	sa         []float64    // slow path: a of one configuration
	lw         []float64    // sampling: the log-weights of one chunk
}

func newRBMWalker(t *RBMTruth) *rbmWalker {
	d, g := t.d, t.g
	w := &rbmWalker{
		t: t, a: make([]float64, d), s: make([]float64, d), v: make([]float64, d),
		up: make([]float64, g*d), dn: make([]float64, g*d),
		f1: make([]float64, d), f2: make([]float64, d), f3: make([]float64, d),
		ones: make([]float64, d), dlin: make([]float64, g),
		pre: make([][4]float64, d), q: make([][4]float64, d), acc: make([]float64, d),
		ps: make([]float64, d), sa: make([]float64, d),
		lw: make([]float64, 1<<g),
	}
	for i := range w.ones {
		w.ones[i] = 1
	}
	return w
}

// chunk walks chunk c. With lw nil it returns the chunk's reference ref and
// total Σ_h exp(log w(h) − ref), and leaves in w.acc the sums Σ_h exp(log
// w(h) − ref)·P(z_i = s_i | h) with w.s the orientation. With lw non-nil it
// only writes each configuration's log-weight log w(h) = cᵀh + Σ_i log
// 2cosh(a_i) into lw[local index] (bit k of the local index: h_k = +1).
func (w *rbmWalker) chunk(c int, lw []float64) (ref, tot float64) {
	t := w.t
	lin0 := t.preact(w.a, c<<t.g)
	fast := t.fastOK
	for i, ai := range w.a {
		if ai >= 0 {
			w.s[i] = 1
		} else {
			w.s[i] = -1
		}
		if fast {
			// log v_i = −2|a_i| − 2s_i·Δ_i, Δ_i ∈ [lowLo_i, lowHi_i].
			lo, hi := t.lowLo[i], t.lowHi[i]
			if w.s[i] < 0 {
				lo, hi = -hi, -lo
			}
			if -2*math.Abs(ai)-2*hi < -rbmMaxLogV || -2*math.Abs(ai)-2*lo > rbmMaxLogV {
				fast = false
			}
		}
	}
	for i := range w.acc {
		w.acc[i] = 0
	}
	if fast {
		return w.fastChunk(c, lin0, lw)
	}
	return w.slowChunk(c, lin0, lw)
}

// fastChunk is the multiplicative kernel described on RBMTruth.
func (w *rbmWalker) fastChunk(c int, lin0 float64, lw []float64) (ref, tot float64) {
	t := w.t
	d, g := t.d, t.g
	lin := lin0
	for i, ai := range w.a {
		lin += w.s[i] * ai
		w.v[i] = math.Exp(-2 * math.Abs(ai))
	}
	for k := range g {
		col := t.wt[k*d : (k+1)*d]
		var sw float64
		for i, wk := range col {
			x := 4 * w.s[i] * wk
			sw += w.s[i] * wk
			w.up[k*d+i] = math.Exp(-x)
			w.dn[k*d+i] = math.Exp(x)
		}
		w.dlin[k] = 2*t.c[k] + 2*sw
	}
	copy(w.f1, w.up[:d])
	copy(w.f2, w.up[d:2*d])
	for i := range w.f3 {
		w.f3[i] = math.Exp(-4 * w.s[i] * (t.wt[i] + t.wt[d+i]))
	}
	dl := [4]float64{0, w.dlin[0], w.dlin[1], w.dlin[0] + w.dlin[1]}
	ref = math.Inf(-1)
	gray := 0
	for j := range 1 << (g - 2) {
		gx := w.ones
		if j > 0 {
			kk := bits.TrailingZeros(uint(j))
			k := kk + 2
			if gray>>kk&1 == 0 {
				gx = w.up[k*d : (k+1)*d]
				lin += w.dlin[k]
			} else {
				gx = w.dn[k*d : (k+1)*d]
				lin -= w.dlin[k]
			}
			gray ^= 1 << kk
		}
		p := rbmForward(w.v, gx, w.f1, w.f2, w.f3, w.pre, w.q)
		var lws, cs [4]float64
		var slow [4]bool
		mx := math.Inf(-1)
		for l := range 4 {
			if p[l] <= rbmMaxProd {
				lws[l] = lin + dl[l] + math.Log(p[l])
			} else {
				slow[l] = true
				lws[l] = w.slowState(c<<g | gray<<2 | l)
			}
			mx = max(mx, lws[l])
		}
		if lw != nil {
			copy(lw[gray<<2:gray<<2+4], lws[:])
			continue
		}
		if mx > ref {
			scale := math.Exp(ref - mx)
			tot *= scale
			for i := range w.acc {
				w.acc[i] *= scale
			}
			ref = mx
		}
		for l := range 4 {
			if slow[l] {
				// w.slowState was called for lane l; redo it to refill
				// w.ps (rare). The lane's prefix products may be +Inf:
				// clear them so that the backward pass adds 0 for it.
				lws[l] = w.slowState(c<<g | gray<<2 | l)
				for i := range w.pre {
					w.pre[i][l] = 0
				}
				wt := math.Exp(lws[l] - ref)
				tot += wt
				for i, q := range w.ps {
					w.acc[i] += wt * q
				}
				continue
			}
			cs[l] = math.Exp(lin + dl[l] - ref)
			tot += cs[l] * p[l]
		}
		rbmBackward(w.acc, w.pre, w.q, cs)
	}
	return ref, tot
}

// rbmForward multiplies v by gx, writes the factors 1+v_i·f_l (f_0 = 1) of
// the four lanes into q and their prefix products into pre, and returns the
// full products.
func rbmForward(v, gx, f1, f2, f3 []float64, pre, q [][4]float64) [4]float64 {
	gx, f1, f2, f3, pre, q = gx[:len(v)], f1[:len(v)], f2[:len(v)], f3[:len(v)], pre[:len(v)], q[:len(v)]
	p0, p1, p2, p3 := 1.0, 1.0, 1.0, 1.0
	for i := range v {
		vb := v[i] * gx[i]
		v[i] = vb
		pre[i] = [4]float64{p0, p1, p2, p3}
		q0, q1, q2, q3 := 1+vb, 1+vb*f1[i], 1+vb*f2[i], 1+vb*f3[i]
		q[i] = [4]float64{q0, q1, q2, q3}
		p0 *= q0
		p1 *= q1
		p2 *= q2
		p3 *= q3
	}
	return [4]float64{p0, p1, p2, p3}
}

// rbmBackward adds Σ_l cs_l·Π_{j≠i} q_j,l to acc[i] for every i, with suffix
// products run backwards against the prefix products in pre.
func rbmBackward(acc []float64, pre, q [][4]float64, cs [4]float64) {
	pre, q = pre[:len(acc)], q[:len(acc)]
	s0, s1, s2, s3 := cs[0], cs[1], cs[2], cs[3]
	for i := len(acc) - 1; i >= 0; i-- {
		pr, qi := pre[i], q[i]
		acc[i] += pr[0]*s0 + pr[1]*s1 + pr[2]*s2 + pr[3]*s3
		s0 *= qi[0]
		s1 *= qi[1]
		s2 *= qi[2]
		s3 *= qi[3]
	}
}

// slowChunk walks the chunk along a Gray code over all g low units, updating
// a additively (from w.a, computed from scratch at the chunk start).
func (w *rbmWalker) slowChunk(c int, lin0 float64, lw []float64) (ref, tot float64) {
	t := w.t
	d, g := t.d, t.g
	a := w.sa
	copy(a, w.a)
	lin := lin0
	ref = math.Inf(-1)
	gray := 0
	for j := range 1 << g {
		if j > 0 {
			k := bits.TrailingZeros(uint(j))
			col := t.wt[k*d : (k+1)*d]
			col = col[:len(a)]
			if gray>>k&1 == 0 {
				lin += 2 * t.c[k]
				for i := range a {
					a[i] += 2 * col[i]
				}
			} else {
				lin -= 2 * t.c[k]
				for i := range a {
					a[i] -= 2 * col[i]
				}
			}
			gray ^= 1 << k
		}
		x := lin + w.stateFrom(a)
		if lw != nil {
			lw[gray] = x
			continue
		}
		if x > ref {
			scale := math.Exp(ref - x)
			tot *= scale
			for i := range w.acc {
				w.acc[i] *= scale
			}
			ref = x
		}
		wt := math.Exp(x - ref)
		tot += wt
		for i, q := range w.ps {
			w.acc[i] += wt * q
		}
	}
	return ref, tot
}

// slowState computes configuration hidx from scratch: it returns its
// log-weight and leaves P(z_i = s_i | h) in w.ps.
func (w *rbmWalker) slowState(hidx int) float64 {
	lin := w.t.preact(w.sa, hidx)
	return lin + w.stateFrom(w.sa)
}

// stateFrom returns Σ_i log 2cosh(a_i) and writes P(z_i = s_i | h) into w.ps,
// with one exp per unit: e = exp(−2|a_i|), log 2cosh(a_i) = |a_i| + log(1+e),
// σ(2|a_i|) = 1/(1+e).
func (w *rbmWalker) stateFrom(a []float64) float64 {
	s, ps := w.s[:len(a)], w.ps[:len(a)]
	var sum float64
	prod := 1.0
	for i, ai := range a {
		x := math.Abs(ai)
		e := math.Exp(-2 * x)
		sum += x
		q := 1 / (1 + e)
		if (ai >= 0) == (s[i] > 0) {
			ps[i] = q
		} else {
			ps[i] = e * q
		}
		prod *= 1 + e
		if i%rbmLogBlock == rbmLogBlock-1 {
			sum += math.Log(prod)
			prod = 1
		}
	}
	return sum + math.Log(prod)
}
