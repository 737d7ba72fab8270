package exact

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
)

// rbmTol is the agreement asked of LogZ (relative to max(1, |LogZ|)), the
// marginals and the means between hidden enumeration and visible
// enumeration: both are float64 sums of at most 2^14 positive terms, so
// their rounding errors are below 1e-12.
const rbmTol = 1e-9

func rbmCompare(t *testing.T, name string, got, want *Result, tol float64) {
	t.Helper()
	if diff := math.Abs(got.LogZ - want.LogZ); !(diff <= tol*max(1, math.Abs(want.LogZ))) {
		t.Errorf("%s: LogZ = %.15g, want %.15g (diff %.3g)", name, got.LogZ, want.LogZ, diff)
	}
	for i := range want.Means {
		for s := range want.Marginals[i] {
			if diff := math.Abs(got.Marginals[i][s] - want.Marginals[i][s]); !(diff <= tol) {
				t.Errorf("%s: P(z_%d = state %d) = %.15g, want %.15g (diff %.3g)", name, i, s, got.Marginals[i][s], want.Marginals[i][s], diff)
			}
		}
		if diff := math.Abs(got.Means[i] - want.Means[i]); !(diff <= 2*tol) {
			t.Errorf("%s: E[z_%d] = %.15g, want %.15g (diff %.3g)", name, i, got.Means[i], want.Means[i], diff)
		}
	}
}

