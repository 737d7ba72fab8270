package metrics

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/sampler"
)

// MSE returns (1/d) Σ_i (est_i − exact_i)².
func MSE(est, exact []float64) float64 {
	if len(est) != len(exact) {
		panic(fmt.Sprintf("metrics: %d estimates for %d exact values", len(est), len(exact)))
	}
	var s float64
	for i := range est {
		e := est[i] - exact[i]
		s += e * e
	}
	return s / float64(len(est))
}

// Packed holds samples in a form for fast Hamming distances: for models
// whose variables all have two states, one bit per variable; otherwise one
// byte (state index) per variable.
type Packed struct {
	N, D   int
	binary bool
	words  int      // words per sample when binary
	w      []uint64 // N×words bits
	b      []uint8  // N×D state indices otherwise
}

// Pack packs samples. States beyond 255 are not supported.
func Pack(s *sampler.Samples) *Packed {
	p := &Packed{N: s.N, D: s.D, binary: true}
	for _, v := range s.Z {
		if v > 1 {
			p.binary = false
			break
		}
	}
	if p.binary {
		p.words = (s.D + 63) / 64
		p.w = make([]uint64, s.N*p.words)
		for r := range s.N {
			row := p.w[r*p.words : (r+1)*p.words]
			for i, v := range s.Row(r) {
				if v == 1 {
					row[i/64] |= 1 << (i % 64)
				}
			}
		}
		return p
	}
	p.b = make([]uint8, len(s.Z))
	for k, v := range s.Z {
		if v > 255 {
			panic("metrics: more than 256 states")
		}
		p.b[k] = uint8(v)
	}
	return p
}

// Hamming returns the number of coordinates where sample i of p and sample
// j of q differ.
func Hamming(p *Packed, i int, q *Packed, j int) int {
	if p.binary && q.binary {
		a := p.w[i*p.words : (i+1)*p.words]
		b := q.w[j*q.words : (j+1)*q.words]
		h := 0
		for k := range a {
			h += bits.OnesCount64(a[k] ^ b[k])
		}
		return h
	}
	h := 0
	for k := range p.D {
		if p.state(i, k) != q.state(j, k) {
			h++
		}
	}
	return h
}

func (p *Packed) state(i, k int) uint8 {
	if p.binary {
		return uint8(p.w[i*p.words+k/64] >> (k % 64) & 1)
	}
	return p.b[i*p.D+k]
}

// kernelTable returns exp(−h/d) for h = 0..d.
func kernelTable(d int) []float64 {
	t := make([]float64, d+1)
	for h := range t {
		t[h] = math.Exp(-float64(h) / float64(d))
	}
	return t
}

// crossTask sums the kernel between every sample of a and every sample of
// b, one partial sum per row of a, so that the total does not depend on
// how rows are split.
type crossTask struct {
	a, b  *Packed
	tab   []float64
	same  bool // a == b: include every ordered pair, diagonal too
	row   []float64
	noDia bool // skip i == j (for unbiased sums with a == b)
}

func (t *crossTask) Do(lo, hi int) {
	for i := lo; i < hi; i++ {
		var s float64
		for j := range t.b.N {
			if t.noDia && i == j {
				continue
			}
			s += t.tab[Hamming(t.a, i, t.b, j)]
		}
		t.row[i] = s
	}
}

// kernelSum returns Σ_{i,j} k(a_i, b_j), skipping i = j when noDiag.
func kernelSum(a, b *Packed, tab []float64, noDiag bool) float64 {
	t := &crossTask{a: a, b: b, tab: tab, row: make([]float64, a.N), noDia: noDiag}
	parallel.For(a.N, 16, t)
	var s float64
	for _, v := range t.row {
		s += v
	}
	return s
}

// Reference is an exact sample of a model, with its kernel mean embedding's
// squared norm computed once.
type Reference struct {
	ref  *Packed
	tab  []float64
	pp   float64 // (1/m²) Σ_{r,s} k(R_r, R_s)
	ppU  float64 // (1/(m(m−1))) Σ_{r≠s} k(R_r, R_s)
	d, m int
}

// NewReference prepares MMD computations against the reference sample.
func NewReference(ref *sampler.Samples) *Reference {
	p := Pack(ref)
	r := &Reference{ref: p, tab: kernelTable(ref.D), d: ref.D, m: ref.N}
	// Σ over r≠s once; the diagonal adds m·k(0) = m.
	off := kernelSum(p, p, r.tab, true)
	m := float64(ref.N)
	r.pp = (off + m) / (m * m)
	if ref.N > 1 {
		r.ppU = off / (m * (m - 1))
	}
	return r
}

// Size returns the number of reference samples.
func (r *Reference) Size() int { return r.m }

// MMD2 returns the V-statistic MMD² between the empirical measure of q and
// the reference sample: (1/n²) Σ k(q_i, q_j) − (2/(nm)) Σ k(q_i, R_r) +
// (1/m²) Σ k(R_r, R_s). It is never negative (up to rounding; clamped at 0).
func (r *Reference) MMD2(q *sampler.Samples) float64 {
	if q.D != r.d {
		panic(fmt.Sprintf("metrics: samples of dimension %d against a reference of dimension %d", q.D, r.d))
	}
	p := Pack(q)
	n := float64(q.N)
	qq := kernelSum(p, p, r.tab, false) / (n * n)
	qr := kernelSum(p, r.ref, r.tab, false) / (n * float64(r.m))
	return math.Max(qq-2*qr+r.pp, 0)
}

// MMD2Unbiased returns the unbiased two-sample estimate of MMD² between q
// and the reference sample (diagonal terms left out of both within-sample
// sums). It can be negative.
func (r *Reference) MMD2Unbiased(q *sampler.Samples) float64 {
	if q.N < 2 || r.m < 2 {
		panic("metrics: the unbiased MMD needs at least two samples on each side")
	}
	p := Pack(q)
	n := float64(q.N)
	qq := kernelSum(p, p, r.tab, true) / (n * (n - 1))
	qr := kernelSum(p, r.ref, r.tab, false) / (n * float64(r.m))
	return qq - 2*qr + r.ppU
}

// MMD2ToModel estimates MMD² between the empirical measure of q and the
// model the reference sample was drawn from: the V-statistic terms of q
// (its empirical measure is what is scored) and the unbiased within-
// reference term, so that the estimate carries no 1/m bias from the
// reference's own diagonal. It can be slightly negative for samples very
// close to the model.
func (r *Reference) MMD2ToModel(q *sampler.Samples) float64 {
	if q.D != r.d {
		panic(fmt.Sprintf("metrics: samples of dimension %d against a reference of dimension %d", q.D, r.d))
	}
	if r.m < 2 {
		panic("metrics: MMD2ToModel needs a reference of at least two samples")
	}
	p := Pack(q)
	n := float64(q.N)
	qq := kernelSum(p, p, r.tab, false) / (n * n)
	qr := kernelSum(p, r.ref, r.tab, false) / (n * float64(r.m))
	return qq - 2*qr + r.ppU
}
