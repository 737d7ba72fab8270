package diag

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/stat/distuv"
)

// Workspace holds the buffers of the diagnostics, so that summarising
// thousands of quantities of the same shape allocates nothing after the
// first: the split chains, the sort, the transformed draws, the normal
// scores of the ranks (kept from one call to the next while the number of
// draws stays the same) and the Fourier transform.
//
// The zero value is ready to use. A Workspace is for one goroutine at a
// time; give each worker its own. Its results are the package functions'
// results, bit for bit.
type Workspace struct {
	m, n, h  int     // chains, draws per chain, draws per split chain
	first    float64 // the first draw
	constant bool    // every draw equals first
	scale    float64 // the power of two the draws are multiplied by

	split  []float64 // 2m split chains of h scaled draws, one after another
	middle []float64 // the middle draws that splitting drops (n odd), scaled

	keys, keys2 []uint64        // sort keys of the split draws (radix sort)
	count       [6][2048]uint32 // digit counts of the radix sort
	idx, idx2   []uint32        // their positions in split
	sorted      []float64       // the split draws in increasing order
	all         []float64       // every draw (middle ones too) in increasing order: sorted or allBuf
	allBuf      []float64
	fold        []float64 // |x − median| in increasing order
	foldIdx     []uint32  // their positions in split
	z           []float64 // a transform of the split chains, laid out as split

	scores  []float64 // normal score of twice the average rank; NaN: not yet computed
	scoresS int       // the number of draws scores is for

	cent   []float64    // the split chains of ess, each centred on its mean
	moving []bool       // per split chain: not constant
	means  []float64    // per split chain
	rho    []float64    // autocorrelations of the initial sequence
	byFFT  bool         // acov holds every lag
	fft    *fourier.FFT // for chains of h draws, padded
	seq    []float64    // one centred chain, zero-padded
	coef   []complex128 // its Fourier coefficients
	power  []complex128 // the chains' summed power spectra
	acov   []float64    // summed autocovariances, times the padded length
}

// sortSplit sorts the split draws with their positions (w.sorted, w.idx)
// and gathers every draw in increasing order (w.all). It is a least
// significant digit radix sort on the draws' bits, six passes of 11 bits,
// skipping the digits that every draw shares: linear in the number of
// draws.
func (w *Workspace) sortSplit() {
	const bits, digits = 11, 6
	S := len(w.split)
	w.keys, w.keys2 = grow(w.keys, S), grow(w.keys2, S)
	w.idx, w.idx2 = grow(w.idx, S), grow(w.idx2, S)
	count := &w.count
	*count = [digits][1 << bits]uint32{}
	for i, v := range w.split {
		k := sortKey(v)
		w.keys[i], w.idx[i] = k, uint32(i)
		for b := range digits {
			count[b][(k>>(bits*b))&(1<<bits-1)]++
		}
	}
	keys, keys2, idx, idx2 := w.keys, w.keys2, w.idx, w.idx2
	var pos [1 << bits]uint32
	for b := range digits {
		shift := bits * b
		c := &count[b]
		if c[(keys[0]>>shift)&(1<<bits-1)] == uint32(S) {
			continue // every key has this digit
		}
		sum := uint32(0)
		for d, n := range c {
			pos[d] = sum
			sum += n
		}
		for i, k := range keys {
			d := (k >> shift) & (1<<bits - 1)
			keys2[pos[d]], idx2[pos[d]] = k, idx[i]
			pos[d]++
		}
		keys, keys2, idx, idx2 = keys2, keys, idx2, idx
	}
	w.keys, w.keys2, w.idx, w.idx2 = keys, keys2, idx, idx2
	w.sorted = grow(w.sorted, S)
	for i, k := range keys {
		w.sorted[i] = fromKey(k)
	}
	if len(w.middle) == 0 {
		w.all = w.sorted
		return
	}
	slices.Sort(w.middle)
	w.allBuf = grow(w.allBuf, S+len(w.middle))
	w.all = w.allBuf
	i, j := 0, 0
	for k := range w.all {
		if j == len(w.middle) || (i < S && w.sorted[i] <= w.middle[j]) {
			w.all[k] = w.sorted[i]
			i++
		} else {
			w.all[k] = w.middle[j]
			j++
		}
	}
}

