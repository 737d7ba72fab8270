package compress

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/stein"
)

// DefaultMaxReference is Options.MaxReference when it is 0.
const DefaultMaxReference = 20000

// Options configure a compression. The zero value is valid.
type Options struct {
	// Ell is the bandwidth ℓ of the Hamming kernel exp(−H/ℓ); 0 takes the
	// better bandwidth measured on a 4×4 grid (README, "Representative
	// points"): d/4 (at least 1) for Herd, 1 for SteinThin, d for
	// SteinWeights.
	Ell float64
	// MaxReference caps the distinct states against which herding's mean
	// embedding is computed (0: DefaultMaxReference).
	MaxReference int
	// Regularize, for SteinThin, is the strength λ of the entropic
	// regulariser of Bénard, Staber and Da Veiga (2023): step t + 1 also
	// subtracts λ·(t+1)·log p*(x), which keeps the greedy choice away from
	// improbable states whose Stein kernel happens to be small. 0 turns it
	// off; Bénard et al. take λ = 1/n for n points. (Their second term, the
	// positive part of the Laplacian of log p, has no discrete
	// counterpart here.)
	Regularize float64
}

func (o Options) resolved(defaultEll float64) (Options, error) {
	if o.Ell == 0 {
		o.Ell = defaultEll
	}
	if !(o.Ell > 0) || math.IsInf(o.Ell, 0) {
		return o, fmt.Errorf("compress: bandwidth ℓ = %v; want a positive finite number", o.Ell)
	}
	if o.MaxReference == 0 {
		o.MaxReference = DefaultMaxReference
	}
	if o.MaxReference < 1 {
		return o, fmt.Errorf("compress: MaxReference = %d; want at least 1", o.MaxReference)
	}
	if !(o.Regularize >= 0) || math.IsInf(o.Regularize, 0) {
		return o, fmt.Errorf("compress: regularisation λ = %v; want a finite number ≥ 0", o.Regularize)
	}
	return o, nil
}

// Result is a compression: Index[t] is the row of the candidates chosen at
// step t (a candidate may be chosen more than once), and Points the chosen
// states, n×d.
type Result struct {
	Index  []int
	Points *sampler.Samples
	// Distinct is the number of distinct candidate states, Reference the
	// number of draws herding's mean embedding was computed against (all
	// of them unless the cap applied).
	Distinct, Reference int
	// Ell is the bandwidth ℓ used (Options.Ell or the rule's default).
	Ell float64
}

// Repeats counts the points that repeat an earlier point's state.
func (r *Result) Repeats() int {
	return len(r.Index) - len(slices.Compact(slices.Sorted(slices.Values(r.Index))))
}

// distinct groups the candidates' rows by state: first[u] is the first row
// of distinct state u, mass[u] its multiplicity (weights summed when w is
// not nil), and of[i] the distinct state of row i.
func distinct(c *sampler.Samples, w []float64) (first []int, mass []float64, of []int) {
	seen := map[string]int{}
	d := c.D
	of = make([]int, c.N)
	key := make([]byte, 0, 4*d)
	for i := range c.N {
		key = key[:0]
		for _, v := range c.Z[i*d : (i+1)*d] {
			key = append(key, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
		}
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		u, ok := seen[string(key)]
		if !ok {
			u = len(first)
			seen[string(key)] = u
			first = append(first, i)
			mass = append(mass, 0)
		}
		mass[u] += wi
		of[i] = u
	}
	return first, mass, of
}

// MaxPoints returns the most points of d variables that Herd and SteinThin
// return, whatever the memory: the points' states and indices take
// 8·n·(d+1) bytes, which must stay under 2^48 bytes (256 TiB, the largest
// allocation of a 64-bit Go process). Within it, Memory and PointsMemory
// are what a memory budget should check.
func MaxPoints(d int) int {
	return int((1 << 48) / (8 * (float64(max(d, 0)) + 1)))
}

func check(c *sampler.Samples, w []float64, n int) error {
	switch {
	case c == nil || c.N == 0:
		return fmt.Errorf("compress: no candidates")
	case n < 1:
		return fmt.Errorf("compress: n = %d; want at least 1", n)
	case n > MaxPoints(c.D):
		return fmt.Errorf("compress: n = %d points of %d variables; at most %d fit in memory", n, c.D, MaxPoints(c.D))
	case w != nil && len(w) != c.N:
		return fmt.Errorf("compress: %d weights for %d candidates", len(w), c.N)
	}
	var tot float64
	for i, v := range w {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("compress: weight %d is %v; want a finite number ≥ 0", i, v)
		}
		tot += v
	}
	if w != nil && tot == 0 {
		return fmt.Errorf("compress: every weight is 0")
	}
	return nil
}

