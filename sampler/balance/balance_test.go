package balance

import (
	"math"
	"testing"
)

// TestLocallyBalanced checks g(t) = t·g(1/t), in log form
// LogWeight(δ) = δ + LogWeight(−δ), and the text round trip.
func TestLocallyBalanced(t *testing.T) {
	for _, b := range []Func{Sqrt, Ratio} {
		for _, d := range []float64{-800, -30, -1, -1e-9, 0, 0.3, 5, 40, 900} {
			lhs, rhs := b.LogWeight(d), d+b.LogWeight(-d)
			if math.Abs(lhs-rhs) > 1e-12*math.Max(1, math.Abs(d)) {
				t.Errorf("%v: log g(e^%g) = %g, want %g", b, d, lhs, rhs)
			}
		}
		var c Func
		txt, _ := b.MarshalText()
		if err := c.UnmarshalText(txt); err != nil || c != b {
			t.Errorf("%v: round trip gave %v, %v", b, c, err)
		}
	}
	if got := Ratio.LogWeight(0); math.Abs(got-math.Log(0.5)) > 1e-15 {
		t.Errorf("ratio: log g(1) = %g, want log ½", got)
	}
	var c Func
	if err := c.UnmarshalText([]byte("barker")); err == nil {
		t.Error("an unknown name was accepted")
	}
}
