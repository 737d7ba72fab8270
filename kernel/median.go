package kernel

import (
	"math"
	"sync"

	"github.com/dstein/dstein/internal/parallel"
)

// The median of the n(n−1)/2 pairwise distances was the one step of the
// bandwidth that Select did on one core (2 ms of a 16 ms GF-SVGD
// iteration at n = 1000 on 2 cores). ranks splits it: a systematic sample
// brackets the wanted rank, the cores count the values below the bracket
// and copy those inside it, and Select runs on the bracket's few percent.
// The counting pass has no branches, so this is faster than Select on
// one core too (BenchmarkMedian2: 4.7–4.9 ms against 6.5–7.6 ms). An order statistic is one value whatever
// finds it, so the result has the same bits as Select's; when the bracket
// misses the rank (a sample far from typical) or a value is NaN, ranks
// falls back to Select on the whole slice.

// parSelectMin is the least number of values ranks brackets (a variable
// so that tests can take that path on small inputs).
var parSelectMin = 1 << 16

const (
	// selectChunks is the number of pieces the counting and copying
	// passes split the values into.
	selectChunks = 64
	// selectSample is the most values of the systematic sample.
	selectSample = 1 << 14
)

// ranks returns the values of rank b and, when both, of rank b − 1
// (0-based) among p (b ≥ 1 when both); p may be reordered.
func ranks(p []float64, b int, both bool) (va, vb float64) {
	if len(p) >= parSelectMin {
		j := selectJobs.Get().(*selectJob)
		defer selectJobs.Put(j)
		if va, vb, ok := j.ranks(p, b, both); ok {
			return va, vb
		}
	}
	return selectRanks(p, b, both)
}

// selectRanks is ranks on one core: Select, then the largest of the
// values before rank b.
func selectRanks(p []float64, b int, both bool) (va, vb float64) {
	vb = Select(p, b)
	if both {
		// After Select, p[:b] holds the b smallest values.
		va = p[0]
		for _, v := range p[:b] {
			va = max(va, v)
		}
	}
	return va, vb
}

// selectJob is the split selection's workspace, kept in a pool: a
// GF-SVGD iteration allocates nothing once warm.
type selectJob struct {
	p         []float64
	lo, hi    float64 // the bracket [lo, hi]
	size      int     // values per piece
	copying   bool    // the second pass
	below, in []int   // per piece: values < lo, values in the bracket
	nan       []bool  // per piece: a NaN seen
	off       []int   // per piece: where its bracket values go in mid
	sample    []float64
	mid       []float64
}

var selectJobs = sync.Pool{New: func() any {
	return &selectJob{
		below: make([]int, selectChunks), in: make([]int, selectChunks),
		nan: make([]bool, selectChunks),
		off: make([]int, selectChunks),
	}
}}

// ranks is the split selection; ok is false when the bracket missed the
// rank, held more than a quarter of the values, or a value is NaN (p is
// then untouched).
func (j *selectJob) ranks(p []float64, b int, both bool) (va, vb float64, ok bool) {
	n := len(p)
	s := min(selectSample, n/16)
	stride := n / s
	j.sample = j.sample[:0]
	for i := range s {
		j.sample = append(j.sample, p[i*stride])
	}
	// The wanted rank's place in the sample, and a margin of about six
	// standard deviations of a sample rank (√(s·q(1 − q)) ≤ √s / 2).
	at := int(float64(b) / float64(n) * float64(s))
	margin := 3*int(math.Sqrt(float64(s))) + 8
	loR, hiR := at-margin, at+margin
	j.lo, j.hi = math.Inf(-1), math.Inf(1)
	if loR > 0 {
		j.lo = Select(j.sample, loR)
	}
	if hiR < s-1 {
		j.hi = Select(j.sample, hiR) // after the first Select, still exact
	}
	if j.lo != j.lo || j.hi != j.hi {
		return 0, 0, false
	}
	j.p, j.size, j.copying = p, (n+selectChunks-1)/selectChunks, false
	defer func() { j.p = nil }()
	grain := parallel.GrainWork(selectChunks, 2*float64(j.size))
	parallel.For(selectChunks, grain, j)
	below, in := 0, 0
	for c := range selectChunks {
		if j.nan[c] {
			return 0, 0, false
		}
		j.off[c] = in
		below += j.below[c]
		in += j.in[c]
	}
	// Rank b must fall in the bracket, and rank b − 1 too when both (the
	// bracket centred on b misses b − 1 only in degenerate samples); a
	// bracket that holds more than a quarter of the values (many ties)
	// would save little and cost a large copy.
	k := b - below
	if k < 0 || k >= in || (both && k == 0) || in > n/4 {
		return 0, 0, false
	}
	if cap(j.mid) < in {
		j.mid = make([]float64, in)
	}
	j.mid = j.mid[:in]
	j.copying = true
	parallel.For(selectChunks, grain, j)
	vb = Select(j.mid, k)
	if both {
		// Rank b − 1: after Select, mid[:k] holds the k smallest of the
		// bracket (k ≥ 1).
		va = j.mid[0]
		for _, v := range j.mid[:k] {
			va = max(va, v)
		}
	}
	return va, vb, true
}

// Do counts (first pass) or copies (second) the pieces [c0, c1).
func (j *selectJob) Do(c0, c1 int) {
	for c := c0; c < c1; c++ {
		part := j.p[min(c*j.size, len(j.p)):min((c+1)*j.size, len(j.p))]
		lo, hi := j.lo, j.hi
		if j.copying {
			dst := j.mid[j.off[c]:]
			w := 0
			for _, v := range part {
				if v >= lo && v <= hi {
					dst[w] = v
					w++
				}
			}
			continue
		}
		// Counts without branches (conditional moves: a value falls below
		// the bracket about as often as not, which a branch would guess
		// wrong half the time).
		below, upto, nans := 0, 0, 0
		for _, v := range part {
			if v < lo {
				below++
			}
			if v <= hi {
				upto++
			}
			if v != v {
				nans++
			}
		}
		j.below[c], j.in[c], j.nan[c] = below, upto-below, nans > 0
	}
}
