package svgd

import (
	"fmt"
	"math"
	"slices"

	"github.com/dstein/dstein/internal/numeric"
)

// Weighting selects how the importance ratios ρ/p_c become weights.
type Weighting int

const (
	// SelfNormalized uses w_j = (ρ/p_c)(x_j) / Σ_l (ρ/p_c)(x_l) (the
	// default).
	SelfNormalized Weighting = iota
	// Rank uses the paper's BNN appendix weights: γ_j = 1/H(μ_j) with
	// H(t) = #{l : μ_l ≥ t}/n, normalised to sum to one.
	Rank
)

// String returns "self" or "rank".
func (w Weighting) String() string {
	if w == Rank {
		return "rank"
	}
	return "self"
}

// MarshalText implements encoding.TextMarshaler.
func (w Weighting) MarshalText() ([]byte, error) { return []byte(w.String()), nil }

// UnmarshalText parses "self" or "rank".
func (w *Weighting) UnmarshalText(b []byte) error {
	switch string(b) {
	case "self":
		*w = SelfNormalized
	case "rank":
		*w = Rank
	default:
		return fmt.Errorf("unknown weighting %q: want self or rank", b)
	}
	return nil
}

// Weights turns log ratios logw (log ρ/p_c per particle) into normalised
// weights in w and returns their effective sample size 1/Σ w_j². Entries of
// −Inf (ρ = 0) get weight zero; entries of +Inf (particles in states of
// probability zero, where p_c = 0 < ρ) share all the weight equally, whatever
// the weighting; when every entry is −Inf the weights are uniform, whatever
// the weighting. power β tempers self-normalised weights, w_j ∝ (ρ/p_c)^β
// (1 or 0: none). rank is scratch of length n for rank weights (nil
// allocates).
func Weights(w, logw []float64, kind Weighting, power float64, rank []int) float64 {
	copy(w, logw)
	if kind == SelfNormalized {
		if b := power; b != 1 && b != 0 {
			for j, v := range w {
				if !math.IsInf(v, 0) {
					w[j] = b * v
				}
			}
		}
		return numeric.NormalizeLogWeights(w)
	}
	// +Inf entries take all the weight, as for self-normalised weights; so
	// does every particle when all entries are −Inf (uniform weights, not
	// the 0/0 of rank weights that are all zero).
	finite := false
	for _, v := range logw {
		if math.IsInf(v, 1) {
			return numeric.NormalizeLogWeights(w)
		}
		finite = finite || !math.IsInf(v, -1)
	}
	if !finite {
		return numeric.NormalizeLogWeights(w)
	}
	n := len(logw)
	if rank == nil {
		rank = make([]int, n)
	}
	rank = rank[:n]
	// Rank weights: γ_j = n / #{l : μ_l ≥ μ_j}, zero where μ_j = 0.
	for j := range rank {
		rank[j] = j
	}
	slices.SortFunc(rank, func(a, b int) int {
		switch {
		case logw[a] < logw[b]:
			return -1
		case logw[a] > logw[b]:
			return 1
		}
		return a - b
	})
	var sum float64
	for k := 0; k < n; {
		// Ties share the count of elements ≥ their value.
		e := k
		for e < n && logw[rank[e]] == logw[rank[k]] {
			e++
		}
		g := float64(n) / float64(n-k)
		if math.IsInf(logw[rank[k]], -1) {
			g = 0
		}
		for _, j := range rank[k:e] {
			w[j] = g
		}
		sum += g * float64(e-k)
		k = e
	}
	var s2 float64
	for j := range w {
		w[j] /= sum
		s2 += w[j] * w[j]
	}
	return 1 / s2
}

// ESS returns the effective sample size (Σ r)²/Σ r² of the ratios
// r_j = exp(logw_j), computed in log space (0 when every entry is −Inf).
func ESS(logw []float64) float64 {
	mx := math.Inf(-1)
	for _, l := range logw {
		mx = math.Max(mx, l)
	}
	if math.IsInf(mx, -1) {
		return 0
	}
	if math.IsInf(mx, 1) {
		c := 0
		for _, l := range logw {
			if math.IsInf(l, 1) {
				c++
			}
		}
		return float64(c)
	}
	var s, s2 float64
	for _, l := range logw {
		e := math.Exp(l - mx)
		s += e
		s2 += e * e
	}
	return s * s / s2
}