func mustRandomRBM(t testing.TB, d, m int, wStd, biasStd float64, seed uint64) *rbm.RBM {
	t.Helper()
	r, err := rbm.Random(d, m, wStd, biasStd, seed)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// rbmVariants are the kernels and chunkings every small case runs through:
// the default, the slow path alone, and chunks of four configurations (so
// that the fold over chunks is exercised).
var rbmVariants = []struct {
	name      string
	chunkBits int
	slow      bool
}{{"default", rbmChunkBits, false}, {"slow", rbmChunkBits, true}, {"chunks4", 2, false}, {"chunks4slow", 2, true}}

func TestRBMTruthMatchesEnumerate(t *testing.T) {
	seed := uint64(1)
	for d := 6; d <= 10; d++ {
		for m := 0; m <= 6; m++ {
			for _, wStd := range []float64{0.3, 1.5} {
				seed++
				r := mustRandomRBM(t, d, m, wStd, 1, seed)
				want, err := Enumerate(r, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range rbmVariants {
					tr, err := newRBMTruth(r, v.chunkBits, v.slow)
					if err != nil {
						t.Fatal(err)
					}
					rbmCompare(t, fmt.Sprintf("d=%d M=%d wStd=%v %s", d, m, wStd, v.name), tr.Result(), want, rbmTol)
				}
			}
		}
	}
}

// Large weights and biases send every chunk, or single configurations, to
// the slow paths: a column of weights ±100 makes Π(1+v_i) overflow the fast
// kernel's bound in half the configurations, weights of std 200 fail its
// range check, and a bias of 400 makes v_i underflow.
func TestRBMTruthExtremeParameters(t *testing.T) {
	const d, m = 8, 6
	mk := func(f func(i, k int) float64, b []float64) *rbm.RBM {
		W := make([][]float64, d)
		for i := range W {
			W[i] = make([]float64, m)
			for k := range W[i] {
				W[i][k] = f(i, k)
			}
		}
		r, err := rbm.New(W, b, []float64{0.5, -0.3, 0.2, 0.1, -1, 2})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	noise := rng.NewKey(3).For(rng.Model).Rand()
	small := make([][]float64, d)
	for i := range small {
		small[i] = make([]float64, m)
		for k := range small[i] {
			small[i][k] = 0.3 * noise.NormFloat64()
		}
	}
	cases := map[string]*rbm.RBM{
		"column100": mk(func(i, k int) float64 {
			if k == 2 {
				return 100 * float64(1-2*(i%2))
			}
			return small[i][k]
		}, nil),
		"std200":  mk(func(i, k int) float64 { return 200 * small[i][k] / 0.3 }, nil),
		"bias400": mk(func(i, k int) float64 { return small[i][k] }, []float64{400, -400, 1, 0, 0, 0, 0, 0}),
	}
	for name, r := range cases {
		want, err := Enumerate(r, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range rbmVariants {
			tr, err := newRBMTruth(r, v.chunkBits, v.slow)
			if err != nil {
				t.Fatal(err)
			}
			rbmCompare(t, name+" "+v.name, tr.Result(), want, rbmTol)
		}
	}
}

// The fast kernel against the slow path on a model too large to enumerate
// visibly (d = 40, M = 14: four chunks of 2^12). The two differ only in
// rounding; 1e-11 leaves a factor ~100 over the observed 1e-13.
func TestRBMTruthFastMatchesSlow(t *testing.T) {
	r := mustRandomRBM(t, 40, 14, 0.3, 1, 99)
	fast, err := NewRBM(r)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := newRBMTruth(r, rbmChunkBits, true)
	if err != nil {
		t.Fatal(err)
	}
	rbmCompare(t, "fast vs slow", fast.Result(), slow.Result(), 1e-11)
}

// With GOMAXPROCS 1 and 2, NewRBM and Sample give the same bits.
func TestRBMTruthDeterministic(t *testing.T) {
	r := mustRandomRBM(t, 30, 14, 0.4, 1, 5)
	run := func(procs int) (*Result, []int) {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		tr, err := NewRBM(r)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]int, 200*r.Dim())
		tr.Sample(dst, rng.NewKey(8).For(rng.Sample).Rand())
		return tr.Result(), dst
	}
	r1, s1 := run(1)
	r2, s2 := run(2)
	if math.Float64bits(r1.LogZ) != math.Float64bits(r2.LogZ) {
		t.Errorf("LogZ differs: %v on 1 core, %v on 2", r1.LogZ, r2.LogZ)
	}
	for i := range r1.Means {
		if math.Float64bits(r1.Means[i]) != math.Float64bits(r2.Means[i]) ||
			math.Float64bits(r1.Marginals[i][0]) != math.Float64bits(r2.Marginals[i][0]) ||
			math.Float64bits(r1.Marginals[i][1]) != math.Float64bits(r2.Marginals[i][1]) {
			t.Errorf("unit %d differs: %v %v on 1 core, %v %v on 2", i, r1.Means[i], r1.Marginals[i], r2.Means[i], r2.Marginals[i])
		}
	}
	for j := range s1 {
		if s1[j] != s2[j] {
			t.Fatalf("samples differ at %d", j)
		}
	}
}

// rbmExactPair returns E[z_i z_j] by visible enumeration.
func rbmExactPair(r *rbm.RBM, logZ float64, i, j int) float64 {
	d := r.Dim()
	z := make([]int, d)
	var e float64
	for idx := range 1 << d {
		for u := range d {
			z[u] = idx >> u & 1
		}
		e += math.Exp(r.LogProb(z)-logZ) * model.Spin(z[i]) * model.Spin(z[j])
	}
	return e
}

// Sample frequencies against the exact marginals and one pair moment, each
// within 4 standard errors of n = 20000 i.i.d. draws (a false alarm rate of
// about 6e-5 per statistic; the seed is fixed, so the test is
// deterministic). The chunked variant (chunks of four hidden
// configurations, 16 chunks) exercises the search over chunks.
func TestRBMTruthSampleFrequencies(t *testing.T) {
	const d, m, n = 8, 4, 20000
	r := mustRandomRBM(t, d, m, 1, 1, 11)
	for _, v := range []struct {
		name      string
		chunkBits int
	}{{"default", rbmChunkBits}, {"chunks4", 2}} {
		tr, err := newRBMTruth(r, v.chunkBits, false)
		if err != nil {
			t.Fatal(err)
		}
		res := tr.Result()
		dst := make([]int, n*d)
		tr.Sample(dst, rng.NewKey(21).For(rng.Sample).Rand())
		for i := range d {
			var cnt float64
			for k := range n {
				cnt += float64(dst[k*d+i])
			}
			p := res.Marginals[i][1]
			se := math.Sqrt(p * (1 - p) / n)
			if diff := math.Abs(cnt/n - p); diff > 4*se {
				t.Errorf("%s: unit %d: frequency of +1 %.4f, exact %.4f (%.1f standard errors)", v.name, i, cnt/n, p, diff/se)
			}
		}
		for _, pr := range [][2]int{{0, 1}, {2, 7}} {
			want := rbmExactPair(r, res.LogZ, pr[0], pr[1])
			var sum float64
			for k := range n {
				sum += model.Spin(dst[k*d+pr[0]]) * model.Spin(dst[k*d+pr[1]])
			}
			se := math.Sqrt((1 - want*want) / n)
			if diff := math.Abs(sum/n - want); diff > 4*se {
				t.Errorf("%s: E[z_%d z_%d]: sample %.4f, exact %.4f (%.1f standard errors)", v.name, pr[0], pr[1], sum/n, want, diff/se)
			}
		}
	}
}

// The joint distribution of 3-unit RBMs with 64 hidden configurations, in
// every kernel and chunking of rbmVariants: each of the 8 visible states
// within 4 standard errors of n = 40000 draws, plus 1/n for states of
// probability near 0 (fixed seeds, so deterministic). The second model has a column
// of weights ±100, so that half the configurations go through the fast
// kernel's per-configuration fallback.
func TestRBMTruthSampleJoint(t *testing.T) {
	const d, m, n = 3, 6, 40000
	random := mustRandomRBM(t, d, m, 0.8, 0.5, 13)
	W := make([][]float64, d)
	for i := range W {
		W[i] = make([]float64, m)
		for k := range W[i] {
			W[i][k] = random.Weight(i, k)
		}
		W[i][3] = 100 * float64(1-2*(i%2))
	}
	column, err := rbm.New(W, random.VisibleBias(), random.HiddenBias())
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*rbm.RBM{"random": random, "column100": column} {
		for _, v := range rbmVariants {
			tr, err := newRBMTruth(r, v.chunkBits, v.slow)
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]int, n*d)
			tr.Sample(dst, rng.NewKey(4).For(rng.Sample).Rand())
			var cnt [8]float64
			for k := range n {
				cnt[dst[k*d]<<2|dst[k*d+1]<<1|dst[k*d+2]]++
			}
			for idx := range 8 {
				z := []int{idx >> 2 & 1, idx >> 1 & 1, idx & 1}
				p := math.Exp(r.LogProb(z) - tr.Result().LogZ)
				se := math.Sqrt(p * (1 - p) / n)
				if diff := math.Abs(cnt[idx]/n - p); diff > 4*se+1/float64(n) {
					t.Errorf("%s %s: state %v: frequency %.5f, exact %.5f (%.1f standard errors)", name, v.name, z, cnt[idx]/n, p, diff/se)
				}
			}
		}
	}
}

