package gibbs

import (
	"context"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/transform"
)

// randomGrid returns a rows×cols Ising grid whose couplings are uniform on
// [−jmax, jmax] and fields uniform on [−hmax, hmax].
func randomGrid(t testing.TB, rows, cols int, jmax, hmax float64, seed uint64) *ising.Ising {
	t.Helper()
	r := rng.NewKey(seed).For(rng.Model).Rand()
	edges := ising.GridEdges(rows, cols, false, 1)
	for k := range edges {
		edges[k].Coupling = jmax * (2*r.Float64() - 1)
	}
	fields := make([]float64, rows*cols)
	for i := range fields {
		fields[i] = hmax * (2*r.Float64() - 1)
	}
	m, err := ising.NewGrid(rows, cols, false, edges, fields)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// moments returns E[z_i] and E[z_i z_j] (i < j, in row-major order of the
// pairs) of ±1 states: z holds n rows of d state indices, weighted by w
// (nil for 1 each).
func moments(z []int, w []float64, n, d int) (mean, pair []float64) {
	mean, pair = make([]float64, d), make([]float64, d*(d-1)/2)
	var tot float64
	for c := range n {
		wc := 1.0
		if w != nil {
			wc = w[c]
		}
		tot += wc
		row := z[c*d : (c+1)*d]
		k := 0
		for i := range d {
			si := float64(2*row[i] - 1)
			mean[i] += wc * si
			for j := i + 1; j < d; j++ {
				pair[k] += wc * si * float64(2*row[j]-1)
				k++
			}
		}
	}
	for i := range mean {
		mean[i] /= tot
	}
	for k := range pair {
		pair[k] /= tot
	}
	return mean, pair
}

// allStates returns the 2^d states of d spins (state s has spin i =
// bit i of s) as rows of state indices.
func allStates(d int) []int {
	z := make([]int, d<<d)
	for s := range 1 << d {
		for i := range d {
			z[s*d+i] = s >> i & 1
		}
	}
	return z
}

// checkMoments compares sampled means and pair moments of ±1 variables
// with exact ones: each is a mean of n independent ±1 values with variance
// 1 − m², so it must lie within k standard errors √((1−m²)/n) of the exact
// m.
func checkMoments(t *testing.T, name string, got, want []float64, n int, k float64) {
	t.Helper()
	bad := 0
	for q := range want {
		se := math.Sqrt(max(1-want[q]*want[q], 0) / float64(n))
		if math.Abs(got[q]-want[q]) > k*se+1e-12 {
			if bad++; bad <= 5 {
				t.Errorf("%s %d: %.4f, exact %.4f (%g SE = %.4f)", name, q, got[q], want[q], k, k*se)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d of %d off", name, bad, len(want))
	}
}

// Multi-spin chains reach the exact stationary law: after 400 sweeps, the
// final states of 6000 independent chains on a 4×4 grid with couplings up
// to ±1.2 and fields up to ±0.8 (every chain is mixed: the slowest modes
// of such a small frustrated grid decay within tens of sweeps) give the 16
// means E[z_i] and the 120 pair moments E[z_i z_j] within 4 standard errors
// √((1−m²)/n) of enumeration. For a correct kernel each check fails with
// probability 6·10⁻⁵, all 136 together with under 1%; the seed is fixed.
// n = 6000 is not a multiple of 64, so the last block is partly used.
func TestMultiSpinStationary(t *testing.T) {
	m := randomGrid(t, 4, 4, 1.2, 0.8, 3)
	const n = 6000
	s := newSampler(t, m, n, Settings{MultiSpin: true}, 11)
	out := sampler.Run(context.Background(), s, sampler.RunOptions{Iters: 400})
	if out.Status != sampler.Completed {
		t.Fatal(out.Err)
	}
	gm, gp := moments(s.Current(), nil, n, 16)
	all := allStates(16)
	w := make([]float64, 1<<16)
	for st := range w {
		w[st] = math.Exp(m.LogProb(all[st*16 : (st+1)*16]))
	}
	em, ep := moments(all, w, 1<<16, 16)
	checkMoments(t, "E[z_i]", gm, em, n, 4)
	checkMoments(t, "E[z_i z_j]", gp, ep, n, 4)
}

// One multi-spin sweep has exactly the law of one systematic Gibbs sweep,
// whatever the couplings: on a 3×3 grid with couplings up to ±4 and fields
// up to ±3 (thresholds near 0 and 2^64), chain c starts at state c mod 512
// and makes one sweep; the means and pair moments of the 51,200 results
// must be within 4 standard errors of those of the exact one-sweep
// transition law, averaged over the starts (computed by multiplying the 9
// exact conditionals of every start and outcome). The chains are
// independent but not identically distributed, so √((1−m²)/n) bounds the
// standard error from above. 81 checks: under 0.6% false alarms for a
// correct kernel.
func TestMultiSpinOneSweepLaw(t *testing.T) {
	m := randomGrid(t, 3, 3, 4, 3, 8)
	const d, starts, n = 9, 512, 512 * 100
	all := allStates(d)
	// law[o]: the probability of outcome o after one sweep, averaged over
	// the starts.
	law := make([]float64, starts)
	z := make([]int, d)
	for st := range starts {
		for o := range starts {
			copy(z, all[st*d:(st+1)*d])
			p := 1.0
			for i := range d {
				l := m.LocalField(z, i)
				p1 := 1 / (1 + math.Exp(-2*l))
				if o>>i&1 == 1 {
					p *= p1
				} else {
					p *= 1 - p1
				}
				z[i] = o >> i & 1
			}
			law[o] += p / starts
		}
	}
	em, ep := moments(all, law, starts, d)

	tr, _ := transform.ForModel(nil, m)
	p := sampler.NewProblem(m, tr, n, sampler.Init{}, rng.NewKey(4))
	for c := range n {
		copy(p.Z[c*d:(c+1)*d], all[c%starts*d:])
	}
	s, err := New(p, Settings{MultiSpin: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	gm, gp := moments(s.Current(), nil, n, d)
	checkMoments(t, "one sweep: E[z_i]", gm, em, n, 4)
	checkMoments(t, "one sweep: E[z_i z_j]", gp, ep, n, 4)
}

// The bit-sliced comparison of a site's 64 lanes gives exactly the scalar
// u < T of each lane's uniform u and threshold T. The test hands the kernel
// words built from chosen uniforms: level j's word carries bit 63−j of
// every undecided lane's u (random bits in the decided lanes, which must be
// ignored), and each lane that finishes alone gets u << j plus random low
// bits (which must be ignored too). The uniforms are random, except in
// one lane of 16 (every third trial) or one of 2 (every third trial), where
// they are T, T ± 1, 0, 2^64−1, or T with its bits below a random position
// randomised (equal prefixes of every length); so the sliced levels stop
// with 0, 1 or 2 lanes left, and at the depth limit. Every trial draws a
// new model: hubs of degree 0 to 6 (bit-sliced), 7 and 11 (lane by lane,
// tabulated and not) with random couplings, with the first two couplings
// so large that some thresholds are 0 and 2^64−1, or with the tabulated
// thresholds replaced by arbitrary ones sharing random prefixes, so that
// every truth table of the neighbours occurs at every bit level.
func TestMultiSpinComparison(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	degrees := []int{0, 1, 2, 3, 4, 5, 6, 7, 11}
	var saw0, sawMax, sawEq, sawDeep int
	var sawCut [msCut + 1]int // levels stopped with 0, 1, 2 lanes undecided
	for trial := range 2000 {
		var edges []ising.Edge
		var hubs []int
		var fields []float64
		for _, deg := range degrees {
			hub := len(fields)
			hubs = append(hubs, hub)
			fields = append(fields, r.NormFloat64())
			for e := range deg {
				cpl := 1.5 * r.NormFloat64()
				if trial%3 == 1 && e < 2 {
					cpl = 30 * float64(1-2*e)
				}
				edges = append(edges, ising.Edge{I: hub, J: len(fields), Coupling: cpl})
				fields = append(fields, 0)
			}
		}
		m, err := ising.New(len(fields), edges, fields)
		if err != nil {
			t.Fatal(err)
		}
		k := newSpinKernel(m)
		ms := newMultiSpin(k, 64)
		if trial%3 == 2 {
			base := r.Uint64()
			for q := range k.table {
				switch r.IntN(4) {
				case 0:
					k.table[q] = r.Uint64()
				case 1:
					k.table[q] = uint64(r.IntN(2)) * math.MaxUint64
				default:
					low := ^uint64(0) >> r.UintN(12)
					k.table[q] = base&^low | r.Uint64()&low
				}
			}
			ms.tabulate()
		}
		w := make([]uint64, len(fields))
		for i := range w {
			w[i] = r.Uint64()
		}
		act := ^uint64(0)
		if trial%2 == 1 {
			act = r.Uint64()
		}
		for h, i := range hubs {
			var u, th [64]uint64
			for l := range 64 {
				pat := 0
				for e, x := range k.Nbr[k.Start[i]:k.Start[i+1]] {
					pat |= int(w[x]>>l&1) << e
				}
				if tab := k.tstart[i]; tab >= 0 {
					th[l] = k.table[tab+pat]
				} else {
					th[l] = Threshold(k.PatternField(i, pat))
				}
				// Trials with no edge cases, a few, or many (which keep
				// lanes undecided through all msDepth levels).
				switch edge := [3]int{0, 16, 2}[trial/3%3]; {
				case edge == 0 || r.IntN(edge) > 0:
					u[l] = r.Uint64()
				case r.IntN(6) == 0:
					u[l] = th[l]
				case r.IntN(5) == 0:
					u[l] = th[l] - 1
				case r.IntN(4) == 0:
					u[l] = th[l] + 1
				case r.IntN(3) == 0:
					u[l] = 0
				case r.IntN(2) == 0:
					u[l] = math.MaxUint64
				default:
					keep := r.UintN(65)
					u[l] = th[l]
					if keep < 64 {
						low := ^uint64(0) >> keep
						u[l] = th[l]&^low | r.Uint64()&low
					}
				}
				switch {
				case th[l] == 0:
					saw0++
				case th[l] == math.MaxUint64:
					sawMax++
				}
				if u[l] == th[l] {
					sawEq++
				}
			}
			// The words the kernel should read.
			var list []uint64
			und, j := act, 0
			if degrees[h] <= maxSliceDegree {
				for ; j < msDepth && bits.OnesCount64(und) > msCut; j++ {
					word := r.Uint64() &^ und
					for l := range 64 {
						if und>>l&1 == 1 {
							ub, tb := u[l]>>(63-j)&1, th[l]>>(63-j)&1
							word |= ub << l
							if ub != tb {
								und &^= 1 << l
							}
						}
					}
					list = append(list, word)
				}
				if j == msDepth {
					sawDeep++
				} else {
					sawCut[bits.OnesCount64(und)]++
				}
			}
			for l := range 64 {
				if und>>l&1 == 1 {
					list = append(list, u[l]<<j|r.Uint64()>>(64-j))
				}
			}
			src := words{list: list}
			got := ms.site(i, w, act, &src)
			if src.used != len(list) {
				t.Fatalf("trial %d, degree %d: %d of %d words read", trial, degrees[h], src.used, len(list))
			}
			for l := range 64 {
				want := act>>l&1 == 1 && u[l] < th[l]
				if (got>>l&1 == 1) != want {
					t.Fatalf("trial %d, degree %d, lane %d: u = %#x, T = %#x: got +1 = %v", trial, degrees[h], l, u[l], th[l], !want)
				}
			}
		}
	}
	if saw0 == 0 || sawMax == 0 || sawEq == 0 || sawDeep == 0 || slices.Contains(sawCut[:], 0) {
		t.Errorf("edge cases not reached: T = 0 %d times, T = 2^64−1 %d times, u = T %d times, all %d levels %d times, 0, 1, 2 lanes left %v times", saw0, sawMax, sawEq, msDepth, sawDeep, sawCut)
	}
}

// Multi-spin chains give the same bits on 1 and 2 cores (1000 chains on
// the 10×10 grid: 16 blocks in 8 chunks on 2 cores), and the chains of
// full blocks do not depend on the number of chains.
func TestMultiSpinSameBits(t *testing.T) {
	m := randomGrid(t, 10, 10, 0.6, 0.3, 5)
	const d = 100
	run := func(n, procs int) []int {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		tr, _ := transform.ForModel(nil, m)
		p := sampler.NewProblem(m, tr, n, sampler.Init{}, rng.NewKey(9))
		for c := range n {
			for i := range d {
				p.Z[c*d+i] = (c*7 + i*i) % 3 & 1
			}
		}
		s, err := New(p, Settings{MultiSpin: true})
		if err != nil {
			t.Fatal(err)
		}
		sampler.Run(context.Background(), s, sampler.RunOptions{Iters: 20})
		return append([]int(nil), s.Current()...)
	}
	one := run(1000, 1)
	for _, procs := range []int{2, 16} {
		other := run(1000, procs)
		for q := range one {
			if one[q] != other[q] {
				t.Fatalf("chain %d, spin %d differs between GOMAXPROCS 1 and %d", q/d, q%d, procs)
			}
		}
	}
	fewer := run(980, 2) // 15 full blocks, then 20 chains
	for q := range 960 * d {
		if fewer[q] != one[q] {
			t.Fatalf("chain %d, spin %d differs between 1000 and 980 chains", q/d, q%d)
		}
	}
}

// Multi-spin sampling starts from the problem's states, and it is refused
// for models that are not ±1 pairwise and with stratified or block updates.
func TestMultiSpinSettings(t *testing.T) {
	g, _ := ising.Grid(3, 4, false, 0.2, nil)
	tr, _ := transform.ForModel(nil, g)
	p := sampler.NewProblem(g, tr, 70, sampler.Init{Mean: -1}, rng.NewKey(17))
	s, err := New(p, Settings{MultiSpin: true})
	if err != nil {
		t.Fatal(err)
	}
	for q, v := range s.Current() {
		if v != p.Z[q] {
			t.Fatalf("chain %d starts with z%d = %d, want %d", q/12, q%12, v, p.Z[q])
		}
	}
	for _, n := range []int{1, 70} {
		s := newSampler(t, g, n, Settings{MultiSpin: true}, 3)
		sampler.Run(context.Background(), s, sampler.RunOptions{Iters: 3})
		if got := s.Stats().Evaluations; got != int64(3*n*12) {
			t.Errorf("%d chains: %d evaluations after 3 sweeps, want %d", n, got, 3*n*12)
		}
		for _, v := range s.Current() {
			if v != 0 && v != 1 {
				t.Fatalf("%d chains: state %d", n, v)
			}
		}
	}
	b, _ := rbm.Random(6, 3, 0.8, 1, 4)
	c, _ := categorical.New([]categorical.Variable{{States: []float64{0, 1}, Probs: []float64{0.5, 0.5}}})
	for _, m := range []model.Model{b, c} {
		tr, _ := transform.ForModel(nil, m)
		if _, err := New(sampler.NewProblem(m, tr, 64, sampler.Init{}, rng.NewKey(1)), Settings{MultiSpin: true}); err == nil {
			t.Errorf("multi-spin sweeps of a %T accepted", m)
		}
	}
	for _, set := range []Settings{{MultiSpin: true, Stratified: true}, {MultiSpin: true, Scan: Block}} {
		if err := set.Validate(); err == nil {
			t.Errorf("%+v accepted", set)
		}
	}
}
