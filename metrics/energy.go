package metrics

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
)

// DefaultEnergyBins is the number of bins energy histograms aim for: each
// holds about 5% of the mass.
const DefaultEnergyBins = 20

// levelTol is the relative distance below which two values of log p* are
// one energy level: a discrete model's log p* takes finitely many values,
// and the same value summed in another order may differ in its last bits.
const levelTol = 1e-9

// EnergyBins are fixed bins of log p*(z) with the exact mass of each, for
// comparing the distribution of log p* over a sample with the exact one by
// total variation distance (TV). Bins are chosen once from the exact
// distribution of log p* (or from a large exact reference sample) and never
// from the sample being scored, so that scores of different samples are
// comparable.
//
// # Bins
//
// The values of log p* are sorted and values within levelTol (10⁻⁹,
// relative) of the previous one are merged into one level, so that ties of
// a discrete energy level that rounding split are one level. Cuts go
// between levels only, never through one: walking the levels upward (least
// probable states first) with their cumulative mass F, the k-th cut (k = 1
// … B−1) is placed after the first level at which F ≥ k/B, and cuts that a
// heavy level jumps over are skipped. So there are at most B bins; each
// but the last holds at least about 1/B of the mass, and a level heavier
// than 1/B is a bin of its own or shares one with lighter levels. A cut
// lies halfway between the two levels it separates; the first bin extends
// to −∞ and the last to +∞ (values of log p* that the reference never
// produced fall into the nearest bin), and log p* = −Inf (an impossible
// state) has a bin of its own with exact mass 0. Everything is
// deterministic given the distribution (given the model, from
// enumeration).
type EnergyBins struct {
	m      model.Model
	cuts   []float64 // bin b holds (cuts[b−1], cuts[b]]
	mass   []float64 // exact mass of each bin, summing to 1
	levels int
}

// NewEnergyBins builds at most bins bins (DefaultEnergyBins when bins ≤ 0)
// for model m from a distribution of log p*: the values lp with weights w
// (w nil: equal weights, as for a reference sample), not necessarily sorted
// or distinct. Entries with zero weight or log p* = −Inf are left out;
// weights are normalised. It refuses NaN or +Inf values, negative or
// non-finite weights, and a distribution with no positive weight.
func NewEnergyBins(m model.Model, lp, w []float64, bins int) (*EnergyBins, error) {
	if bins <= 0 {
		bins = DefaultEnergyBins
	}
	if w != nil && len(w) != len(lp) {
		return nil, fmt.Errorf("metrics: %d values of log p* with %d weights", len(lp), len(w))
	}
	type level struct{ lp, w float64 }
	ls := make([]level, 0, len(lp))
	var total float64
	for k, v := range lp {
		wk := 1.0
		if w != nil {
			wk = w[k]
		}
		if math.IsNaN(v) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("metrics: log p* value %d is %v", k, v)
		}
		if math.IsNaN(wk) || math.IsInf(wk, 0) || wk < 0 {
			return nil, fmt.Errorf("metrics: weight %d is %v; want a finite non-negative number", k, wk)
		}
		if wk == 0 || math.IsInf(v, -1) {
			continue
		}
		ls = append(ls, level{v, wk})
		total += wk
	}
	if !(total > 0) {
		return nil, fmt.Errorf("metrics: the distribution of log p* has no positive weight")
	}
	slices.SortFunc(ls, func(a, b level) int {
		if a.lp != b.lp {
			if a.lp < b.lp {
				return -1
			}
			return 1
		}
		return 0
	})
	// Merge ties: first and last value and mass of each level.
	type merged struct{ lo, hi, w float64 }
	var lv []merged
	for _, l := range ls {
		if k := len(lv) - 1; k >= 0 && l.lp-lv[k].hi <= levelTol*max(1, math.Abs(l.lp)) {
			lv[k].hi = l.lp
			lv[k].w += l.w / total
			continue
		}
		lv = append(lv, merged{l.lp, l.lp, l.w / total})
	}
	e := &EnergyBins{m: m, levels: len(lv)}
	var cum, binMass float64
	k := 1
	for i, l := range lv {
		cum += l.w
		binMass += l.w
		if i+1 < len(lv) && k < bins && cum >= float64(k)/float64(bins)-1e-12 {
			e.cuts = append(e.cuts, (l.hi+lv[i+1].lo)/2)
			e.mass = append(e.mass, binMass)
			binMass = 0
			k = max(k+1, int(math.Floor(cum*float64(bins)+1e-9))+1)
		}
	}
	e.mass = append(e.mass, binMass)
	return e, nil
}

