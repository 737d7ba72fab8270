package gpu

import (
	"fmt"
	"math"

	"github.com/dstein/dstein/internal/cuda"
	"github.com/dstein/dstein/kernel"
)

// The median's selection: over more than bracketAbove pairs, sampleSize
// of them bracket the wanted ranks, and the pairs inside the bracket (at
// most candidates(m) of m) are selected from exactly; a bracket that
// misses falls back to the radix selection over the whole matrix, which
// is also the selection of fewer pairs (its histograms' atomics meet on
// the few bins that the pairs' top bits share: fine for a few million
// pairs, slow for the 5·10⁷ of 10⁴ particles). bracketRows is the rows
// one thread of bracket reads.
const (
	sampleSize  = 1 << 14
	bracketRows = 32
)

// bracketAbove and bracketSigmas are the number of pairs over which the
// median is bracketed, and the bracket's half-width in standard errors
// of a sample quantile (variables so that a test can bracket few pairs
// and make the bracket miss).
var (
	bracketAbove  int64 = 1 << 23
	bracketSigmas       = float64(kernel.BracketSigmas)
)

// candidates returns the capacity of the bracket's buffer for m pairs:
// twice the share a bracket of ±4 sample standard errors of 2¹⁴ pairs
// holds (about 3.2%), and a sample's worth more.
func candidates(m int64) int64 { return min(m, m/16+sampleSize) }

// radix returns the k-th smallest (from 0) of the values the pass
// function counts: a radix selection, 16 bits at a time from the top,
// each pass counting on the device the values whose bits agree with those
// chosen so far (pass queues the counting kernel for a mask, value and
// shift).
func (s *SVGD) radix(k int64, pass func(mask, val uint64, shift int) error) (float64, error) {
	bits := 64
	if s.f32 {
		bits = 32
	}
	var mask, val uint64
	for shift := bits - 16; shift >= 0; shift -= 16 {
		if err := firstErr(
			s.mem.ctx.Fill32(s.counts, 0, 1<<16),
			pass(mask, val, shift),
			cuda.Download(s.mem.ctx, s.hcounts, s.counts),
		); err != nil {
			return 0, err
		}
		var below int64
		found := false
		for b, c := range s.hcounts {
			if k < below+int64(c) {
				val |= uint64(b) << shift
				mask |= uint64(0xFFFF) << shift
				k -= below
				found = true
				break
			}
			below += int64(c)
		}
		if !found {
			return 0, fmt.Errorf("the median's selection lost its rank (%d values counted)", below)
		}
	}
	if s.f32 {
		return float64(math.Float32frombits(uint32(val))), nil
	}
	return math.Float64frombits(val), nil
}

// selectPairs writes into out (one value per rank, so that an iteration
// allocates nothing) the order statistics ranks (from 0, ascending) of
// the distinct pairs' squared distances, held in the strict lower
// triangle of kmat. With many pairs, an evenly spaced sample of them
// brackets the ranks, one pass over the matrix counts the pairs below the
// bracket and copies those inside, and the radix selection runs over
// those few; a bracket that misses the ranks (or overflows its buffer)
// falls back to the radix selection over the matrix, which is exact
// whatever the values.
func (s *SVGD) selectPairs(out []float64, ranks []int64) error {
	n := int64(s.n)
	m := n * (n - 1) / 2
	out = out[:len(ranks)]
	whole := func() error {
		for r, k := range ranks {
			v, err := s.radix(k, func(mask, val uint64, shift int) error {
				return s.run2("hist", int32(s.n), s.kmat, mask, val, int32(shift), s.counts)
			})
			if err != nil {
				return err
			}
			out[r] = v
		}
		return nil
	}
	if m <= bracketAbove {
		return whole()
	}
	s.bracketed++
	if s.hsample == nil {
		s.hsample = make([]float64, sampleSize)
	}
	if err := firstErr(
		s.run("gather", sampleSize, int32(s.n), s.kmat, m, int32(sampleSize), s.sample),
		s.download(s.hsample, s.sample),
	); err != nil {
		return err
	}
	lv, hv := kernel.SampleBracket(s.hsample, ranks[0], ranks[len(ranks)-1], m, bracketSigmas)
	capacity := candidates(m)
	grid := [3]uint32{uint32((s.n + 255) / 256), uint32((s.n + bracketRows - 1) / bracketRows), 1}
	if err := firstErr(
		s.mem.ctx.Fill32(s.inside, 0, 4),
		s.k["bracket"].Queue(grid, [3]uint32{256, 1, 1}, int32(s.n), s.kmat, int32(bracketRows), s.real(lv), s.real(hv), s.inside, s.cand, uint64(capacity)),
		cuda.Download(s.mem.ctx, s.hinside, s.inside),
	); err != nil {
		return err
	}
	below, inside := int64(s.hinside[0]), int64(s.hinside[1])
	if below > ranks[0] || ranks[len(ranks)-1] >= below+inside || inside > capacity {
		s.fallbacks++
		return whole()
	}
	for r, k := range ranks {
		v, err := s.radix(k-below, func(mask, val uint64, shift int) error {
			return s.run("hist1", inside, inside, s.cand, mask, val, int32(shift), s.counts)
		})
		if err != nil {
			return err
		}
		out[r] = v
	}
	return nil
}

// median2 returns the median squared distance as kernel.Median2 defines
// it (the distinct pairs, or all n² with the diagonal's zeros).
func (s *SVGD) median2() (float64, error) {
	n := int64(s.n)
	m := n * (n - 1) / 2
	a, b := (m-1)/2, m/2
	if s.set.Bandwidth.IncludeDiagonal {
		N := n * n
		toPair := func(k int64) int64 {
			if k < n {
				return -1
			}
			return (k - n) / 2
		}
		a, b = toPair((N-1)/2), toPair(N/2)
	}
	var va, vb float64
	var v [2]float64
	switch {
	case b < 0:
	case a == b || a < 0:
		if err := s.selectPairs(v[:1], []int64{b}); err != nil {
			return 0, err
		}
		vb = v[0]
		if a == b {
			va = vb
		}
	default:
		if err := s.selectPairs(v[:], []int64{a, b}); err != nil {
			return 0, err
		}
		va, vb = v[0], v[1]
	}
	return (va + vb) / 2, nil
}
