package pt

import (
	"math"
	"strings"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/sampler/samplertest"
)

// Each replica of the cluster kernel targets p*^β: with a fixed ladder
// {1, 0.65, 0.3} (no tuning), each level's spins match the marginals
// P(z_i = +1) and the mean of log p* of p*^β, enumerated, on a 3×4 grid
// with two modes at β = 1 (J = 1, small fields) and on the kit's 3×3 grid
// with fields of both signs. 4000 chains after 300 iterations; the
// tolerance is 5 standard errors of a mean of 4000 independent draws
// (binomial for the marginals, the exact variance of log p* for its mean),
// 5 SE over 39 comparisons per model being a false alarm rate below 10⁻⁴.
// A kernel that ignored β in the cluster fields (drawing clusters from h_C
// instead of β·h_C) fails the hot replicas' marginals on the kit's grid.
func TestClusterKernelTemperedReplicas(t *testing.T) {
	two, err := ising.Grid(3, 4, false, 1, []float64{0.05, -0.02, 0.04, 0.01, 0, 0.03, -0.05, 0.02, 0.01, 0.04, -0.01, 0.02})
	if err != nil {
		t.Fatal(err)
	}
	kit := samplertest.SmallModels(t)["ising"].(*ising.Ising)
	const n = 4000
	for name, m := range map[string]*ising.Ising{"two modes": two, "kit": kit} {
		d := m.Dim()
		s := newS(t, m, n, Settings{Ladder: 3, BetaMin: 0.3, Tune: -1, Kernel: Cluster}, 5)
		if s.cluster == nil {
			t.Fatalf("%s: the cluster kernel did not run", name)
		}
		run(t, s, 300)
		z := make([]int, d)
		for lvl, beta := range s.Ladder() {
			// Enumerate p*^β: marginals, E[log p*], E[(log p*)²].
			want := make([]float64, d)
			var total, lp1, lp2 float64
			for code := range 1 << d {
				for i := range d {
					z[i] = code >> i & 1
				}
				lp := m.LogProb(z)
				w := math.Exp(beta * lp)
				total += w
				lp1 += w * lp
				lp2 += w * lp * lp
				for i := range d {
					want[i] += w * float64(z[i])
				}
			}
			lp1, lp2 = lp1/total, lp2/total
			got := make([]float64, d)
			var gotLP float64
			for c := range s.chains {
				ch := &s.chains[c]
				rep := ch.perm[lvl]
				for i, v := range ch.spins[rep*d : (rep+1)*d] {
					z[i] = int(v)
					got[i] += float64(v) / n
				}
				gotLP += m.LogProb(z) / n
			}
			for i := range d {
				w := want[i] / total
				se := math.Sqrt(w * (1 - w) / n)
				if math.Abs(got[i]-w) > 5*se {
					t.Errorf("%s, β = %.2f: P(z%d = +1) = %.4f, exact %.4f (SE %.4f)", name, beta, i, got[i], w, se)
				}
			}
			se := math.Sqrt((lp2 - lp1*lp1) / n)
			if math.Abs(gotLP-lp1) > 5*se {
				t.Errorf("%s, β = %.2f: mean log p* = %.4f, exact %.4f (SE %.4f)", name, beta, gotLP, lp1, se)
			}
		}
		t.Logf("%s: swap rates %.2f (min %.2f), largest cluster %.2f of the sites", name, stat(s, "swap_rate"), stat(s, "min_swap_rate"), stat(s, "largest_cluster_fraction"))
	}
}

// Best chooses block Gibbs for RBMs, Swendsen–Wang for ferromagnetic Ising
// models and single sites otherwise; an explicit kernel that does not
// apply is refused with the reason.
func TestKernelChoice(t *testing.T) {
	kit := samplertest.SmallModels(t)
	glass, err := ising.New(3, []ising.Edge{{I: 0, J: 1, Coupling: 0.5}, {I: 1, J: 2, Coupling: -0.7}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	strong, err := rbm.Random(6, 3, 1.5, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	ferroPotts, err := potts.Grid(2, 3, true, 3, 0.5, nil)
	if err != nil {
		t.Fatal(err)
	}
	antiPotts, err := potts.New(3, 3, []potts.Edge{{I: 0, J: 1, Coupling: 0.5}, {I: 1, J: 2, Coupling: -0.4}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		m    model.Model
		best Kernel
	}{{"ising", kit["ising"], Cluster}, {"rbm", strong, Block}, {"glass", glass, Site}, {"categorical", kit["categorical"], Site}, {"ising (generic)", plain{kit["ising"]}, Site},
		{"potts", ferroPotts, Cluster}, {"antiferromagnetic potts", antiPotts, Site}} {
		if got, err := Best.choose(c.m); got != c.best || err != nil {
			t.Errorf("%s: best is %v (%v); want %v", c.name, got, err, c.best)
		}
		s := newS(t, c.m, 2, Settings{Kernel: Best, Tune: -1}, 1)
		if ran := map[bool]Kernel{true: Cluster}[s.cluster != nil || s.pcluster != nil] + map[bool]Kernel{true: Block}[s.rbm != nil]; ran != c.best {
			t.Errorf("%s: best ran %v; want %v", c.name, ran, c.best)
		}
	}
	for _, c := range []struct {
		m    model.Model
		kern Kernel
		want string
	}{
		{glass, Cluster, "variable pair (1,2) has coupling -0.7"},
		{kit["categorical"], Cluster, "neither a pairwise ±1 model nor a Potts model"},
		{antiPotts, Cluster, "variable pair (1,2) has coupling -0.4"},
		{kit["ising"], Block, "kernel block needs an RBM"},
	} {
		_, err := New(problem(t, c.m, 2, 1), Settings{Kernel: c.kern})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("kernel %v on %T: error %v; want %q", c.kern, c.m, err, c.want)
		}
	}
	var k Kernel
	for _, name := range []string{"site", "block", "cluster", "best"} {
		if err := k.UnmarshalText([]byte(name)); err != nil || k.String() != name {
			t.Errorf("%q parsed as %v (%v)", name, k, err)
		}
	}
	if err := k.UnmarshalText([]byte("wolff")); err == nil || !strings.Contains(err.Error(), "want site, block, cluster or best") {
		t.Errorf("an unknown kernel: %v", err)
	}
}
