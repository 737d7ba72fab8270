package pt

import (
	"math"
	"testing"

	"github.com/dstein/dstein/model/modeltest"
	"github.com/dstein/dstein/model/potts"
)

// Each replica of the cluster kernel on a ferromagnetic 3-state Potts model
// targets p*^β: with a fixed ladder {1, 0.6, 0.2} (no tuning), each level's
// states match the marginals P(z_i = s) and the mean of log p* of p*^β,
// enumerated (3^8 states), on a 2×4 torus with per-site fields strong
// enough that a kernel ignoring β in the cluster weights, or drawing a
// cluster's state uniformly, is caught. 4000 chains after 300 iterations;
// the tolerance is 5 standard errors of a mean of 4000 independent draws
// (binomial for the marginals, the exact variance of log p* for its mean):
// over 75 comparisons the false alarm rate is below 10⁻⁴.
func TestPottsClusterTemperedReplicas(t *testing.T) {
	const q, n = 3, 4000
	fields := []float64{
		0.4, 0, -0.3, 0, 0.2, 0, -0.5, 0.1, 0.3, 0, 0, 0.6,
		0.2, -0.2, 0, 0.5, 0, -0.1, 0, 0, 0, -0.4, 0.3, 0.1,
	}
	m, err := potts.Grid(2, 4, true, q, 0.9, fields)
	if err != nil {
		t.Fatal(err)
	}
	d := m.Dim()
	s := newS(t, m, n, Settings{Ladder: 3, BetaMin: 0.2, Tune: -1, Kernel: Cluster}, 7)
	if s.pcluster == nil {
		t.Fatal("the Potts cluster kernel did not run")
	}
	run(t, s, 300)
	for lvl, beta := range s.Ladder() {
		want := make([]float64, d*q)
		var total, lp1, lp2 float64
		modeltest.ForEachState(m, func(z []int) {
			lp := m.LogProb(z)
			w := math.Exp(beta * lp)
			total += w
			lp1 += w * lp
			lp2 += w * lp * lp
			for i, v := range z {
				want[i*q+v] += w
			}
		})
		lp1, lp2 = lp1/total, lp2/total
		got := make([]float64, d*q)
		var gotLP float64
		for c := range s.chains {
			st := s.chains[c].tr[s.chains[c].perm[lvl]].State()
			for i, v := range st {
				got[i*q+v] += 1.0 / n
			}
			gotLP += m.LogProb(st) / n
		}
		for k := range want {
			w := want[k] / total
			se := math.Sqrt(w * (1 - w) / n)
			if math.Abs(got[k]-w) > 5*se {
				t.Errorf("β = %.2f: P(z%d = %d) = %.4f, exact %.4f (SE %.4f)", beta, k/q, k%q, got[k], w, se)
			}
		}
		se := math.Sqrt((lp2 - lp1*lp1) / n)
		if math.Abs(gotLP-lp1) > 5*se {
			t.Errorf("β = %.2f: mean log p* = %.4f, exact %.4f (SE %.4f)", beta, gotLP, lp1, se)
		}
	}
	t.Logf("swap rates %.2f (min %.2f), largest cluster %.2f of the sites", stat(s, "swap_rate"), stat(s, "min_swap_rate"), stat(s, "largest_cluster_fraction"))
}
