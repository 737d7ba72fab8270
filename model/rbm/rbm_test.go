package rbm

import (
	"math"
	"strings"
	"testing"

	"github.com/dstein/dstein/internal/numeric"
	"github.com/dstein/dstein/model/modeltest"
	"github.com/dstein/dstein/rng"
)

// joint sums the hidden units out by brute force: log Σ_h exp(zᵀWh + bᵀz +
// cᵀh), independently of the free-energy formula.
func joint(W [][]float64, b, c []float64) func(z []int) float64 {
	d, m := len(W), len(c)
	return func(z []int) float64 {
		terms := make([]float64, 0, 1<<m)
		for hb := 0; hb < 1<<m; hb++ {
			var e float64
			for k := range m {
				hk := float64(2*((hb>>k)&1) - 1)
				e += c[k] * hk
				for i := range d {
					e += (2*float64(z[i]) - 1) * W[i][k] * hk
				}
			}
			for i := range d {
				e += b[i] * (2*float64(z[i]) - 1)
			}
			terms = append(terms, e)
		}
		return numeric.LogSumExp(terms)
	}
}

func TestConformanceAgainstHiddenSum(t *testing.T) {
	r, err := Random(7, 4, 0.8, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	W := make([][]float64, r.Dim())
	for i := range W {
		W[i] = make([]float64, r.Hidden())
		for k := range W[i] {
			W[i][k] = r.Weight(i, k)
		}
	}
	modeltest.Check(t, r, modeltest.Options{Reference: joint(W, r.VisibleBias(), r.HiddenBias())})

	// Large weights: the tracker's flip identity gives way to direct
	// differences where 2|W_ik| > 3; both paths against the hidden sum.
	big, err := Random(6, 3, 2.5, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	Wb := make([][]float64, big.Dim())
	for i := range Wb {
		Wb[i] = make([]float64, big.Hidden())
		for k := range Wb[i] {
			Wb[i][k] = big.Weight(i, k)
		}
	}
	modeltest.Check(t, big, modeltest.Options{Reference: joint(Wb, big.VisibleBias(), big.HiddenBias()), Tol: 1e-8})

	// The example of the model-file documentation, and M = 0.
	W2 := [][]float64{{0.1, -0.2}, {0.3, 0.0}, {0.05, 0.1}}
	r2, err := New(W2, []float64{0, 0.1, -0.1}, []float64{0.2, -0.2})
	if err != nil {
		t.Fatal(err)
	}
	modeltest.Check(t, r2, modeltest.Options{Reference: joint(W2, []float64{0, 0.1, -0.1}, []float64{0.2, -0.2})})
	r3, err := New([][]float64{{}, {}}, []float64{0.5, -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	modeltest.Check(t, r3, modeltest.Options{Reference: joint([][]float64{{}, {}}, []float64{0.5, -1}, nil)})
}

// The documented order of draws: W row-major, then b, then c.
func TestRandomDrawOrder(t *testing.T) {
	r, err := Random(3, 2, 0.5, 2, 11)
	if err != nil {
		t.Fatal(err)
	}
	g := rng.NewKey(11).For(rng.Model).Rand()
	for i := range 3 {
		for k := range 2 {
			if want := 0.5 * g.NormFloat64(); r.Weight(i, k) != want {
				t.Fatalf("W[%d][%d] = %v; want %v", i, k, r.Weight(i, k), want)
			}
		}
	}
	for i := range 3 {
		if want := 2 * g.NormFloat64(); r.VisibleBias()[i] != want {
			t.Fatalf("b[%d] = %v; want %v", i, r.VisibleBias()[i], want)
		}
	}
	for k := range 2 {
		if want := 2 * g.NormFloat64(); r.HiddenBias()[k] != want {
			t.Fatalf("c[%d] = %v; want %v", k, r.HiddenBias()[k], want)
		}
	}
}

func TestLogProbLargeWeightsStayFinite(t *testing.T) {
	r, err := New([][]float64{{500, -800}, {900, 1000}}, []float64{300, -300}, []float64{-1000, 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range [][]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
		if lp := r.LogProb(z); math.IsNaN(lp) || math.IsInf(lp, 0) {
			t.Fatalf("LogProb(%v) = %v", z, lp)
		}
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	cases := map[string]struct {
		W    [][]float64
		b, c []float64
		want string
	}{
		"empty":  {nil, nil, nil, "no visible units"},
		"ragged": {[][]float64{{1, 2}, {1}}, nil, nil, "row 1 has 1 entries"},
		"b":      {[][]float64{{1}, {2}}, []float64{1}, nil, "b has 1 entries"},
		"c":      {[][]float64{{1}, {2}}, nil, []float64{1, 2}, "c has 2 entries"},
		"nan":    {[][]float64{{math.NaN()}}, nil, nil, "W[0][0] is NaN"},
	}
	for name, c := range cases {
		_, err := New(c.W, c.b, c.c)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want one containing %q", name, err, c.want)
		}
	}
}

// Weights so large that log p* could overflow are refused at construction.
func TestHugeParametersRefused(t *testing.T) {
	if _, err := New([][]float64{{1e308}, {1e308}}, nil, nil); err == nil {
		t.Error("W of 1e308 accepted")
	}
}
