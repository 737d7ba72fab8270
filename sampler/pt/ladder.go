package pt

// evenLadder returns k inverse temperatures evenly spaced from 1 down to
// bmin.
func evenLadder(k int, bmin float64) []float64 {
	b := make([]float64, k)
	for j := range b {
		b[j] = 1 - (1-bmin)*float64(j)/float64(k-1)
	}
	b[k-1] = bmin
	return b
}

// minRejection is the smallest rejection rate per unit of β that the
// adaptation assumes for a pair: it keeps the estimated barrier strictly
// increasing, so that the new β's are distinct, and spaces the ladder
// evenly in β where every swap is accepted.
const minRejection = 1e-3

// tuner schedules the ladder's adaptation: rounds of 2, 4, 8, …
// iterations; a round that would leave less than its double before the end
// of tuning runs to the end instead.
type tuner struct {
	end      int // iterations of tuning
	roundEnd int // the iteration at which the current round ends; 0 after tuning
	length   int // the current round's length
	cum      []float64
	next0    []float64
}

func newTuner(end, k int) *tuner { return newTunerAt(0, end, k) }

// newTunerAt schedules tuning from iteration at to end.
func newTunerAt(at, end, k int) *tuner {
	t := &tuner{end: end, cum: make([]float64, k), next0: make([]float64, k)}
	t.start(at, 2)
	return t
}

// start begins a round of length l at iteration at.
func (t *tuner) start(at, l int) {
	t.length = l
	t.roundEnd = at + l
	if t.roundEnd+2*l > t.end {
		t.roundEnd = t.end
	}
}

// next begins the round after the one that ended at iteration at, or
// stops tuning when it was the last.
func (t *tuner) next(at int) {
	if at >= t.end {
		t.roundEnd = 0
		return
	}
	t.start(at, 2*t.length)
}

// adapt moves the interior β's of ladder (decreasing, ladder[0] = 1) so
// that the estimated communication barrier is split into equal parts, and
// reports whether it changed the ladder. rate[j] is the mean acceptance
// probability of pair (j, j+1) over attempts[j] proposals per chain; a
// round in which some pair was never proposed leaves the ladder alone.
//
// The barrier Λ(β) is the piecewise linear interpolation, between the
// ladder's points, of the cumulative rejection rates counted from β_min:
// Λ(β_{K−1}) = 0 and Λ(β_j) = Σ_{i ≥ j} (1 − rate[i]). It is monotone, and
// the new β_j is the point where Λ equals (K−1−j)/(K−1) of Λ(1).
func (t *tuner) adapt(ladder, rate []float64, attempts []int64) bool {
	k := len(ladder)
	if k < 3 {
		return false
	}
	for _, a := range attempts {
		if a == 0 {
			return false
		}
	}
	if !splitBarrier(t.next0, t.cum, ladder, rate) {
		return false // rounding made two β's meet: keep the old ladder
	}
	copy(ladder, t.next0)
	return true
}

// splitBarrier writes into nb (len(nb) ≥ 2 inverse temperatures) the
// points from ladder[0] down to the last β of ladder that split the
// barrier Λ(β) measured on ladder into len(nb) − 1 equal parts: Λ is the
// piecewise linear interpolation in β of the cumulative rejection rates
// 1 − rate counted from β_min (each at least minRejection per unit of β),
// written into cum (len(ladder)). It reports whether the points are
// strictly decreasing; rounding can make two meet.
func splitBarrier(nb, cum, ladder, rate []float64) bool {
	old, k := len(ladder), len(nb)
	cum[old-1] = 0
	for j := old - 2; j >= 0; j-- {
		cum[j] = cum[j+1] + max(1-rate[j], minRejection*(ladder[j]-ladder[j+1]))
	}
	nb[0], nb[k-1] = ladder[0], ladder[old-1]
	seg := old - 2 // segment [ladder[seg+1], ladder[seg]] holds the target
	for j := 1; j < k-1; j++ {
		target := cum[0] * float64(k-1-j) / float64(k-1)
		for seg > 0 && cum[seg] < target {
			seg--
		}
		for seg < old-2 && cum[seg+1] > target {
			seg++
		}
		lo, hi := ladder[seg+1], ladder[seg]
		f := (target - cum[seg+1]) / (cum[seg] - cum[seg+1])
		nb[j] = lo + f*(hi-lo)
	}
	for j := 1; j < k; j++ {
		if !(nb[j] < nb[j-1]) {
			return false
		}
	}
	return true
}
