package diag

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// MinDraws is the shortest chain the diagnostics accept: split in two, a
// chain of MinDraws draws gives halves of two draws, the least that has a
// within-chain variance.
const MinDraws = 4

// The errors of invalid input. The functions wrap them in a message that
// says which chain and draw is at fault; test for them with errors.Is.
var (
	ErrNoChains  = errors.New("diag: no chains")
	ErrRagged    = errors.New("diag: chains of different lengths")
	ErrTooShort  = errors.New("diag: chains too short")
	ErrNotFinite = errors.New("diag: draw not finite")
	ErrTooMany   = errors.New("diag: too many draws")
)

// Summary holds the diagnostics of one scalar quantity. None of its fields
// is ever NaN; Rhat is +Inf when every split chain is constant and they do
// not all agree (see the package documentation).
type Summary struct {
	// Mean and SD are the mean and the sample standard deviation
	// (denominator S−1) of all draws pooled.
	Mean, SD float64
	// MCSE is the Monte Carlo standard error of Mean, SD/√ESSMean; 0 when
	// every draw is the same.
	MCSE float64
	// ESSMean is the effective sample size of the mean: the ESS of the
	// split chains as they are.
	ESSMean float64
	// BulkESS is the ESS of the rank-normalised split chains.
	BulkESS float64
	// TailESS is the smaller of the ESS of the indicators I(x ≤ q₀.₀₅) and
	// I(x ≤ q₀.₉₅) on the split chains; an indicator that is constant counts
	// as BulkESS.
	TailESS float64
	// Rhat is the larger of the rank-normalised split-R̂ and the
	// rank-normalised split-R̂ of the draws folded about their median.
	Rhat float64
	// MCSESD is the Monte Carlo standard error of SD by the delta method:
	// SD² is the mean of the squared deviations (x − Mean)², whose
	// standard error is their spread over the square root of their ESS
	// (on the split chains); SD's is that over 2·SD. 0 when every draw is
	// the same.
	MCSESD float64
}

// pool holds the workspaces of the package-level functions, so that they
// too stop allocating once warm.
var pool = sync.Pool{New: func() any { return new(Workspace) }}

func pooled[T any](f func(w *Workspace) (T, error)) (T, error) {
	w := pool.Get().(*Workspace)
	defer pool.Put(w)
	return f(w)
}

// Summarize returns every diagnostic of one quantity; chains[c][i] is draw
// i of chain c. It takes a Workspace from a pool: summarising many
// quantities with it does not allocate once the pool is warm.
func Summarize(chains [][]float64) (Summary, error) {
	return pooled(func(w *Workspace) (Summary, error) { return w.Summarize(chains) })
}

// Rhat returns the larger of the rank-normalised split-R̂ and the folded
// one (Summary.Rhat).
func Rhat(chains [][]float64) (float64, error) {
	return pooled(func(w *Workspace) (float64, error) { return w.Rhat(chains) })
}

// RhatParts returns the two R̂ that Rhat takes the larger of: bulk, of the
// rank-normalised split chains, which sees chains that disagree about the
// location, and folded, of the rank-normalised split chains of |x − median|,
// which sees chains that disagree about the scale.
func RhatParts(chains [][]float64) (bulk, folded float64, err error) {
	w := pool.Get().(*Workspace)
	defer pool.Put(w)
	return w.RhatParts(chains)
}

// BulkESS returns the ESS of the rank-normalised split chains
// (Summary.BulkESS).
func BulkESS(chains [][]float64) (float64, error) {
	return pooled(func(w *Workspace) (float64, error) { return w.BulkESS(chains) })
}

// TailESS returns the smaller ESS of the 5% and 95% quantile indicators
// (Summary.TailESS).
func TailESS(chains [][]float64) (float64, error) {
	return pooled(func(w *Workspace) (float64, error) { return w.TailESS(chains) })
}

// ESSMean returns the ESS of the mean: the ESS of the split chains as they
// are (Summary.ESSMean).
func ESSMean(chains [][]float64) (float64, error) {
	return pooled(func(w *Workspace) (float64, error) { return w.ESSMean(chains) })
}