// states holds the distinct candidate states for Hamming distances:
// bit-packed (one bit per variable, 64 per word) when every variable has
// at most two states, so that a distance is a few XORs and popcounts, else
// as state indices.
type states struct {
	d, words int
	bits     []uint64 // words per state, when packed
	z        [][]int  // otherwise
}

func newStates(c *sampler.Samples, rows []int) *states {
	d := c.D
	binary := true
	for _, v := range c.Z[:c.N*d] {
		if v > 1 {
			binary = false
			break
		}
	}
	st := &states{d: d}
	if !binary {
		for _, i := range rows {
			st.z = append(st.z, c.Z[i*d:(i+1)*d])
		}
		return st
	}
	st.words = (d + 63) / 64
	st.bits = make([]uint64, len(rows)*st.words)
	for a, i := range rows {
		w := st.bits[a*st.words : (a+1)*st.words]
		for l, v := range c.Z[i*d : (i+1)*d] {
			w[l/64] |= uint64(v) << (l % 64)
		}
	}
	return st
}

// dist returns the Hamming distance between distinct states a and b of
// sets s and t (the same layout).
func (s *states) dist(a int, t *states, b int) int {
	if s.bits == nil {
		return hamming(s.z[a], t.z[b])
	}
	x := s.bits[a*s.words : (a+1)*s.words]
	y := t.bits[b*s.words : (b+1)*s.words]
	h := 0
	for k, v := range x {
		h += bits.OnesCount64(v ^ y[k])
	}
	return h
}

// hamming returns the number of coordinates where a and b differ.
func hamming(a, b []int) int {
	h := 0
	for l, v := range a {
		if v != b[l] {
			h++
		}
	}
	return h
}

func pick(c *sampler.Samples, rows []int) *sampler.Samples {
	out := sampler.NewSamples(len(rows), c.D)
	for t, i := range rows {
		copy(out.Z[t*c.D:(t+1)*c.D], c.Z[i*c.D:(i+1)*c.D])
	}
	return out
}

// Herd picks n points from the candidates c (with weights w, or equal
// weights when w is nil) by kernel herding with k = exp(−H/ℓ): at step
// t + 1 the candidate x maximising μ(x) − (1/(t+1)) Σ_{s≤t} k(x, x_s),
// μ(x) = Σ_j w_j k(x, c_j) / Σ_j w_j, which is the greedy minimiser of the
// MMD² between the chosen points and the weighted candidates (k(x, x) = 1).
// Ties go to the earliest distinct state, so the result is deterministic.
func Herd(ctx context.Context, c *sampler.Samples, w []float64, n int, o Options) (*Result, error) {
	if err := check(c, w, n); err != nil {
		return nil, err
	}
	o, err := o.resolved(max(1, float64(c.D)/4))
	if err != nil {
		return nil, err
	}
	first, mass, _ := distinct(c, w)
	u, d := len(first), c.D
	kOf := make([]float64, d+1)
	for h := range kOf {
		kOf[h] = math.Exp(-float64(h) / o.Ell)
	}
	// The reference measure: the distinct states with their masses, or an
	// evenly spaced sub-sample of the draws.
	refRows, refMass := first, mass
	reference := c.N
	if u > o.MaxReference {
		refRows, refMass = make([]int, o.MaxReference), make([]float64, o.MaxReference)
		for r := range refRows {
			i := int((float64(r) + 0.5) * float64(c.N) / float64(o.MaxReference))
			refRows[r] = i
			refMass[r] = 1
			if w != nil {
				refMass[r] = w[i]
			}
		}
		reference = o.MaxReference
	}
	var tot float64
	for _, m := range refMass {
		tot += m
	}
	cand, ref := newStates(c, first), newStates(c, refRows)
	mu := make([]float64, u)
	for a := range u {
		if a%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		var s float64
		for r := range refRows {
			s += refMass[r] * kOf[cand.dist(a, ref, r)]
		}
		mu[a] = s / tot
	}
	sum := make([]float64, u) // Σ_{s≤t} k(x, x_s)
	res := &Result{Index: make([]int, n), Distinct: u, Reference: reference, Ell: o.Ell}
	for t := range n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		best, bestV := 0, math.Inf(-1)
		for a := range u {
			if v := mu[a] - sum[a]/float64(t+1); v > bestV {
				best, bestV = a, v
			}
		}
		res.Index[t] = first[best]
		for a := range u {
			sum[a] += kOf[cand.dist(a, cand, best)]
		}
	}
	res.Points = pick(c, res.Index)
	return res, nil
}

