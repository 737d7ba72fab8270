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
