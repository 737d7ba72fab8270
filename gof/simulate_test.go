package gof

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// strongField is a target where the bootstraps fail at small n: a 6-cycle
// with couplings 0.4 and fields 2, whose state of all +1 has probability
// about 0.93, so that small samples are mostly that one state repeated.
func strongField(t testing.TB) *ising.Ising {
	var edges []ising.Edge
	for i := range 6 {
		edges = append(edges, ising.Edge{I: i, J: (i + 1) % 6, Coupling: 0.4})
	}
	fields := []float64{2, 2, 2, 2, 2, 2}
	m, err := ising.New(6, edges, fields)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// With the null simulated from exact data sets the Stein tests hold their
// level on a target and a sample size (n = 3) where the bootstraps reject
// a true model several times too often (logged: DKSD about 0.3). Under
// the null the statistic and the simulated ones are exchangeable, so the
// p-value is super-uniform (ties count against the sample): the rate of
// rejection over T data sets is at most α + 3 standard errors,
// sqrt(α(1−α)/T). Each test's level is checked; a simulation that drew
// its data sets from another distribution, or that reused the
// bootstrap, fails it.
func TestSimulatedNullHoldsTheLevel(t *testing.T) {
	const trials, n, b, alpha = 300, 3, 99, 0.05
	m := strongField(t)
	ctx := context.Background()
	se := math.Sqrt(alpha * (1 - alpha) / trials)
	for _, name := range []string{"gfksd", "dksd", "bksd"} {
		for _, kind := range []Kind{Multinomial, Simulation} {
			rej := 0
			for tr := range trials {
				s := exactSamples(t, m, n, uint64(5000+tr))
				o := Options{B: b, Key: rng.NewKey(uint64(tr)), Bootstrap: kind}
				var res *Result
				var err error
				switch name {
				case "gfksd":
					res, err = GFKSD(ctx, m, s, GFKSDSettings{}, o)
				case "dksd":
					res, err = DKSD(ctx, m, s, o)
				default:
					res, err = BKSD(ctx, m, s, o)
				}
				if err != nil {
					t.Fatal(err)
				}
				if kind == Simulation && (res.BootstrapKind != "simulation" || res.Bootstrap != b || !res.LevelChecked) {
					t.Fatalf("%s: result %+v; want the simulated null of %d data sets, level checked", name, res, b)
				}
				if res.Reject {
					rej++
				}
			}
			rate := float64(rej) / trials
			t.Logf("%s, %s: rejection rate under the null at n = %d: %.3f", name, kind, n, rate)
			if kind == Simulation && rate > alpha+3*se {
				t.Errorf("%s with the simulated null: rejection rate %.3f at n = %d; want at most %.3f", name, rate, n, alpha+3*se)
			}
		}
	}
}

// At one seed (the command line's default), GF-KSD's p-values over data
// sets spread as a Monte Carlo test's do: the sample and the simulated
// data sets are lifted to continuous points with the same noise, so they
// are exchangeable given it. On this target, whose samples are mostly one
// state repeated, a fresh noise per data set made the sample's statistic
// depend on the seed more than on the data, and the p-values of all data
// sets at one seed sat together (at seed 1 on an 8-spin model, 0.005 for
// five data sets in six; here 97% of them at most 0.5).
//
// Tolerances: at one seed the B simulated statistics are fixed, so over
// T data sets the fraction of p-values at most 0.5 is F(S*₍₂₀₎), the null
// distribution at the 20th of the B = 39 ordered statistics, which is
// Beta(20, 20) (sd 0.078), plus binomial noise sqrt(0.25/T); the
// rejection rate is 1 − F(S*₍₃₈₎) ~ Beta(2, 38) (mean α, sd 0.034) plus
// sqrt(α(1−α)/T). Both must lie within 3 of their standard deviations.
func TestSimulatedNullHoldsTheLevelAtOneSeed(t *testing.T) {
	const trials, n, b, alpha = 150, 100, 39, 0.05
	m := strongField(t)
	ctx := context.Background()
	o := Options{B: b, Key: rng.NewKey(1), Bootstrap: Simulation}
	rej, half := 0, 0
	for tr := range trials {
		s := exactSamples(t, m, n, uint64(7000+tr))
		res, err := GFKSD(ctx, m, s, GFKSDSettings{}, o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Reject {
			rej++
		}
		if res.PValue <= 0.5 {
			half++
		}
	}
	betaVar := func(a, c float64) float64 { return a * c / ((a + c) * (a + c) * (a + c + 1)) }
	rate, below := float64(rej)/trials, float64(half)/trials
	t.Logf("at seed 1: rejection rate %.3f, fraction of p-values at most 0.5: %.3f", rate, below)
	if lim := alpha + 3*math.Sqrt(betaVar(2, 38)+alpha*(1-alpha)/trials); rate > lim {
		t.Errorf("rejection rate %.3f of true models at one seed; want at most %.3f", rate, lim)
	}
	if tol := 3 * math.Sqrt(betaVar(20, 20)+0.25/trials); math.Abs(below-0.5) > tol {
		t.Errorf("fraction of p-values at most 0.5: %.3f at one seed; want 0.5 ± %.3f", below, tol)
	}
}

// A sample the model cannot produce is still rejected outright, and a
// model without an exact sampler is refused with a clear error.
func TestSimulatedNullNeedsAnExactSampler(t *testing.T) {
	ctx := context.Background()
	m := strongField(t)
	s := exactSamples(t, m, 10, 1)
	o := Options{B: 19, Key: rng.NewKey(1), Bootstrap: Simulation}
	res, err := DKSD(ctx, m, s, o)
	if err != nil || res.Bootstrap != 19 || !res.LevelChecked || res.TailBias != 0 || res.Warning != "" {
		t.Fatalf("DKSD with a simulated null: %+v, %v; want level checked and no tail check", res, err)
	}
	big := flat{d: 40}
	z := sampler.NewSamples(5, big.d)
	_, err = BKSD(ctx, big, z, o)
	if err == nil || !strings.Contains(err.Error(), "a simulated null needs a model that dstein can sample exactly") {
		t.Errorf("a model without an exact sampler: %v", err)
	}
}

// flat is 40 binary variables of equal probability, a model type that
// exact.For does not know and too large to enumerate.
type flat struct{ d int }

func (f flat) Dim() int                { return f.d }
func (f flat) States(int) []float64    { return []float64{0, 1} }
func (f flat) LogProb(z []int) float64 { return 0 }

// A simulated statistic that differs from the sample's in its last bits
// (the same rows summed in another order) is a tie, and counts against
// the sample; a real difference is not.
func TestSimulatedTies(t *testing.T) {
	s := -0.0005811612211507669
	stats := []float64{-0.0005811612211507667, s * (1 + 1e-14), s * (1 - 1e-6), 2 * s}
	tieTo(stats, s)
	if stats[0] != s || stats[1] != s || stats[2] == s || stats[3] == s {
		t.Errorf("after tieTo: %v; want the first two equal to %v and the others not", stats, s)
	}
	// s < 0: s(1 − 1e-6) lies above s, 2s below it. Without the ties the
	// first entry, 2e-19 below s, would count as below too.
	p, _, _ := decide(s, stats, 0.05)
	if want := 4.0 / 5; p != want { // 1 + the two ties + the one above, over B + 1
		t.Errorf("p-value %v; want %v", p, want)
	}
}

// The bootstrap's caveat: small samples, one state repeated, a few states
// repeated beside rare ones; not a few states each seen often, nor many
// distinct rows.
func TestBootstrapCaveat(t *testing.T) {
	rows := func(counts ...int) *sampler.Samples {
		n := 0
		for _, c := range counts {
			n += c
		}
		s := sampler.NewSamples(n, 2)
		r := 0
		for state, c := range counts {
			for range c {
				s.Z[2*r], s.Z[2*r+1] = state%7, state/7
				r++
			}
		}
		return s
	}
	many := make([]int, 60)
	for i := range many {
		many[i] = 1
	}
	for _, c := range []struct {
		s    *sampler.Samples
		want string
	}{
		{rows(10, 10), "n = 20 is small"},
		{rows(40), "one state repeated 40 times"},
		{rows(90, 6, 3, 1), "4 distinct rows in 100, 2 of them seen fewer than 5 times"},
		{rows(100, 100, 100, 100, 100), ""},
		{rows(many...), ""},
	} {
		if got := BootstrapCaveat(c.s); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("rows of %d samples: caveat %q; want one with %q", c.s.N, got, c.want)
		}
	}
}

// Auto simulates where the caveat stands and the work is at most
// AutoWork, or for DKSD and GF-KSD where it is at most AutoRoutineWork,
// keeps the multinomial bootstrap elsewhere (saying why where
// the caveat stands), and falls back to it for a model without an exact
// sampler; the other kinds pass through.
func TestChooseAuto(t *testing.T) {
	many := sampler.NewSamples(100, 8) // 100 distinct rows
	for i := range many.N {
		for l := range many.D {
			many.Z[i*many.D+l] = (i >> l) & 1
		}
	}
	small := sampler.NewSamples(10, 8) // n < SmallN
	wide := sampler.NewSamples(20, 400)
	wideMany := sampler.NewSamples(100, 30) // 100 distinct rows of 30
	for i := range wideMany.N {
		for l := range wideMany.D {
			wideMany.Z[i*wideMany.D+l] = (i >> (l % 7)) & 1
		}
		wideMany.Z[i*wideMany.D+29] = i % 2
	}
	// DKSD and GF-KSD simulate wherever AutoRoutineWork allows, flagged or
	// not: 1000·100·8·108 = 8.6e7 ≤ 2e8; 1000·100·30·130 = 3.9e8 is more.
	for _, c := range []struct {
		test string
		s    *sampler.Samples
		want Kind
		why  string
	}{
		{"dksd", many, Simulation, "dksd's bootstrap can reject true models"},
		{"gfksd", many, Simulation, "from 1000 exact data sets costs little"},
		{"bksd", many, Multinomial, ""},
		{"dksd", wideMany, Multinomial, ""},
	} {
		k, why := Choose(c.test, flat{d: c.s.D}, c.s, Options{Bootstrap: Auto})
		if k != c.want || (c.why == "") != (why == "") || !strings.Contains(why, c.why) {
			t.Errorf("Choose(%s, n = %d, d = %d) = %v, %q; want %v with %q", c.test, c.s.N, c.s.D, k, why, c.want, c.why)
		}
	}
	for _, c := range []struct {
		s    *sampler.Samples
		o    Options
		want Kind
		why  string
	}{
		{many, Options{Bootstrap: Auto}, Multinomial, ""},
		{small, Options{Bootstrap: Auto}, Simulation, "n = 10 is small"},
		{small, Options{Bootstrap: Rademacher}, Rademacher, ""},
		{small, Options{}, Multinomial, ""},
		// 1000·20·400·420 = 3.4e9 > AutoWork; at B = 100, 3.4e8.
		{wide, Options{Bootstrap: Auto}, Multinomial, "would cost 3.4e+09 units of work"},
		{wide, Options{Bootstrap: Auto, B: 100}, Simulation, "from 100 exact data sets"},
	} {
		k, why := Choose("bksd", flat{d: c.s.D}, c.s, c.o)
		if k != c.want || (c.why == "") != (why == "") || !strings.Contains(why, c.why) {
			t.Errorf("Choose(n = %d, d = %d, %v, B = %d) = %v, %q; want %v with %q", c.s.N, c.s.D, c.o.Bootstrap, c.o.B, k, why, c.want, c.why)
		}
	}
	// No exact sampler: the bootstrap, with the reason.
	res, err := BKSD(context.Background(), flat{d: 40}, sampler.NewSamples(5, 40), Options{B: 19, Key: rng.NewKey(1), Bootstrap: Auto})
	if err != nil || res.BootstrapKind != "multinomial" || !strings.Contains(res.BootstrapReason, "cannot sample this model exactly") {
		t.Errorf("auto without an exact sampler: %+v, %v", res, err)
	}
	// An unflagged sample that DKSD would simulate for, without an exact
	// sampler: the bootstrap, with no reason (its level is not in doubt
	// beyond the usual).
	wide40 := sampler.NewSamples(100, 40) // 100 distinct rows of 40
	for i := range wide40.N {
		for l := range 7 {
			wide40.Z[i*wide40.D+l] = (i >> l) & 1
		}
	}
	if k, _ := Choose("dksd", flat{d: 40}, wide40, Options{B: 19, Bootstrap: Auto}); k != Simulation {
		t.Fatalf("Choose on the unflagged 100 × 40 sample: %v; want the simulation it then cannot run", k)
	}
	res, err = DKSD(context.Background(), flat{d: 40}, wide40, Options{B: 19, Key: rng.NewKey(1), Bootstrap: Auto})
	if err != nil || res.BootstrapKind != "multinomial" || res.BootstrapReason != "" {
		t.Errorf("routine auto without an exact sampler: %+v, %v", res, err)
	}
	// With one: the simulated null, and the reason.
	m := strongField(t)
	res, err = DKSD(context.Background(), m, exactSamples(t, m, 10, 3), Options{B: 19, Key: rng.NewKey(1), Bootstrap: Auto})
	if err != nil || res.BootstrapKind != "simulation" || !strings.Contains(res.BootstrapReason, "n = 10 is small") || !res.LevelChecked {
		t.Errorf("auto with an exact sampler: %+v, %v", res, err)
	}
}