// SteinThin picks n points from the candidates c by greedy Stein thinning
// (Riabiz et al. 2022): at step t + 1 the candidate x minimising
// κ(x, x)/2 + Σ_{s≤t} κ(x, x_s), κ the discrete Stein kernel of m with the
// Hamming kernel exp(−H/ℓ) (package stein), which greedily minimises the
// kernel Stein discrepancy of the chosen points. It needs m only up to its
// normaliser and can correct the candidates' bias, but not create states
// the candidates lack. Ties go to the earliest distinct state.
func SteinThin(ctx context.Context, m model.Model, c *sampler.Samples, n int, o Options) (*Result, error) {
	if err := check(c, nil, n); err != nil {
		return nil, err
	}
	if c.D != m.Dim() {
		return nil, fmt.Errorf("compress: candidates have %d variables, the model %d", c.D, m.Dim())
	}
	o, err := o.resolved(1)
	if err != nil {
		return nil, err
	}
	first, _, _ := distinct(c, nil)
	u := len(first)
	pts, k, err := steinOf(m, c, first, o.Ell)
	if err != nil {
		return nil, err
	}
	obj := make([]float64, u) // κ(x, x)/2 + Σ_{s≤t} κ(x, x_s) − λ(t+1) log p*(x)
	var reg []float64         // λ log p*(x)
	if o.Regularize > 0 {
		reg = make([]float64, u)
	}
	for a := range u {
		obj[a] = k.Eval(pts, a, pts, a) / 2
		if reg != nil {
			lp := m.LogProb(c.Row(first[a]))
			if math.IsInf(lp, -1) {
				reg[a] = math.Inf(-1) // never chosen
			} else {
				reg[a] = o.Regularize * lp
			}
		}
	}
	res := &Result{Index: make([]int, n), Distinct: u, Reference: c.N, Ell: o.Ell}
	for t := range n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		best, bestV := 0, math.Inf(1)
		for a := range u {
			if reg != nil {
				obj[a] -= reg[a]
			}
			if obj[a] < bestV {
				best, bestV = a, obj[a]
			}
		}
		res.Index[t] = first[best]
		for a := range u {
			obj[a] += k.Eval(pts, a, pts, best)
		}
	}
	res.Points = pick(c, res.Index)
	return res, nil
}

// steinOf prepares the distinct states (rows first of c) for the Stein
// kernel of m with bandwidth ell.
func steinOf(m model.Model, c *sampler.Samples, first []int, ell float64) (*stein.Points, *stein.Kernel, error) {
	d := c.D
	z := make([]int, len(first)*d)
	for a, i := range first {
		copy(z[a*d:(a+1)*d], c.Z[i*d:(i+1)*d])
	}
	pts, err := stein.Prepare(m, z, len(first))
	if err != nil {
		return nil, nil, fmt.Errorf("compress: %w", err)
	}
	k, err := stein.NewKernel(d, ell)
	if err != nil {
		return nil, nil, err
	}
	return pts, k, nil
}

// KSD2 returns the squared kernel Stein discrepancy of the points (equal
// weights), (1/n²) Σ_{i,j} κ(z_i, z_j), with the Hamming kernel exp(−H/ℓ):
// zero in expectation only for points distributed as m, up to O(1/n).
func KSD2(m model.Model, s *sampler.Samples, ell float64) (float64, error) {
	pts, err := stein.Prepare(m, s.Z[:s.N*s.D], s.N)
	if err != nil {
		return 0, fmt.Errorf("compress: %w", err)
	}
	k, err := stein.NewKernel(s.D, ell)
	if err != nil {
		return 0, err
	}
	var tot float64
	for i := range s.N {
		for j := range s.N {
			tot += k.Eval(pts, i, pts, j)
		}
	}
	return tot / float64(s.N*s.N), nil
}

// Memory estimates the bytes Stein thinning (SteinThin) of n candidates of
// d variables allocates beyond the candidates themselves, at most one of
// each per candidate: the index of distinct states (a 4d-byte key, about
// 48 bytes of map entry and the row's state), the distinct states' copy
// (8d bytes) and their Stein points (16d bytes: states, predecessors and
// scores), and the per-state sums and objectives. Measured: 50,000 draws
// of a 10×10 Ising grid peaked at 0.87 of it (with the candidates).
// Herding needs less (HerdMemory).
func Memory(n, d int) float64 {
	return float64(n) * (28*float64(d) + 104)
}

// HerdMemory estimates the bytes kernel herding (Herd) of n candidates of
// d variables allocates beyond the candidates themselves: the index of
// distinct states (as Memory's), the distinct states and the reference's
// packed into bits (d/8 bytes each, twice) or listed (24 bytes each,
// twice), and the mean embedding and the running sums (16 bytes a state).
// Measured: 50,000 draws of a 10×10 Ising grid peaked at 0.85 of it (with
// the candidates).
func HerdMemory(n, d int) float64 {
	return float64(n) * (4.25*float64(d) + 136)
}

// PointsMemory estimates the bytes of the result of a compression to n
// points of d variables: the chosen rows (8 bytes each) and the points'
// states (8d bytes each). It grows with n whatever the candidates, and a
// budget should check it before Herd or SteinThin run.
func PointsMemory(n, d int) float64 {
	return float64(n) * (8 + 8*float64(d))
}
