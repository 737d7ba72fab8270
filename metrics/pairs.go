package metrics

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/sampler"
)

// PairRMSE returns the root mean squared error of the sample's pair
// statistics against the exact ones in p, over the entries:
//
//   - when every variable has at most two states (±1 spins, 0/1 variables):
//     the second moments E[v(z_i)·v(z_j)] in the model's state values (spin
//     products E[z_i z_j] for ±1 models), one entry per pair i < j,
//     d(d−1)/2 in all;
//   - otherwise: the indicator pairs E[1[z_i = s]·1[z_j = t]] =
//     P(z_i = s, z_j = t) for every pair i < j and every s < K_i, t < K_j,
//     Σ_{i<j} K_i·K_j entries in all.
//
// Each sample estimate is a frequency over the n rows; an empty sample
// estimates every frequency (and so every moment) as 0, as
// sampler.Marginals does, and a model with one variable has no pairs: 0.
// The result is deterministic and never NaN.
//
// The rows are stored as one bit column per state (n·Σ K_i bits, nothing
// of size n·d²), and each frequency is a popcount of the AND of two
// columns, so the cost is Σ_{i<j} K_i·K_j·n/64 word operations (for ±1
// models d²·n/128) on the worker pool, with one partial sum per variable
// added in order: results do not depend on GOMAXPROCS. It panics when the
// sample's dimension is not p's or a state index is out of range.
func PairRMSE(s *sampler.Samples, p *exact.Pairs) float64 {
	d := p.Dim()
	if s.D != d {
		panic(fmt.Sprintf("metrics: samples of dimension %d against pairs of dimension %d", s.D, d))
	}
	if d < 2 {
		return 0
	}
	t := &pairTask{p: p, n: s.N, words: (s.N + 63) / 64, binary: true, colOff: make([]int, d+1)}
	for i := range d {
		k := p.Card(i)
		if k > 2 {
			t.binary = false
		}
		t.colOff[i+1] = t.colOff[i] + k
	}
	t.cols = make([]uint64, t.colOff[d]*t.words)
	t.count = make([]int, t.colOff[d])
	for r := range s.N {
		w, bit := r/64, uint64(1)<<(r%64)
		for i, st := range s.Row(r) {
			if st < 0 || st >= p.Card(i) {
				panic(fmt.Sprintf("metrics: sample %d has state %d for variable %d of %d states", r, st, i, p.Card(i)))
			}
			c := t.colOff[i] + st
			t.cols[c*t.words+w] |= bit
			t.count[c]++
		}
	}
	t.rowErr = make([]float64, d)
	parallel.For(d-1, 4, t)
	var sum, entries float64
	for i, e := range t.rowErr {
		sum += e
		for j := i + 1; j < d; j++ {
			if t.binary {
				entries++
			} else {
				entries += float64(p.Card(i) * p.Card(j))
			}
		}
	}
	return math.Sqrt(sum / entries)
}

// pairTask computes, for each variable i, the sum of squared errors of
// its pairs (i, j), j > i.
type pairTask struct {
	p      *exact.Pairs
	n      int
	words  int
	binary bool
	colOff []int    // first column of each variable
	cols   []uint64 // one n-bit column per (variable, state)
	count  []int    // rows in each column's state
	rowErr []float64
}

// and returns the number of rows in state column a and in column b.
func (t *pairTask) and(a, b int) int {
	x := t.cols[a*t.words : (a+1)*t.words]
	y := t.cols[b*t.words : (b+1)*t.words]
	y = y[:len(x)]
	c := 0
	for k, v := range x {
		c += bits.OnesCount64(v & y[k])
	}
	return c
}

func (t *pairTask) Do(lo, hi int) {
	p := t.p
	d := p.Dim()
	inv := 0.0
	if t.n > 0 {
		inv = 1 / float64(t.n)
	}
	for i := lo; i < hi; i++ {
		var e float64
		ki := p.Card(i)
		for j := i + 1; j < d; j++ {
			kj := p.Card(j)
			tab := p.Joint(i, j)
			if t.binary {
				// E[v_i v_j] from the counts of the four state pairs,
				// each from n11 and the states' counts.
				vi, vj := p.Values(i), p.Values(j)
				var est, want float64
				if t.n > 0 {
					var c [2][2]int
					switch {
					case ki == 2 && kj == 2:
						c[1][1] = t.and(t.colOff[i]+1, t.colOff[j]+1)
						c[1][0] = t.count[t.colOff[i]+1] - c[1][1]
						c[0][1] = t.count[t.colOff[j]+1] - c[1][1]
						c[0][0] = t.n - c[1][1] - c[1][0] - c[0][1]
					case ki == 2:
						c[1][0] = t.count[t.colOff[i]+1]
						c[0][0] = t.n - c[1][0]
					case kj == 2:
						c[0][1] = t.count[t.colOff[j]+1]
						c[0][0] = t.n - c[0][1]
					default:
						c[0][0] = t.n
					}
					for s := range ki {
						for u := range kj {
							est += float64(c[s][u]) * vi[s] * vj[u]
						}
					}
					est *= inv
				}
				for s := range ki {
					for u := range kj {
						want += tab[s*kj+u] * vi[s] * vj[u]
					}
				}
				e += (est - want) * (est - want)
				continue
			}
			for s := range ki {
				for u := range kj {
					est := 0.0
					if t.n > 0 {
						est = float64(t.and(t.colOff[i]+s, t.colOff[j]+u)) * inv
					}
					x := est - tab[s*kj+u]
					e += x * x
				}
			}
		}
		t.rowErr[i] = e
	}
}
