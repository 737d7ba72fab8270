package numeric

import (
	"math"
	"testing"
)

var inf = math.Inf(1)

func TestLogSumExp(t *testing.T) {
	cases := []struct {
		x    []float64
		want float64
	}{
		{nil, -inf},
		{[]float64{-inf, -inf}, -inf},
		{[]float64{0, 0}, math.Ln2},
		{[]float64{1000, 1000}, 1000 + math.Ln2},
		{[]float64{-1000, -inf}, -1000},
		{[]float64{1, inf}, inf},
	}
	for _, c := range cases {
		if got := LogSumExp(c.x); got != c.want && math.Abs(got-c.want) > 1e-12 {
			t.Errorf("LogSumExp(%v) = %v; want %v", c.x, got, c.want)
		}
	}
}

func TestStableFunctions(t *testing.T) {
	for _, a := range []float64{-800, -30, -1, 0, 1e-8, 2, 30, 800} {
		if got, want := Log2Cosh(a), math.Log(2*math.Cosh(a)); !math.IsInf(want, 0) && math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("Log2Cosh(%v) = %v; want %v", a, got, want)
		}
		if v := Log2Cosh(a); math.IsInf(v, 0) || math.IsNaN(v) {
			t.Errorf("Log2Cosh(%v) = %v", a, v)
		}
		s := Sigmoid(a)
		if s < 0 || s > 1 || math.IsNaN(s) {
			t.Errorf("Sigmoid(%v) = %v", a, s)
		}
		if l := LogSigmoid(a); math.IsNaN(l) || math.IsInf(l, 0) || (a > -700 && math.Abs(l-math.Log(s)) > 1e-12) {
			t.Errorf("LogSigmoid(%v) = %v; log(Sigmoid) = %v", a, l, math.Log(s))
		}
	}
	// Log1mExp near 0 and far below keeps relative accuracy.
	if got, want := Log1mExp(-1e-10), math.Log(1e-10); math.Abs(got-want) > 1e-9 {
		t.Errorf("Log1mExp(-1e-10) = %v; want %v", got, want)
	}
	if got := Log1mExp(-50); math.Abs(got+math.Exp(-50)) > 1e-30 {
		t.Errorf("Log1mExp(-50) = %v; want %v", got, -math.Exp(-50))
	}
	if got := LogDiffExp(1, 1); !math.IsInf(got, -1) {
		t.Errorf("LogDiffExp(1, 1) = %v; want -Inf", got)
	}
	if got, want := LogDiffExp(math.Log(3), 0), math.Log(2); math.Abs(got-want) > 1e-15 {
		t.Errorf("LogDiffExp = %v; want %v", got, want)
	}
}

func TestNormalizeLogWeights(t *testing.T) {
	w := []float64{0, math.Log(3)}
	if ess := NormalizeLogWeights(w); math.Abs(w[0]-0.25) > 1e-15 || math.Abs(ess-1/(0.0625+0.5625)) > 1e-12 {
		t.Errorf("weights %v ess %v", w, ess)
	}
	w = []float64{1e308, 5, inf, inf}
	if ess := NormalizeLogWeights(w); w[0] != 0 || w[2] != 0.5 || w[3] != 0.5 || ess != 2 {
		t.Errorf("+Inf entries should share the mass: %v ess %v", w, ess)
	}
	w = []float64{-inf, -inf, -inf}
	if ess := NormalizeLogWeights(w); w[0] != 1.0/3 || ess != 3 {
		t.Errorf("all −Inf: %v ess %v", w, ess)
	}
	w = []float64{-1e300, 0, 1e300}
	NormalizeLogWeights(w)
	if w[2] != 1 || w[0] != 0 {
		t.Errorf("extreme log weights: %v", w)
	}
}
