package optim

import "testing"

// The recursion moves X by Gain·(a − Target), clamps it, and after the
// last step fixes X at the mean of the values the second half ran with.
func TestAveraged(t *testing.T) {
	r := Averaged{X: 1, Gain: 0.5, Target: 0.5, Lo: -10, Hi: 1.5, Steps: 4}
	var got []float64
	for step, a := range []float64{1, 0.5, 0, 0.5} {
		x, done := r.Update(step+1, a)
		got = append(got, x)
		if done != (step == 3) {
			t.Errorf("step %d: done %v", step+1, done)
		}
	}
	// 1 → 1.25 → 1.25 → 1.0; the second half ran with 1.25 and 1.0.
	want := []float64{1.25, 1.25, 1, 1.125}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("values %v; want %v", got, want)
		}
	}
	c := Averaged{X: 1.4, Gain: 1, Target: 0, Lo: 0, Hi: 1.5, Steps: 10}
	if x, _ := c.Update(1, 1); x != 1.5 {
		t.Errorf("unclamped: %v; want 1.5", x)
	}
}