func TestRBMTruthSampleBuffer(t *testing.T) {
	tr, err := NewRBM(mustRandomRBM(t, 3, 2, 1, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	// An empty buffer draws nothing; a ragged one panics.
	tr.Sample(nil, rng.NewKey(4).For(rng.Sample).Rand())
	defer func() {
		if recover() == nil {
			t.Error("Sample accepted a buffer whose length is not a multiple of d")
		}
	}()
	tr.Sample(make([]int, 4), rng.NewKey(4).For(rng.Sample).Rand())
}

func TestRBMTruthErrors(t *testing.T) {
	r := mustRandomRBM(t, 3, MaxHidden+1, 0.1, 0.1, 1)
	_, err := NewRBM(r)
	if err == nil || !strings.Contains(err.Error(), "MaxHidden") || !strings.Contains(err.Error(), "2^M·d") {
		t.Errorf("NewRBM with %d hidden units: error %v, want one naming MaxHidden and the cost", MaxHidden+1, err)
	}
	if _, err := NewRBM(nil); err == nil {
		t.Error("NewRBM(nil) gave no error")
	}
}

// BenchmarkRBMTruth times NewRBM at the Gibbs-with-Gradients protocol's
// size (W std √0.05, biases N(0,1)). M=25 takes seconds per op; run it by
// hand with -bench 'RBMTruth/.*M=25' -benchtime 1x (skipped with -short).
func BenchmarkRBMTruth(b *testing.B) {
	for _, m := range []int{20, 25} {
		b.Run(fmt.Sprintf("d=100,M=%d", m), func(b *testing.B) {
			if m > 20 && testing.Short() {
				b.Skip("M=25 is skipped with -short")
			}
			r := mustRandomRBM(b, 100, m, math.Sqrt(0.05), 1, 1)
			for b.Loop() {
				if _, err := NewRBM(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