// MCSEMean returns the Monte Carlo standard error of the mean,
// SD/√ESSMean (Summary.MCSE).
func MCSEMean(chains [][]float64) (float64, error) {
	return pooled(func(w *Workspace) (float64, error) { return w.MCSEMean(chains) })
}

// Summarize is the package-level Summarize on the workspace's buffers.
func (w *Workspace) Summarize(chains [][]float64) (Summary, error) {
	if err := w.load(chains); err != nil {
		return Summary{}, err
	}
	if w.constant {
		S := w.draws()
		return Summary{Mean: w.first, ESSMean: S, BulkESS: S, TailESS: S, Rhat: 1}, nil
	}
	var s Summary
	s.Mean, s.SD = w.meanSD(chains)
	s.ESSMean = w.ess(w.split)
	s.MCSE = s.SD / math.Sqrt(s.ESSMean)
	w.sortSplit()
	bulk := w.rankBulk()
	s.BulkESS = w.ess(w.z)
	s.Rhat = max(bulk, w.rankFolded())
	s.TailESS = w.tail(s.BulkESS)
	s.MCSESD = w.mcseSD(s.Mean, s.SD)
	return s, nil
}

// mcseSD returns Summary.MCSESD from the split chains (w.z is free once
// the rank diagnostics are done).
func (w *Workspace) mcseSD(mean, sd float64) float64 {
	if sd == 0 {
		return 0
	}
	w.z = grow(w.z, len(w.split))
	m := mean * w.scale
	var s1, s2 float64
	for k, v := range w.split {
		d := (v - m) * (v - m)
		w.z[k] = d
		s1 += d
	}
	n := float64(len(w.split))
	s1 /= n
	for _, d := range w.z {
		s2 += (d - s1) * (d - s1)
	}
	if s2 == 0 {
		return 0 // every deviation squared is the same (two values, equally often)
	}
	sdD := math.Sqrt(s2/(n-1)) / (w.scale * w.scale)
	return sdD / math.Sqrt(w.ess(w.z)) / (2 * sd)
}

// Rhat is the package-level Rhat on the workspace's buffers.
func (w *Workspace) Rhat(chains [][]float64) (float64, error) {
	bulk, folded, err := w.RhatParts(chains)
	return max(bulk, folded), err
}

// RhatParts is the package-level RhatParts on the workspace's buffers.
func (w *Workspace) RhatParts(chains [][]float64) (bulk, folded float64, err error) {
	if err := w.load(chains); err != nil {
		return 0, 0, err
	}
	if w.constant {
		return 1, 1, nil
	}
	w.sortSplit()
	bulk = w.rankBulk()
	return bulk, w.rankFolded(), nil
}

// BulkESS is the package-level BulkESS on the workspace's buffers.
func (w *Workspace) BulkESS(chains [][]float64) (float64, error) {
	if err := w.load(chains); err != nil {
		return 0, err
	}
	if w.constant {
		return w.draws(), nil
	}
	w.sortSplit()
	w.rankBulk()
	return w.ess(w.z), nil
}

// TailESS is the package-level TailESS on the workspace's buffers.
func (w *Workspace) TailESS(chains [][]float64) (float64, error) {
	if err := w.load(chains); err != nil {
		return 0, err
	}
	if w.constant {
		return w.draws(), nil
	}
	w.sortSplit()
	return w.tail(-1), nil
}

// ESSMean is the package-level ESSMean on the workspace's buffers.
func (w *Workspace) ESSMean(chains [][]float64) (float64, error) {
	if err := w.load(chains); err != nil {
		return 0, err
	}
	if w.constant {
		return w.draws(), nil
	}
	return w.ess(w.split), nil
}

// MCSEMean is the package-level MCSEMean on the workspace's buffers.
func (w *Workspace) MCSEMean(chains [][]float64) (float64, error) {
	if err := w.load(chains); err != nil {
		return 0, err
	}
	if w.constant {
		return 0, nil
	}
	_, sd := w.meanSD(chains)
	return sd / math.Sqrt(w.ess(w.split)), nil
}

