package sw

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/samplertest"
	"github.com/dstein/dstein/transform"
)

func problem(t testing.TB, m model.Model, n int, seed uint64) *sampler.Problem {
	t.Helper()
	tr, err := transform.ForModel(transform.Normal{}, m)
	if err != nil {
		t.Fatal(err)
	}
	return sampler.NewProblem(m, tr, n, sampler.Init{}, rng.NewKey(seed))
}

func newS(t testing.TB, m model.Model, n int, seed uint64) *Sampler {
	t.Helper()
	s, err := New(problem(t, m, n, seed), Settings{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func run(t testing.TB, s sampler.Sampler, iters int) {
	t.Helper()
	for range iters {
		if err := s.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func stat(s sampler.Sampler, name string) float64 {
	v, ok := s.Stats().Value(name)
	if !ok {
		panic("no statistic " + name)
	}
	return v
}

// On the small Ising model (mixed fields), and on two spins so strongly
// coupled (J = 20) that single-site moves never separate them, where only
// the cluster's field σ(2h_C) decides the common spin, 2000 chains match
// exact marginals within CheckMarginals' 5 binomial standard errors.
func TestSmallModels(t *testing.T) {
	pair, err := ising.Complete(2, 20, []float64{0.3, -0.1})
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]model.Model{"ising": samplertest.SmallModels(t)["ising"], "locked pair": pair} {
		s := newS(t, m, 2000, 3)
		run(t, s, 50)
		worst := samplertest.CheckMarginals(t, "sw on "+name, m, &sampler.Samples{N: 2000, D: m.Dim(), Z: s.Current()}, 0)
		t.Logf("%s: worst %.1f SE; mean cluster size %.2f, largest cluster %.2f of the sites", name, worst, stat(s, "mean_cluster_size"), stat(s, "largest_cluster_fraction"))
	}
}

// exactGrid returns P(M > 0) (M = Σ z_i), the means E[z_i] and the pair
// moments E[z_i z_j] of an Ising model by visiting its 2^d states,
// normalised with exact.Enumerate's log Z (whose means it also checks).
func exactGrid(t testing.TB, m *ising.Ising) (float64, []float64, [][]float64) {
	t.Helper()
	res, err := exact.Enumerate(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	pos, mean, pair := moments(m.Dim(), 1<<m.Dim(), func(code int, z []int) float64 {
		for i := range z {
			z[i] = code >> i & 1
		}
		return math.Exp(m.LogProb(z) - res.LogZ)
	})
	for i, v := range res.Means {
		if math.Abs(v-mean[i]) > 1e-9 {
			t.Fatalf("E[z%d]: %v by enumeration, %v by exact.Enumerate", i, mean[i], v)
		}
	}
	return pos, mean, pair
}

// moments returns P(M > 0), the means and the pair moments of k weighted
// configurations: state(c, z) fills z with configuration c and returns its
// weight.
func moments(d, k int, state func(c int, z []int) float64) (float64, []float64, [][]float64) {
	pair := make([][]float64, d)
	for i := range pair {
		pair[i] = make([]float64, d)
	}
	mean := make([]float64, d)
	z := make([]int, d)
	pos := 0.0
	for c := range k {
		w := state(c, z)
		mag := 0
		for i, v := range z {
			mag += 2*v - 1
			mean[i] += w * model.Spin(v)
		}
		if mag > 0 {
			pos += w
		}
		for i := range d {
			for j := i + 1; j < d; j++ {
				pair[i][j] += w * model.Spin(z[i]) * model.Spin(z[j])
			}
		}
	}
	return pos, mean, pair
}

// The 4×4 grid at coupling 0.8 has two modes that single-site Gibbs rarely
// crosses (it is about 15 SE off after 150 sweeps from the N(0, 1) start;
// see package pt's test). Over 2000 chains, with uniform fields 0.05 and
// with random fields in [−0.3, 0.3], P(M > 0) must lie within 4 binomial
// standard errors sqrt(p(1−p)/n) of the exact value, and every mean and
// pair moment within 5 standard errors sqrt((1 − E²)/n) (136 moments; a
// false alarm of one of them has probability about 10^−4).
func TestTwoModeGrid(t *testing.T) {
	uniform := make([]float64, 16)
	random := make([]float64, 16)
	r := rng.NewKey(4).For(rng.Model).Rand()
	for i := range uniform {
		uniform[i] = 0.05
		random[i] = 0.6*r.Float64() - 0.3
	}
	for name, fields := range map[string][]float64{"fields 0.05": uniform, "random fields": random} {
		m, err := ising.Grid(4, 4, false, 0.8, fields)
		if err != nil {
			t.Fatal(err)
		}
		const n, iters = 2000, 100
		wantPos, wantMean, wantPair := exactGrid(t, m)
		s := newS(t, m, n, 11)
		run(t, s, iters)
		z := s.Current()
		pos, mean, pair := moments(16, n, func(c int, row []int) float64 {
			copy(row, z[c*16:(c+1)*16])
			return 1.0 / n
		})
		se := math.Sqrt(wantPos * (1 - wantPos) / n)
		if math.Abs(pos-wantPos) > 4*se {
			t.Errorf("%s: P(M > 0) = %.4f; exact %.4f (SE %.4f)", name, pos, wantPos, se)
		}
		worst := 0.0
		check := func(what string, got, want float64) {
			se := math.Sqrt((1 - want*want) / n)
			worst = max(worst, math.Abs(got-want)/se)
			if math.Abs(got-want) > 5*se {
				t.Errorf("%s: %s = %.4f; exact %.4f (SE %.4f)", name, what, got, want, se)
			}
		}
		for i := range 16 {
			check(fmt.Sprintf("E[z%d]", i), mean[i], wantMean[i])
			for j := i + 1; j < 16; j++ {
				check(fmt.Sprintf("E[z%d z%d]", i, j), pair[i][j], wantPair[i][j])
			}
		}
		t.Logf("sw, %s: P(M > 0) = %.4f, exact %.4f (SE %.4f); moments worst %.1f SE; mean cluster size %.2f, largest cluster %.2f of the sites",
			name, pos, wantPos, se, worst, stat(s, "mean_cluster_size"), stat(s, "largest_cluster_fraction"))
	}
}

func TestRefusesOtherModels(t *testing.T) {
	anti, err := ising.New(3, []ising.Edge{{I: 0, J: 1, Coupling: -0.3}, {I: 1, J: 2, Coupling: 0.2}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for m, want := range map[model.Model]string{
		samplertest.SmallModels(t)["rbm"]: "sw needs a ferromagnetic Ising or Potts model (all couplings ≥ 0); this model, an RBM, is neither",
		anti:                              "sw needs a ferromagnetic Ising or Potts model (all couplings ≥ 0); variable pair (0,1) has coupling -0.3",
	} {
		_, err := New(problem(t, m, 2, 1), Settings{})
		if err == nil || err.Error() != want {
			t.Errorf("error %v; want %q", err, want)
		}
	}
	if _, err := New(problem(t, anti, 0, 1), Settings{}); err == nil || !strings.HasPrefix(err.Error(), "sw: ") {
		t.Errorf("n = 0: %v", err)
	}
}

// Without couplings every cluster is one site; evaluations count one per
// site and update; the statistics keep their names.
func TestStats(t *testing.T) {
	free, _ := ising.Grid(3, 3, false, 0, nil)
	s := newS(t, free, 10, 1)
	names := func() []string {
		var n []string
		for _, v := range s.Stats().Values {
			n = append(n, v.Name)
		}
		return n
	}
	before := names()
	run(t, s, 4)
	if !slices.Equal(before, names()) || !slices.Equal(before, []string{"mean_cluster_size", "largest_cluster_fraction"}) {
		t.Errorf("statistics %v, then %v", before, names())
	}
	if stat(s, "mean_cluster_size") != 1 || math.Abs(stat(s, "largest_cluster_fraction")-1.0/9) > 1e-15 {
		t.Errorf("free spins: mean cluster size %v, largest %v", stat(s, "mean_cluster_size"), stat(s, "largest_cluster_fraction"))
	}
	if got := s.Stats().Evaluations; got != 4*10*9 {
		t.Errorf("%d evaluations, want 360", got)
	}
	// Infinitely strong couplings after aligned spins: one cluster.
	hard, _ := ising.Grid(3, 3, false, 40, nil)
	p := problem(t, hard, 5, 1)
	clear(p.Z)
	s, err := New(p, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	run(t, s, 1)
	if stat(s, "largest_cluster_fraction") != 1 || stat(s, "mean_cluster_size") != 9 {
		t.Errorf("aligned, strongly coupled spins: largest cluster %v", stat(s, "largest_cluster_fraction"))
	}
}

func TestSameBitsAtAnyGOMAXPROCS(t *testing.T) {
	g, _ := ising.Grid(5, 5, true, 0.4, nil)
	var runs [3][]int
	for k, procs := range []int{1, 2, 16} {
		old := runtime.GOMAXPROCS(procs)
		s := newS(t, g, 60, 8)
		run(t, s, 10)
		runtime.GOMAXPROCS(old)
		runs[k] = slices.Clone(s.Current())
	}
	if !slices.Equal(runs[0], runs[1]) || !slices.Equal(runs[0], runs[2]) {
		t.Error("results differ between GOMAXPROCS 1, 2 and 16")
	}
}

// On a ferromagnetic 3-state Potts model (a 2×3 torus, J = 1.2, fields of
// several signs per site and state) and on a 4-state one without fields,
// 3000 chains after 60 updates match the enumerated marginals P(z_i = s)
// within CheckMarginals' 5 binomial standard errors. A kernel that drew a
// cluster's state uniformly regardless of its fields, or bonded with the
// Ising probability 1 − e^{−2J}, fails on the first.
func TestPottsModels(t *testing.T) {
	fields := []float64{
		0.4, 0, -0.3, 0, 0.2, 0, -0.5, 0.1, 0.3, 0, 0, 0.6,
		0.2, -0.2, 0, 0.5, 0, -0.1,
	}
	withFields, err := potts.Grid(2, 3, true, 3, 1.2, fields)
	if err != nil {
		t.Fatal(err)
	}
	four, err := potts.Grid(2, 3, false, 4, 0.8, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]*potts.Potts{"fields": withFields, "four states": four} {
		s := newS(t, m, 3000, 5)
		run(t, s, 60)
		worst := samplertest.CheckMarginals(t, "sw on potts "+name, m, &sampler.Samples{N: 3000, D: m.Dim(), Z: s.Current()}, 0)
		t.Logf("%s: worst %.1f SE; mean cluster size %.2f", name, worst, stat(s, "mean_cluster_size"))
	}
	anti, err := potts.New(2, 3, []potts.Edge{{I: 0, J: 1, Coupling: -1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(problem(t, anti, 2, 1), Settings{}); err == nil || !strings.Contains(err.Error(), "coupling -1") {
		t.Errorf("an antiferromagnetic Potts model: %v", err)
	}
}
