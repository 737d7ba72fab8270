package exact

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
)

// The transfer and the RBM's hidden enumeration against enumeration of the
// same model (hidden behind plainModel): sums of the same ≤ 2^20
// probabilities in another order, so 1e-9 is generous.
func TestModeMassMatchesEnumeration(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(81, 82))
	var models []model.Model
	var names []string
	for _, sh := range [][2]int{{1, 1}, {1, 4}, {2, 5}, {3, 3}, {4, 4}, {5, 3}} {
		for _, scale := range []float64{0.3, 1.5} {
			models = append(models, randomIsingGrid(t, sh[0], sh[1], scale, r))
			names = append(names, fmt.Sprintf("%d×%d scale %g", sh[0], sh[1], scale))
		}
	}
	for _, c := range [][2]int{{8, 3}, {10, 9}, {7, 0}} {
		models = append(models, mustRandomRBM(t, c[0], c[1], 0.8, 0.4, uint64(c[0]+c[1])))
		names = append(names, fmt.Sprintf("RBM %d×%d", c[0], c[1]))
	}
	for k, m := range models {
		got, err := ModeMass(ctx, m, memlimit.Budget{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := ModeMass(ctx, plainModel{m}, memlimit.Budget{})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: P(M > 0) + ½P(M = 0) = %.15g, enumeration %.15g", names[k], got, want)
		}
	}
}

// Without fields the grid and the RBM without biases are symmetric under
// z → −z: the mass is ½ exactly. A 3-spin chain by hand: P(M > 0) is the
// mass of the states with at least two up spins.
func TestModeMassSymmetricAndByHand(t *testing.T) {
	ctx := context.Background()
	g, _ := ising.Grid(10, 10, false, 0.4, nil)
	w := make([][]float64, 30)
	for i := range w {
		w[i] = []float64{0.3, -0.2, 0.5}
	}
	sym, _ := rbm.New(w, nil, nil)
	for name, m := range map[string]model.Model{"10×10 grid": g, "RBM 30×3": sym} {
		p, err := ModeMass(ctx, m, memlimit.Budget{})
		if err != nil || math.Abs(p-0.5) > 1e-12 {
			t.Errorf("%s: mass %v, error %v; want ½", name, p, err)
		}
	}
	chain, _ := ising.New(3, []ising.Edge{{I: 0, J: 1, Coupling: 0.5}, {I: 1, J: 2, Coupling: -0.25}}, []float64{0.2, 0, -0.1})
	var num, den float64
	for idx := range 8 {
		z := []int{idx >> 2 & 1, idx >> 1 & 1, idx & 1}
		p := math.Exp(chain.LogProb(z))
		den += p
		if z[0]+z[1]+z[2] >= 2 {
			num += p
		}
	}
	if p, err := ModeMass(ctx, chain, memlimit.Budget{}); err != nil || math.Abs(p-num/den) > 1e-14 {
		t.Errorf("3-spin chain: mass %v, error %v; want %v", p, err, num/den)
	}
}

// The 10×10 transfer against N = 20000 exact draws: within 5 standard
// errors sqrt(Var/N) of the indicator (tail 5.7e-7; fixed seed).
func TestModeMass10x10Sample(t *testing.T) {
	m := randomIsingGrid(t, 10, 10, 0.4, rand.New(rand.NewPCG(83, 84)))
	p, err := ModeMass(context.Background(), m, memlimit.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := NewIsingGrid(m)
	const n = 20000
	buf := make([]int, n*100)
	g.Sample(buf, rand.New(rand.NewPCG(85, 86)))
	var est, sq float64
	for o := 0; o < len(buf); o += 100 {
		mag := 0
		for _, s := range buf[o : o+100] {
			mag += 2*s - 1
		}
		y := modeWeight(float64(mag))
		est += y
		sq += y * y
	}
	est /= n
	se := math.Sqrt((sq/n - est*est) / n)
	if math.Abs(est-p) > 5*se {
		t.Errorf("10×10: exact mass %.5f, sample %.5f ± %.5f", p, est, se)
	}
	t.Logf("10×10: exact mass %.5f, sample %.5f ± %.5f", p, est, se)
}

func TestModeMassRefusals(t *testing.T) {
	ctx := context.Background()
	c, _ := categorical.New([]categorical.Variable{{States: []float64{0, 1}, Probs: []float64{0.5, 0.5}}})
	if _, err := ModeMass(ctx, c, memlimit.Budget{}); err == nil || !strings.Contains(err.Error(), "−1 and +1") {
		t.Errorf("0/1 variable: error %v", err)
	}
	big, _ := ising.Complete(40, 0.1, nil)
	if _, err := ModeMass(ctx, big, memlimit.Budget{}); err == nil || !strings.Contains(err.Error(), "i.i.d. sample") {
		t.Errorf("complete graph of 40 spins: error %v", err)
	}
}
