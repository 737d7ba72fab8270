package svgd

import (
	"fmt"
	"math"
	"testing"

	"github.com/dstein/dstein/rng"
)

var (
	posInf = math.Inf(1)
	negInf = math.Inf(-1)
)

// Tolerance of the weights against brute force: each weight is an
// exponential (or a ratio of counts) divided by a sum of n ≤ 12 positive
// terms, so it is off by a few times n·2⁻⁵³ ≈ 1e-15 relative; 1e-13
// leaves a margin while a wrong formula (a missing temperature, a count off
// by one) is off by a few percent or more.
const weightTol = 1e-13

// refSelf is w_j = 1/Σ_l exp(β(logw_l − logw_j)), which needs no
// max-shift to stay finite for large log weights; −Inf entries get 0, and
// +Inf entries share all the weight.
func refSelf(logw []float64, beta float64) []float64 {
	w := make([]float64, len(logw))
	nInf := 0
	for _, v := range logw {
		if math.IsInf(v, 1) {
			nInf++
		}
	}
	for j, lj := range logw {
		switch {
		case nInf > 0:
			if math.IsInf(lj, 1) {
				w[j] = 1 / float64(nInf)
			}
		case math.IsInf(lj, -1):
		default:
			var s float64
			for _, l := range logw {
				s += math.Exp(beta * (l - lj)) // exp(−Inf) = 0
			}
			w[j] = 1 / s
		}
	}
	return w
}

// refRank is γ_j = n/#{l : logw_l ≥ logw_j} (0 where logw_j = −Inf),
// normalised; with +Inf entries, those share all the weight.
func refRank(logw []float64) []float64 {
	n := len(logw)
	w := make([]float64, n)
	for _, v := range logw {
		if math.IsInf(v, 1) {
			return refSelf(logw, 1)
		}
	}
	var sum float64
	for j, lj := range logw {
		if math.IsInf(lj, -1) {
			continue
		}
		c := 0
		for _, l := range logw {
			if l >= lj {
				c++
			}
		}
		w[j] = float64(n) / float64(c)
		sum += w[j]
	}
	for j := range w {
		w[j] /= sum
	}
	return w
}

func sumSquares(w []float64) float64 {
	var s float64
	for _, v := range w {
		s += v * v
	}
	return s
}

func TestWeightsMatchBruteForce(t *testing.T) {
	r := rng.NewKey(11).Rand()
	random := make([]float64, 12)
	for j := range random {
		random[j] = 3 * r.NormFloat64()
	}
	cases := []struct {
		name string
		logw []float64
	}{
		{"random", random},
		{"large", []float64{1000, 1001, 998.5, 1000}},     // exp overflows without a shift
		{"very negative", []float64{-2000, -2001, -1999}}, // exp underflows without a shift
		{"ties", []float64{0.5, -1, 0.5, 2, -1, 0.5, 2}},
		{"-Inf entries", []float64{0.3, negInf, -1.2, negInf, 0.3, 4}},
		{"+Inf entries", []float64{0.3, posInf, -1.2, negInf, posInf, 4}},
		{"one", []float64{-7}},
		{"one finite among -Inf", []float64{negInf, 2, negInf}},
	}
	for _, c := range cases {
		logw := append([]float64(nil), c.logw...)
		n := len(logw)
		type run struct {
			kind  Weighting
			power float64
			want  []float64
		}
		runs := []run{
			{SelfNormalized, 1, refSelf(c.logw, 1)},
			{SelfNormalized, 0, refSelf(c.logw, 1)}, // 0 means no tempering
			{SelfNormalized, 0.5, refSelf(c.logw, 0.5)},
			{SelfNormalized, 0.1, refSelf(c.logw, 0.1)},
			{Rank, 1, refRank(c.logw)},
		}
		for _, ru := range runs {
			name := fmt.Sprintf("%s %v β=%v", c.name, ru.kind, ru.power)
			for _, scratch := range [][]int{nil, make([]int, n+3)} {
				w := make([]float64, n)
				for j := range w {
					w[j] = math.NaN()
				}
				ess := Weights(w, logw, ru.kind, ru.power, scratch)
				var sum float64
				for j := range w {
					sum += w[j]
					if !(math.Abs(w[j]-ru.want[j]) <= weightTol*ru.want[j]) {
						t.Fatalf("%s: w = %v; brute force %v", name, w, ru.want)
					}
				}
				if !(math.Abs(sum-1) <= weightTol) {
					t.Errorf("%s: weights sum to %v", name, sum)
				}
				if want := 1 / sumSquares(ru.want); !(math.Abs(ess-want) <= weightTol*want) {
					t.Errorf("%s: ESS %v; want 1/Σw² = %v", name, ess, want)
				}
			}
			for j := range logw {
				if math.Float64bits(logw[j]) != math.Float64bits(c.logw[j]) {
					t.Fatalf("%s: Weights changed logw to %v", name, logw)
				}
			}
		}
	}
}

