package exact

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
)

// VE sums the same terms as enumeration in another order, in log space; on
// these models the two agree to ~1e-13, so 1e-9 catches any wrong factor.
const veTol = 1e-9

// bruteForce enumerates every joint state of a factor graph (odometer
// order, last variable fastest) and returns log Z (−Inf when Z = 0), the
// marginals, the means (state values from values, nil for 0…K−1) and the
// probability of each joint state.
func bruteForce(card []int, factors []Factor, values [][]float64) (logZ float64, marg [][]float64, means, joint []float64) {
	d := len(card)
	total := 1
	for _, k := range card {
		total *= k
	}
	lp := make([]float64, total)
	z := make([]int, d)
	for idx := range total {
		for _, f := range factors {
			e := 0
			for _, u := range f.Scope {
				e = e*card[u] + z[u]
			}
			lp[idx] += f.LogTable[e]
		}
		for i := d - 1; i >= 0; i-- {
			z[i]++
			if z[i] < card[i] {
				break
			}
			z[i] = 0
		}
	}
	// Log-sum-exp with the largest term factored out, written here rather
	// than taken from ve.go so that the check is independent.
	logZ = math.Inf(-1)
	for _, x := range lp {
		logZ = max(logZ, x)
	}
	if !math.IsInf(logZ, -1) {
		var sum float64
		for _, x := range lp {
			sum += math.Exp(x - logZ)
		}
		logZ += math.Log(sum)
	}
	marg = make([][]float64, d)
	for i := range marg {
		marg[i] = make([]float64, card[i])
	}
	means = make([]float64, d)
	joint = make([]float64, total)
	if math.IsInf(logZ, -1) {
		return logZ, marg, means, joint
	}
	clear(z)
	for idx := range total {
		p := math.Exp(lp[idx] - logZ)
		joint[idx] = p
		for i, s := range z {
			marg[i][s] += p
		}
		for i := d - 1; i >= 0; i-- {
			z[i]++
			if z[i] < card[i] {
				break
			}
			z[i] = 0
		}
	}
	for i := range marg {
		for s, p := range marg[i] {
			v := float64(s)
			if values != nil && values[i] != nil {
				v = values[i][s]
			}
			means[i] += p * v
		}
	}
	return logZ, marg, means, joint
}

// checkVE compares a VE result with reference answers and checks that no
// answer is NaN.
func checkVE(t *testing.T, name string, got *Result, logZ float64, marg [][]float64, means []float64, tol float64) {
	t.Helper()
	if math.IsNaN(got.LogZ) || math.Abs(got.LogZ-logZ) > tol {
		t.Errorf("%s: log Z = %.15g, want %.15g", name, got.LogZ, logZ)
	}
	for i := range marg {
		if len(got.Marginals[i]) != len(marg[i]) {
			t.Fatalf("%s: variable %d has %d marginal entries, want %d", name, i, len(got.Marginals[i]), len(marg[i]))
		}
		for s := range marg[i] {
			if g := got.Marginals[i][s]; math.IsNaN(g) || math.Abs(g-marg[i][s]) > tol {
				t.Errorf("%s: P(z_%d = %d) = %.15g, want %.15g", name, i, s, g, marg[i][s])
			}
		}
		if g := got.Means[i]; math.IsNaN(g) || math.Abs(g-means[i]) > tol {
			t.Errorf("%s: E[z_%d] = %.15g, want %.15g", name, i, g, means[i])
		}
	}
}

// randomFactorGraph draws n variables with 1–4 states and up to 2n+1 factors
// of arity 1–3 (now and then a constant), scopes in random order, normal
// log-values of standard deviation scale with about one entry in seven a
// zero (−Inf).
func randomFactorGraph(n int, scale float64, r *rand.Rand) ([]int, []Factor) {
	card := make([]int, n)
	for i := range card {
		card[i] = 1 + r.IntN(4)
	}
	factors := make([]Factor, r.IntN(2*n+2))
	for fi := range factors {
		arity := 1 + r.IntN(min(3, n))
		if r.IntN(20) == 0 {
			arity = 0
		}
		scope := r.Perm(n)[:arity]
		size := 1
		for _, u := range scope {
			size *= card[u]
		}
		tab := make([]float64, size)
		for e := range tab {
			if r.IntN(7) == 0 {
				tab[e] = math.Inf(-1)
			} else {
				tab[e] = scale * r.NormFloat64()
			}
		}
		factors[fi] = Factor{Scope: scope, LogTable: tab}
	}
	return card, factors
}