// validate checks the shape and the values of chains.
func validate(chains [][]float64) error {
	if len(chains) == 0 {
		return ErrNoChains
	}
	n := len(chains[0])
	for c, x := range chains {
		if len(x) != n {
			return fmt.Errorf("%w: chain %d has %d draws, chain 0 has %d", ErrRagged, c, len(x), n)
		}
	}
	if n < MinDraws {
		return fmt.Errorf("%w: %d draws per chain, need at least %d", ErrTooShort, n, MinDraws)
	}
	if uint64(len(chains))*uint64(n) > math.MaxUint32 {
		return fmt.Errorf("%w: %d chains of %d draws, at most %d in all", ErrTooMany, len(chains), n, uint64(math.MaxUint32))
	}
	for c, x := range chains {
		for i, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: draw %d of chain %d is %v", ErrNotFinite, i, c, v)
			}
		}
	}
	return nil
}

// load validates chains, notes whether every draw is the same, and (when
// not) fills w.split with the split chains scaled by a power of two: first
// halves of every chain, then second halves; the middle draw of an
// odd-length chain goes to w.middle. Scaling by 2^−e, with 2^e the binade
// of the largest |draw|, is exact (short of subnormal results), keeps
// every order and tie, and keeps sums of squares from overflowing or
// underflowing; every scale-free diagnostic is unchanged by it.
func (w *Workspace) load(chains [][]float64) error {
	if err := validate(chains); err != nil {
		return err
	}
	m, n := len(chains), len(chains[0])
	w.m, w.n, w.h = m, n, n/2
	w.first = chains[0][0]
	w.constant = true
	big := 0.0
	for _, x := range chains {
		for _, v := range x {
			if v != w.first {
				w.constant = false
			}
			big = max(big, math.Abs(v))
		}
	}
	if w.constant {
		return nil
	}
	_, e := math.Frexp(big)
	w.scale = math.Ldexp(1, -max(e, -1000)) // 2^1074 would overflow
	h := w.h
	w.split = grow(w.split, 2*m*h)
	w.middle = w.middle[:0]
	for c, x := range chains {
		first, second := w.split[c*h:(c+1)*h], w.split[(m+c)*h:(m+c+1)*h]
		for i := range h {
			first[i] = x[i] * w.scale
			second[i] = x[n-h+i] * w.scale
		}
		if n%2 == 1 {
			w.middle = append(w.middle, x[h]*w.scale)
		}
	}
	return nil
}

// draws is S, the number of draws the split chains hold: all of them when
// the chains have even length, all but each chain's middle draw otherwise.
func (w *Workspace) draws() float64 { return float64(2 * w.m * w.h) }

// meanSD returns the mean and the sample standard deviation of every draw
// of chains (those that splitting drops included), from the scaled draws:
// the sum compensated for rounding (Neumaier), so that the mean is nearly
// correctly rounded whatever the order of the draws, and the variance by
// the corrected two-pass formula, its sum of squares compensated too.
func (w *Workspace) meanSD(chains [][]float64) (mean, sd float64) {
	total := float64(w.m * w.n)
	sum, comp := 0.0, 0.0
	for _, x := range chains {
		for _, v := range x {
			v *= w.scale
			t := sum + v
			if math.Abs(sum) >= math.Abs(v) {
				comp += (sum - t) + v
			} else {
				comp += (v - t) + sum
			}
			sum = t
		}
	}
	mean = (sum + comp) / total
	var d1, d2, c2 float64 // d2 compensated (Kahan: the terms are ≥ 0)
	for _, x := range chains {
		for _, v := range x {
			d := v*w.scale - mean
			d1 += d
			y := d*d - c2
			t := d2 + y
			c2 = (t - d2) - y
			d2 = t
		}
	}
	v := max((d2-d1*d1/total)/(total-1), 0)
	return mean / w.scale, math.Sqrt(v) / w.scale
}

// grow returns s resliced to length n, reallocated only when too short.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
