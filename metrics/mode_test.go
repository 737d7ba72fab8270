package metrics

import (
	"context"
	"math"
	"testing"

	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/sampler"
)

// The exact mass of a 10×10 grid (transfer), a reference estimate of it
// from N = 20000 exact draws and a sample's estimate: the reference is
// within 5 of its standard errors of the exact mass (tail 5.7e-7; fixed
// seed), its SE is sqrt(Var(Y)/N) ≤ 0.5/sqrt(N), and the score is the
// squared error of the sample's estimate.
func TestModeMass(t *testing.T) {
	m := randomFieldGrid(t, 10, 10, 0.35, 0.1, 7)
	ex, err := ExactModeMass(context.Background(), m, memlimit.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	ref, err := ReferenceModeMass(m, exactSamples(t, m, n, 8))
	if err != nil {
		t.Fatal(err)
	}
	if ref.N != n || ref.SE <= 0 || ref.SE > 0.5/math.Sqrt(n) {
		t.Errorf("reference %+v", ref)
	}
	if math.Abs(ref.P-ex.P) > 5*ref.SE {
		t.Errorf("exact mass %v, reference %v ± %v", ex.P, ref.P, ref.SE)
	}
	s := exactSamples(t, m, 200, 9)
	est, err := SampleModeMass(m, s)
	if err != nil {
		t.Fatal(err)
	}
	if sc, _ := ex.Score(m, s); math.Abs(sc-(est-ex.P)*(est-ex.P)) > 1e-15 {
		t.Errorf("score %v, squared error %v", sc, (est-ex.P)*(est-ex.P))
	}
	t.Logf("10×10: exact %.5f, reference %.5f ± %.5f, 200 draws %.4f", ex.P, ref.P, ref.SE, est)
}

// Ties count half, an empty sample estimates 0, a model whose variables
// are not ±1 is refused.
func TestModeMassEdgeCases(t *testing.T) {
	m := randomFieldGrid(t, 1, 2, 0.3, 0.3, 1)
	s := sampler.NewSamples(4, 2)
	copy(s.Z, []int{1, 1, 0, 1, 1, 0, 0, 0}) // M = 2, 0, 0, −2
	if p, _ := SampleModeMass(m, s); p != 0.5 {
		t.Errorf("mass %v, want (1 + ½ + ½)/4 = ½", p)
	}
	ref, _ := ReferenceModeMass(m, s)
	// Y = 1, ½, ½, 0: variance 1/8, SE sqrt(1/32).
	if math.Abs(ref.SE-math.Sqrt(1.0/32)) > 1e-15 {
		t.Errorf("SE %v, want %v", ref.SE, math.Sqrt(1.0/32))
	}
	if p, err := SampleModeMass(m, sampler.NewSamples(0, 2)); p != 0 || err != nil {
		t.Errorf("empty sample: %v, %v", p, err)
	}
	c, _ := categorical.New([]categorical.Variable{{States: []float64{0, 1}, Probs: []float64{0.5, 0.5}}})
	if _, err := SampleModeMass(c, sampler.NewSamples(1, 1)); err == nil {
		t.Error("a 0/1 model was accepted")
	}
	if _, err := ExactModeMass(context.Background(), c, memlimit.Budget{}); err == nil {
		t.Error("a 0/1 model was accepted for the exact mass")
	}
}
