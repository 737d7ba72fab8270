package kernel

import (
	"math"
	"sync"

	"github.com/dstein/dstein/internal/parallel"
)

// The median of the n(n−1)/2 pairwise distances was the one step of the
// bandwidth that Select did on one core (2 ms of a 16 ms GF-SVGD
// iteration at n = 1000 on 2 cores). ranks splits it: a systematic sample
// brackets the wanted ranks (SampleBracket, as the GPU's median does),
// the cores count the values below the bracket and copy those inside it,
// and Select runs on the bracket's few percent. The counting pass has no
// branches, so this is faster than Select on one core too
// (BenchmarkMedian2: 4.5–5.1 ms against 6.5–7.6 ms). An order statistic
// is one value whatever finds it, so the result has the same bits as
// Select's; when the bracket misses the ranks (a sample far from typical)
// or a value is NaN, ranks falls back to Select on the whole slice.

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
	first := b // the lowest rank wanted
	if both {
		first = b - 1
	}
	j.lo, j.hi = SampleBracket(j.sample, int64(first), int64(b), int64(n), BracketSigmas)
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
	// The ranks must fall in the bracket; a bracket that holds more than
	// a quarter of the values (many ties) would save little and cost a
	// large copy.
	k := b - below
	if first < below || k >= in || in > n/4 {
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
		// bracket (k ≥ 1, since rank b − 1 is in it too).
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

// BracketSigmas is SampleBracket's usual half-width, in standard errors
// of a sample quantile.
const BracketSigmas = 4

// SampleBracket returns values lv ≤ hv of sample, an evenly spaced sample
// of m values, that bracket the order statistics of ranks lo … hi
// (0-based) of the m values unless the sample is far from typical: the
// sample's values at the quantiles lo/m and hi/m, widened by sigmas
// standard errors of a sample quantile (√(q(1 − q)/s) ≤ 1/(2√s)) and two
// places; −Inf or +Inf where that passes the sample's ends. sample is
// reordered. The caller counts the values below lv and inside the bracket
// and falls back to an exact selection when the ranks are not inside
// (the CPU's median, and the GPU's in package gpu).
func SampleBracket(sample []float64, lo, hi, m int64, sigmas float64) (lv, hv float64) {
	s := len(sample)
	spread := sigmas*math.Sqrt(0.25/float64(s)) + 2/float64(s)
	lv, hv = math.Inf(-1), math.Inf(1)
	if a := int(math.Floor((float64(lo)/float64(m) - spread) * float64(s))); a >= 0 {
		lv = Select(sample, a)
	}
	if b := int(math.Ceil((float64(hi)/float64(m) + spread) * float64(s))); b < s {
		hv = Select(sample, b) // exact after the first Select too
	}
	return lv, hv
}