// ExactEnergyBins builds the bins from the exact distribution of log p* by
// enumerating the joint states of m (exact.LogProbs: at most maxStates,
// DefaultMaxStates when maxStates ≤ 0; about 40 bytes per state).
func ExactEnergyBins(ctx context.Context, m model.Model, maxStates, bins int) (*EnergyBins, error) {
	lp, logZ, err := exact.LogProbs(ctx, m, maxStates)
	if err != nil {
		return nil, err
	}
	w := make([]float64, len(lp))
	for k, v := range lp {
		w[k] = math.Exp(v - logZ)
	}
	return NewEnergyBins(m, lp, w, bins)
}

// ReferenceEnergyBins builds the bins from an exact i.i.d. reference sample
// of m, each row weighing the same: bins and masses then carry the
// reference's sampling error (a bin's mass has standard error
// sqrt(P(1−P)/N), about 0.0022 for P = 0.05 and N = 10⁴), which the TV of a
// perfect sampler sees as a floor.
func ReferenceEnergyBins(m model.Model, ref *sampler.Samples, bins int) (*EnergyBins, error) {
	return NewEnergyBins(m, logProbs(m, ref), nil, bins)
}

// logProbs returns log p* of every row, on the worker pool.
func logProbs(m model.Model, s *sampler.Samples) []float64 {
	if s.D != m.Dim() {
		panic(fmt.Sprintf("metrics: samples of dimension %d for a model of dimension %d", s.D, m.Dim()))
	}
	lp := make([]float64, s.N)
	parallel.For(s.N, 64, parallel.Func(func(lo, hi int) {
		for r := lo; r < hi; r++ {
			lp[r] = m.LogProb(s.Row(r))
		}
	}))
	return lp
}

// Bins returns the number of bins (not counting the bin of −Inf).
func (e *EnergyBins) Bins() int { return len(e.mass) }

// Levels returns the number of distinct levels of log p* the bins were
// built from.
func (e *EnergyBins) Levels() int { return e.levels }

// Cuts returns the boundaries between bins: bin b holds the values of log p*
// in (Cuts[b−1], Cuts[b]]. The caller must not modify them.
func (e *EnergyBins) Cuts() []float64 { return e.cuts }

// Mass returns the exact (or reference) mass of each bin. The caller must
// not modify it.
func (e *EnergyBins) Mass() []float64 { return e.mass }

// Bin returns the bin of a value of log p*: −1 for −Inf.
func (e *EnergyBins) Bin(lp float64) int {
	if math.IsInf(lp, -1) {
		return -1
	}
	return sort.SearchFloat64s(e.cuts, lp)
}

// Histogram returns the fraction of the rows of s in each bin and the
// fraction of impossible rows (log p* = −Inf); all zero for an empty sample.
func (e *EnergyBins) Histogram(s *sampler.Samples) (freq []float64, impossible float64) {
	freq = make([]float64, len(e.mass))
	if s.N == 0 {
		return freq, 0
	}
	for _, v := range logProbs(e.m, s) {
		if b := e.Bin(v); b >= 0 {
			freq[b]++
		} else {
			impossible++
		}
	}
	inv := 1 / float64(s.N)
	for b := range freq {
		freq[b] *= inv
	}
	return freq, impossible * inv
}

// TV returns the total variation distance between the histogram of log p*
// over the rows of s and the exact masses of the bins,
// ½·(Σ_b |f_b − P_b| + f_impossible), in [0, 1]. An empty sample has all
// frequencies 0 and scores ½.
func (e *EnergyBins) TV(s *sampler.Samples) float64 {
	if s.N == 0 {
		return 0.5
	}
	freq, imp := e.Histogram(s)
	tv := imp
	for b, f := range freq {
		tv += math.Abs(f - e.mass[b])
	}
	return min(tv/2, 1)
}