// sortKey maps a float64 to a uint64 of the same order; −0 and +0 map to
// the same key.
func sortKey(v float64) uint64 {
	if v == 0 {
		return 1 << 63
	}
	b := math.Float64bits(v)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

// fromKey inverts sortKey (−0 comes back as +0).
func fromKey(k uint64) float64 {
	if k>>63 == 1 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// score returns the normal score of average rank k/2 among S draws,
// Φ⁻¹((k/2 − 3/8)/(S + 1/4)), computing it on first use.
func (w *Workspace) score(k int) float64 {
	z := w.scores[k]
	if math.IsNaN(z) {
		S := float64(w.scoresS)
		z = distuv.UnitNormal.Quantile((float64(k)/2 - 3.0/8) / (S + 1.0/4))
		w.scores[k] = z
	}
	return z
}

// prepareScores readies the table of normal scores for the current number
// of split draws.
func (w *Workspace) prepareScores() {
	S := len(w.split)
	if w.scoresS == S && len(w.scores) == 2*S+1 {
		return
	}
	w.scores = grow(w.scores, 2*S+1)
	for i := range w.scores {
		w.scores[i] = math.NaN()
	}
	w.scoresS = S
}

// rankBulk fills w.z with the rank-normalised split draws (pooled ranks,
// ties given their average rank) and returns their split-R̂.
// Needs sortSplit.
func (w *Workspace) rankBulk() float64 {
	w.prepareScores()
	w.z = grow(w.z, len(w.split))
	normalize(w, w.sorted, w.idx)
	return w.rhat(w.z)
}

// rankFolded fills w.z with the rank-normalised split draws folded about
// the median of every draw, |x − median|, and returns their split-R̂.
// Needs sortSplit.
//
// The order of the folded draws comes from the sorted draws without a
// second sort: below the median |x − median| falls as x grows, above it
// rises, so merging the two runs sorts it.
func (w *Workspace) rankFolded() float64 {
	w.prepareScores()
	med := median(w.all)
	S := len(w.sorted)
	w.fold, w.foldIdx = grow(w.fold, S), grow(w.foldIdx, S)
	w.z = grow(w.z, S)
	up, _ := slices.BinarySearchFunc(w.sorted, med, func(v, t float64) int {
		if v <= t {
			return -1
		}
		return 1
	}) // sorted[up:] > med ≥ sorted[:up]
	down := up - 1
	for k := range S {
		if up == S || (down >= 0 && med-w.sorted[down] <= w.sorted[up]-med) {
			w.fold[k], w.foldIdx[k] = med-w.sorted[down], w.idx[down]
			down--
		} else {
			w.fold[k], w.foldIdx[k] = w.sorted[up]-med, w.idx[up]
			up++
		}
	}
	normalize(w, w.fold, w.foldIdx)
	return w.rhat(w.z)
}

// normalize writes the normal score of each value of the increasing vals
// to w.z at position idx: a run of ties shares the average of its ranks.
func normalize(w *Workspace, vals []float64, idx []uint32) {
	for i := 0; i < len(vals); {
		j := i + 1
		for j < len(vals) && vals[j] == vals[i] {
			j++
		}
		z := w.score(i + 1 + j) // ranks i+1 … j average (i+1+j)/2
		for _, p := range idx[i:j] {
			w.z[p] = z
		}
		i = j
	}
}

// tail returns the smaller ESS of the indicators I(x ≤ q₀.₀₅) and
// I(x ≤ q₀.₉₅) of the split draws, the quantiles those of every draw
// (type 7). An indicator that is constant carries no information about
// the tails: for it we take the bulk-ESS, so that a binary or few-valued
// quantity (whose 95% quantile is often its maximum) does not look as if
// its tails mixed badly. bulk < 0 means not yet computed. Needs sortSplit;
// overwrites w.z.
func (w *Workspace) tail(bulk float64) float64 {
	out := math.Inf(1)
	for _, p := range [2]float64{0.05, 0.95} {
		q := quantile(w.all, p)
		ones := 0
		w.z = grow(w.z, len(w.split))
		for i, v := range w.split {
			if v <= q {
				w.z[i] = 1
				ones++
			} else {
				w.z[i] = 0
			}
		}
		var e float64
		if ones == 0 || ones == len(w.split) {
			if bulk < 0 {
				w.rankBulk()
				bulk = w.ess(w.z)
			}
			e = bulk
		} else {
			e = w.ess(w.z)
		}
		out = min(out, e)
	}
	return out
}

// median returns the median of the increasing x: the middle value, or the
// mean of the two middle values.
func median(x []float64) float64 {
	n := len(x)
	if n%2 == 1 {
		return x[n/2]
	}
	return (x[n/2-1] + x[n/2]) / 2
}

// quantile returns the p-quantile of the increasing x by linear
// interpolation between order statistics (R's type 7, numpy's default):
// h = (n−1)p, x[⌊h⌋] + (h − ⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]).
func quantile(x []float64, p float64) float64 {
	h := float64(len(x)-1) * p
	lo := int(h)
	frac := h - float64(lo)
	if lo+1 >= len(x) || frac == 0 || x[lo] == x[lo+1] {
		return x[lo]
	}
	return x[lo] + frac*(x[lo+1]-x[lo])
}