func TestVERandomFactorGraphs(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var ok, zero int
	for trial := range 400 {
		n := 1 + r.IntN(7)
		// One model in eight has log-values in the hundreds, which only
		// log-space arithmetic survives.
		scale := 1.5
		if trial%8 == 7 {
			scale = 300
		}
		card, factors := randomFactorGraph(n, scale, r)
		var values [][]float64
		if trial%2 == 1 {
			values = make([][]float64, n)
			for i := range values {
				if r.IntN(3) > 0 {
					values[i] = make([]float64, card[i])
					for s := range values[i] {
						values[i][s] = 3 * r.NormFloat64()
					}
				}
			}
		}
		name := fmt.Sprintf("trial %d (card %v, %d factors)", trial, card, len(factors))
		logZ, marg, means, _ := bruteForce(card, factors, values)
		ve, err := NewVE(card, factors, values, 0)
		if math.IsInf(logZ, -1) {
			zero++
			if err == nil || !strings.Contains(err.Error(), "probability zero") {
				t.Errorf("%s: Z = 0 but NewVE gave error %v", name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ok++
		checkVE(t, name, ve.Result(), logZ, marg, means, veTol)
		if w, order := Width(card, factors); w != ve.Width() || !slices.Equal(order, ve.Order()) {
			t.Errorf("%s: Width gives %d %v, NewVE used %d %v", name, w, order, ve.Width(), ve.Order())
		}
	}
	t.Logf("%d models checked, %d with Z = 0 refused", ok, zero)
	if ok < 300 || zero == 0 {
		t.Errorf("want most models valid and some with Z = 0, got %d and %d", ok, zero)
	}
}

// Structural zeros: a state that no configuration allows gets marginal 0
// exactly, not NaN, and variables outside every factor are uniform.
func TestVEZerosAndFreeVariables(t *testing.T) {
	inf := math.Inf(-1)
	card := []int{3, 2, 4, 1}
	factors := []Factor{
		{Scope: []int{1, 0}, LogTable: []float64{0, inf, 0.5, inf, inf, -1}}, // z0 = 1 impossible
		{Scope: []int{0}, LogTable: []float64{0.2, 0.7, inf}},                // z0 = 2 impossible
	}
	ve, err := NewVE(card, factors, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	logZ, marg, means, _ := bruteForce(card, factors, nil)
	checkVE(t, "zeros", ve.Result(), logZ, marg, means, veTol)
	res := ve.Result()
	if res.Marginals[0][1] != 0 || res.Marginals[0][2] != 0 {
		t.Errorf("impossible states of z0 have marginals %v, want exact zeros", res.Marginals[0])
	}
	for s, p := range res.Marginals[2] {
		if math.Abs(p-0.25) > 1e-15 {
			t.Errorf("free variable: P(z_2 = %d) = %v, want 1/4", s, p)
		}
	}
	if res.Marginals[3][0] != 1 {
		t.Errorf("one-state variable: marginal %v, want [1]", res.Marginals[3])
	}
	buf := make([]int, 4*1000)
	ve.Sample(buf, rand.New(rand.NewPCG(1, 1)))
	for o := 0; o < len(buf); o += 4 {
		if buf[o] != 0 || buf[o+3] != 0 {
			t.Fatalf("sample %v has an impossible state", buf[o:o+4])
		}
	}
}

func TestVEZeroModelRefused(t *testing.T) {
	inf := math.Inf(-1)
	for name, f := range map[string][]Factor{
		"all-zero table":      {{Scope: []int{0, 1}, LogTable: []float64{inf, inf, inf, inf}}},
		"conflicting factors": {{Scope: []int{0}, LogTable: []float64{0, inf}}, {Scope: []int{0}, LogTable: []float64{inf, 0}}},
		"zero constant":       {{Scope: nil, LogTable: []float64{inf}}, {Scope: []int{1}, LogTable: []float64{1, 2}}},
		"zero in a component": {{Scope: []int{1}, LogTable: []float64{1, 2}}, {Scope: []int{0, 2}, LogTable: []float64{inf, inf, inf, inf}}},
	} {
		_, err := NewVE([]int{2, 2, 2}, f, nil, 0)
		if err == nil || !strings.Contains(err.Error(), "probability zero") {
			t.Errorf("%s: got error %v, want one about probability zero", name, err)
		}
	}
}

func TestVEBadInput(t *testing.T) {
	two := []float64{0, 0}
	for _, c := range []struct {
		name    string
		card    []int
		factors []Factor
		values  [][]float64
		want    string
	}{
		{"no variables", nil, nil, nil, "no variables"},
		{"zero states", []int{2, 0}, nil, nil, "variable 1 has 0 states"},
		{"scope out of range", []int{2, 2}, []Factor{{Scope: []int{0, 2}, LogTable: []float64{0, 0, 0, 0}}}, nil, "outside [0, 2)"},
		{"negative scope", []int{2, 2}, []Factor{{Scope: []int{-1}, LogTable: two}}, nil, "outside [0, 2)"},
		{"repeated scope", []int{2, 2}, []Factor{{Scope: []int{1, 1}, LogTable: []float64{0, 0, 0, 0}}}, nil, "twice"},
		{"short table", []int{2, 3}, []Factor{{Scope: []int{0, 1}, LogTable: []float64{0, 0, 0, 0}}}, nil, "needs 6"},
		{"NaN", []int{2}, []Factor{{Scope: []int{0}, LogTable: []float64{0, math.NaN()}}}, nil, "NaN"},
		{"+Inf", []int{2}, []Factor{{Scope: []int{0}, LogTable: []float64{math.Inf(1), 0}}}, nil, "+Inf"},
		{"values count", []int{2, 2}, nil, [][]float64{two}, "state values for 1"},
		{"values length", []int{2, 3}, nil, [][]float64{two, two}, "variable 1 has 3 states but 2"},
		{"values NaN", []int{2}, nil, [][]float64{{0, math.NaN()}}, "finite"},
	} {
		_, err := NewVE(c.card, c.factors, c.values, 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// randomIsingGrid draws an open rows×cols grid with every coupling and field
// uniform in [−scale, scale].
func randomIsingGrid(t testing.TB, rows, cols int, scale float64, r *rand.Rand) *ising.Ising {
	edges, fields := randomGridModel(rows, cols, scale, r)
	m, err := ising.NewGrid(rows, cols, false, edges, fields)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestVEIsingGrid4x4BruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, scale := range []float64{0.3, 1, 3} {
		m := randomIsingGrid(t, 4, 4, scale, r)
		card, factors, values := isingFactorList(m)
		ve, err := NewVE(card, factors, values, 0)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("4×4 scale %g", scale)
		logZ, marg, means, _ := bruteForce(card, factors, values)
		checkVE(t, name, ve.Result(), logZ, marg, means, veTol)
		// The factors say the same as the model.
		want, err := Enumerate(m, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkVE(t, name+" vs Enumerate", ve.Result(), want.LogZ, want.Marginals, want.Means, veTol)
	}
}

func TestVEIsingGrid10x10Transfer(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, scale := range []float64{0.2, 1, 3} {
		m := randomIsingGrid(t, 10, 10, scale, r)
		card, factors, values := isingFactorList(m)
		ve, err := NewVE(card, factors, values, 0)
		if err != nil {
			t.Fatal(err)
		}
		g, err := NewIsingGrid(m)
		if err != nil {
			t.Fatal(err)
		}
		want := g.Result()
		name := fmt.Sprintf("10×10 scale %g", scale)
		checkVE(t, name, ve.Result(), want.LogZ, want.Marginals, want.Means, veTol)
		t.Logf("%s: width %d, log Z %.6f", name, ve.Width(), ve.Result().LogZ)
	}
}

// Joint-state frequencies of VE samples against the exact probabilities on a
// small graph with zeros. With N = 200000 samples (fixed seed, so the test
// is deterministic), each positive-probability state's frequency must lie
// within 5 standard errors sqrt(p(1−p)/N) of p (a two-sided tail of 6e-7 per
// state for a correct sampler), the chi-square statistic over those states
// must stay under df + 6·sqrt(2·df) (beyond its 1e-5 quantile for these
// df), and zero-probability states must never appear.
func TestVESampleFrequencies(t *testing.T) {
	inf := math.Inf(-1)
	card := []int{2, 3, 1, 4}
	factors := []Factor{
		{Scope: []int{0, 1}, LogTable: []float64{0.3, -0.5, inf, 1, 0.2, -1}},
		{Scope: []int{3, 1}, LogTable: []float64{0, 0.5, -0.5, inf, 1, 0, 0.7, -0.2, 0.1, 0.4, inf, -1.5}},
		{Scope: []int{2, 3}, LogTable: []float64{0.1, -0.3, 0.8, 0}},
		{Scope: []int{0}, LogTable: []float64{0.4, -0.4}},
	}
	ve, err := NewVE(card, factors, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, joint := bruteForce(card, factors, nil)
	const N = 200000
	d := len(card)
	buf := make([]int, N*d)
	ve.Sample(buf, rand.New(rand.NewPCG(41, 42)))
	counts := make([]int, len(joint))
	for o := 0; o < len(buf); o += d {
		idx := 0
		for i, s := range buf[o : o+d] {
			idx = idx*card[i] + s
		}
		counts[idx]++
	}
	var chi2 float64
	df := -1
	for idx, p := range joint {
		if p == 0 {
			if counts[idx] != 0 {
				t.Errorf("state %d has probability zero but was drawn %d times", idx, counts[idx])
			}
			continue
		}
		f := float64(counts[idx]) / N
		if se := math.Sqrt(p * (1 - p) / N); math.Abs(f-p) > 5*se {
			t.Errorf("state %d: frequency %.5f, probability %.5f (%.1f standard errors)", idx, f, p, (f-p)/se)
		}
		e := p * N
		chi2 += (float64(counts[idx]) - e) * (float64(counts[idx]) - e) / e
		df++
	}
	if bound := float64(df) + 6*math.Sqrt(2*float64(df)); chi2 > bound {
		t.Errorf("chi-square %.2f with %d degrees of freedom, over %.2f", chi2, df, bound)
	}
	t.Logf("chi-square %.2f, %d degrees of freedom", chi2, df)

	// The same seed gives the same samples.
	again := make([]int, N*d)
	ve.Sample(again, rand.New(rand.NewPCG(41, 42)))
	if !slices.Equal(buf, again) {
		t.Error("the same seed gave different samples")
	}
}

// Sample means on a 10×10 grid within 5 standard errors of the exact means
// (N = 20000, fixed seed).
func TestVESampleGridMeans(t *testing.T) {
	m := randomIsingGrid(t, 10, 10, 0.5, rand.New(rand.NewPCG(51, 52)))
	card, factors, values := isingFactorList(m)
	ve, err := NewVE(card, factors, values, 0)
	if err != nil {
		t.Fatal(err)
	}
	const N = 20000
	d := len(card)
	buf := make([]int, N*d)
	ve.Sample(buf, rand.New(rand.NewPCG(53, 54)))
	sum := make([]float64, d)
	for o := 0; o < len(buf); o += d {
		for i, s := range buf[o : o+d] {
			sum[i] += model.Spin(s)
		}
	}
	for i, mu := range ve.Result().Means {
		se := math.Sqrt((1 - mu*mu) / N)
		if got := sum[i] / N; math.Abs(got-mu) > 5*se {
			t.Errorf("E[z_%d]: sample mean %.4f, exact %.4f (%.1f standard errors)", i, got, mu, (got-mu)/se)
		}
	}
}

func TestVEWidthRefused(t *testing.T) {
	m := randomIsingGrid(t, 6, 6, 1, rand.New(rand.NewPCG(61, 62)))
	card, factors, _ := isingFactorList(m)
	w, order := Width(card, factors)
	if len(order) != 36 {
		t.Fatalf("order %v has %d variables, want 36", order, len(order))
	}
	if w < 7 || w > 8 {
		t.Errorf("6×6 grid: min-fill width %d, want 7 or 8", w)
	}
	_, err := NewVE(card, factors, nil, w-1)
	if want := fmt.Sprintf("elimination width %d exceeds the limit %d", w, w-1); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got error %v, want one containing %q", err, want)
	}
	if _, err := NewVE(card, factors, nil, w); err != nil {
		t.Errorf("width %d at the limit: %v", w, err)
	}
}

// completeGraph returns pairwise zero log-factors over every pair of k
// variables numbered from base.
func completeGraph(base, k, states int) []Factor {
	var fs []Factor
	for i := range k {
		for j := i + 1; j < k; j++ {
			fs = append(fs, Factor{Scope: []int{base + i, base + j}, LogTable: make([]float64, states*states)})
		}
	}
	return fs
}

func TestVETableSizeRefused(t *testing.T) {
	// 13 four-state variables, all coupled: width 13 is within the default
	// limit but the first clique has 4^13 = 2^26 entries.
	card := slices.Repeat([]int{4}, 13)
	_, err := NewVE(card, completeGraph(0, 13, 4), nil, 0)
	if err == nil || !strings.Contains(err.Error(), "over the limit of 33554432 (2^25)") {
		t.Errorf("got error %v, want the table-size limit", err)
	}
	// Three separate complete graphs of 25 binary variables: each clique
	// fits (2^25), together about 3·2^26 entries do not.
	card = slices.Repeat([]int{2}, 75)
	var fs []Factor
	for c := range 3 {
		fs = append(fs, completeGraph(25*c, 25, 2)...)
	}
	_, err = NewVE(card, fs, nil, 30)
	if err == nil || !strings.Contains(err.Error(), "in all, over the limit of 134217728 (2^27)") {
		t.Errorf("got error %v, want the total-size limit", err)
	}
}

func BenchmarkVEGrid10x10(b *testing.B) {
	m := randomIsingGrid(b, 10, 10, 1, rand.New(rand.NewPCG(71, 72)))
	card, factors, values := isingFactorList(m)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewVE(card, factors, values, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVEGrid10x10Sample(b *testing.B) {
	m := randomIsingGrid(b, 10, 10, 1, rand.New(rand.NewPCG(71, 72)))
	card, factors, values := isingFactorList(m)
	ve, err := NewVE(card, factors, values, 0)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(73, 74))
	buf := make([]int, 100)
	for b.Loop() {
		ve.Sample(buf, r)
	}
}