// Rank weights of distinct values are n/(n − rank): for 4 values, 4/4,
// 4/3, 4/2, 4/1 in increasing order, summing to 25/3.
func TestRankWeightsByHand(t *testing.T) {
	w := make([]float64, 4)
	Weights(w, []float64{3, -1, 10, 0}, Rank, 1, nil)
	want := []float64{2 * 3.0 / 25, 1 * 3.0 / 25, 4 * 3.0 / 25, 4.0 / 3 * 3 / 25}
	for j := range w {
		if !(math.Abs(w[j]-want[j]) <= weightTol*want[j]) {
			t.Fatalf("rank weights %v; want %v", w, want)
		}
	}
}

// When every log ratio is −Inf there is nothing to normalise: both
// weightings fall back to uniform weights (numeric.NormalizeLogWeights'
// convention), with ESS n, rather than NaN.
func TestWeightsAllNegInf(t *testing.T) {
	for _, kind := range []Weighting{SelfNormalized, Rank} {
		w := make([]float64, 4)
		ess := Weights(w, []float64{negInf, negInf, negInf, negInf}, kind, 1, nil)
		for _, v := range w {
			if v != 0.25 {
				t.Errorf("%v: weights %v for all −Inf; want uniform", kind, w)
				break
			}
		}
		if ess != 4 {
			t.Errorf("%v: ESS %v for all −Inf; want 4", kind, ess)
		}
	}
}

// ESS against (Σ r)²/Σ r² computed directly from exp(logw) for moderate
// values (the same 1e-13 relative as the weights), invariance under a shift
// that overflows exp, the count of +Inf entries, and 0 when every ratio is
// zero.
func TestESS(t *testing.T) {
	r := rng.NewKey(12).Rand()
	logw := make([]float64, 10)
	for j := range logw {
		logw[j] = 2 * r.NormFloat64()
	}
	logw[3] = negInf
	var s, s2 float64
	for _, l := range logw {
		e := math.Exp(l)
		s += e
		s2 += e * e
	}
	want := s * s / s2
	if got := ESS(logw); !(math.Abs(got-want) <= weightTol*want) {
		t.Errorf("ESS = %v; brute force %v", got, want)
	}
	shifted := make([]float64, len(logw))
	for j, l := range logw {
		shifted[j] = l + 800
	}
	if got := ESS(shifted); !(math.Abs(got-want) <= weightTol*want) {
		t.Errorf("ESS of log weights shifted by 800 = %v; want %v", got, want)
	}
	// Self-normalised weights' 1/Σw² is the same number.
	w := make([]float64, len(logw))
	if got := Weights(w, logw, SelfNormalized, 1, nil); !(math.Abs(got-want) <= weightTol*want) {
		t.Errorf("Weights' ESS = %v; ESS %v", got, want)
	}
	for _, c := range []struct {
		logw []float64
		want float64
	}{
		{[]float64{0, 0, 0, 0, 0}, 5},
		{[]float64{1.5}, 1},
		{[]float64{0, math.Log(3)}, 16.0 / 10}, // r = 1, 3
		{[]float64{posInf, 2, posInf, negInf}, 2},
		{[]float64{negInf, negInf, negInf}, 0},
		{nil, 0},
	} {
		if got := ESS(c.logw); !(math.Abs(got-c.want) <= weightTol*c.want) {
			t.Errorf("ESS(%v) = %v; want %v", c.logw, got, c.want)
		}
	}
}

func TestWeightingText(t *testing.T) {
	for _, w := range []Weighting{SelfNormalized, Rank} {
		b, _ := w.MarshalText()
		var got Weighting
		if err := got.UnmarshalText(b); err != nil || got != w {
			t.Errorf("%v round-trips to %v, %v", w, got, err)
		}
	}
	var w Weighting
	if err := w.UnmarshalText([]byte("softmax")); err == nil {
		t.Error("unknown weighting accepted")
	}
	for _, k := range []Kernel{RBF, Coordinatewise} {
		b, _ := k.MarshalText()
		var got Kernel
		if err := got.UnmarshalText(b); err != nil || got != k {
			t.Errorf("%v round-trips to %v, %v", k, got, err)
		}
	}
	var k Kernel
	if err := k.UnmarshalText([]byte("laplace")); err == nil {
		t.Error("unknown kernel accepted")
	}
}
