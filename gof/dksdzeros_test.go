package gof

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// zeroChain is a chain of four 3-state variables with pairwise tables;
// with zero set, the first pair's table is zero at (2, 2) only: every state
// is possible for each variable alone, and (z0, z1) = (2, 2) is impossible
// jointly.
func zeroChain(t testing.TB, zero bool) model.Model {
	pair := []float64{0.8, -0.3, 0.1, -0.3, 0.5, 0, 0.1, 0, 0.9}
	first := append([]float64(nil), pair...)
	if zero {
		first[8] = math.Inf(-1)
	}
	fs := []factorgraph.Factor{{Scope: []int{0, 1}, LogTable: first}}
	for i := 1; i < 3; i++ {
		fs = append(fs, factorgraph.Factor{Scope: []int{i, i + 1}, LogTable: pair})
	}
	for i := range 4 {
		fs = append(fs, factorgraph.Factor{Scope: []int{i}, LogTable: []float64{0.3 * float64(i%3), -0.2, 0.1 * float64(i%2)}})
	}
	m, err := factorgraph.New([]int{3, 3, 3, 3}, fs)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A zero only joint breaks DKSD's Stein identity, and DKSD says so: with
// the expectation taken exactly over every possible state, E κ is 0 on the
// chain without the zero (1e-16 of E|κ|; the test allows 1e-3) and 2.6% of
// E|κ| with it (the bias the bootstrap cannot see: on a 5-variable chain
// of this kind, 62 of 300 exact data sets of n = 100 were rejected at
// α = 0.05 with the multinomial bootstrap, 13 of 300 without the zero, and
// the simulated null rejected 9 of 300); and on exact samples DKSD's
// result has LevelChecked false and a warning naming the variable, where
// the chain without the zero passes.
func TestDKSDJointZeroWarning(t *testing.T) {
	for _, zero := range []bool{false, true} {
		m := zeroChain(t, zero)
		all, p := enumerated(t, m)
		h, err := dksdMatrix(m, all)
		if err != nil {
			t.Fatal(err)
		}
		var tot, totAbs float64
		for i := range all.N {
			for j := range all.N {
				tot += p[i] * p[j] * h[i*all.N+j]
				totAbs += p[i] * p[j] * math.Abs(h[i*all.N+j])
			}
		}
		if biased := math.Abs(tot) > 1e-3*totAbs; biased != zero {
			t.Fatalf("zero %v: E κ = %.3g of E|κ| = %.3g", zero, tot, totAbs)
		}
		tr, err := exact.For(m)
		if err != nil {
			t.Fatal(err)
		}
		s := sampler.NewSamples(100, 4)
		tr.Sample(s.Z, rng.NewKey(3).Rand())
		res, err := DKSD(context.Background(), m, s, Options{B: 100, Key: rng.NewKey(1)})
		if err != nil {
			t.Fatal(err)
		}
		flagged := !res.LevelChecked && strings.Contains(res.Warning, "each variable alone allows")
		if flagged != zero {
			t.Fatalf("zero %v: level_checked %v, warning %q", zero, res.LevelChecked, res.Warning)
		}
		if zero && !strings.Contains(res.Warning, "variable z0") && !strings.Contains(res.Warning, "variable z1") {
			t.Fatalf("the warning does not name z0 or z1: %q", res.Warning)
		}
		t.Logf("zero %v: E κ = %.3g of E|κ| = %.3g; warning %q", zero, tot, totAbs, res.Warning)
	}
}

// The MMD tests check their samples as the Stein tests do: a short Z, a
// state out of range (MMDForModel) or a negative index are errors, where
// MMD read past its samples' rows and MMDForModel panicked.
func TestMMDBadSamples(t *testing.T) {
	m := zeroChain(t, false)
	short := &sampler.Samples{N: 20, D: 4, Z: make([]int, 40)}
	good := sampler.NewSamples(20, 4)
	bad := sampler.NewSamples(20, 4)
	bad.Z[5] = 3
	neg := sampler.NewSamples(20, 4)
	neg.Z[5] = -1
	ctx := context.Background()
	for name, err := range map[string]error{
		"MMD, short samples":           second(MMD(ctx, short, good, Options{B: 10})),
		"MMD, short reference":         second(MMD(ctx, good, short, Options{B: 10})),
		"MMD, negative state":          second(MMD(ctx, neg, good, Options{B: 10})),
		"MMDForModel, short samples":   second(MMDForModel(ctx, m, short, 10, Options{B: 10})),
		"MMDForModel, state too large": second(MMDForModel(ctx, m, bad, 10, Options{B: 10})),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// The scan that uses the scores finds what a plain scan of every state of
// every cycle finds, on samples of the chain with its zero (exact draws,
// which hold the zero's neighbours) and on rows of every state.
func TestDKSDJointZerosScan(t *testing.T) {
	m := zeroChain(t, true)
	all, _ := enumerated(t, m)
	tr, err := exact.For(m)
	if err != nil {
		t.Fatal(err)
	}
	drawn := sampler.NewSamples(300, 4)
	tr.Sample(drawn.Z, rng.NewKey(5).Rand())
	for name, s := range map[string]*sampler.Samples{"every state": all, "exact draws": drawn} {
		pts, err := dksdPoints(m, s)
		if err != nil {
			t.Fatal(err)
		}
		jz, err := dksdJointZeros(context.Background(), m, pts)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for i := range s.N {
			row := s.Row(i)
			for l, v := range row {
				z := append([]int(nil), row...)
				for st := range 3 {
					z[l] = st
					if st != v && math.IsInf(m.LogProb(z), -1) {
						want++
						break
					}
				}
			}
		}
		if jz.count != want || want == 0 {
			t.Errorf("%s: the scan counts %d pairs, a plain scan %d", name, jz.count, want)
		}
	}
}

// Under Auto, a DKSD whose bootstrap found such zeros is run again with the
// simulated null where that is affordable, and holds its level there: on
// n = 700 exact draws with B = 200 (the work, 3.9e8, is above what auto
// simulates routinely and below AutoWork), the result is simulated, level
// checked, and says why.
func TestDKSDAutoSimulatesJointZeros(t *testing.T) {
	m := zeroChain(t, true)
	tr, err := exact.For(m)
	if err != nil {
		t.Fatal(err)
	}
	s := sampler.NewSamples(700, 4)
	tr.Sample(s.Z, rng.NewKey(11).Rand())
	if k, _ := Choose("dksd", m, s, Options{B: 200, Bootstrap: Auto}); k != Multinomial {
		t.Fatalf("Choose picks %v; the test needs a sample on which it picks the bootstrap", k)
	}
	res, err := DKSD(context.Background(), m, s, Options{B: 200, Bootstrap: Auto, Key: rng.NewKey(2)})
	if err != nil {
		t.Fatal(err)
	}
	if res.BootstrapKind != "simulation" || !res.LevelChecked || !strings.Contains(res.BootstrapReason, "each variable alone allows") {
		t.Fatalf("kind %s, level_checked %v, reason %q, warning %q", res.BootstrapKind, res.LevelChecked, res.BootstrapReason, res.Warning)
	}
	t.Logf("p-value %.3f; %s", res.PValue, res.BootstrapReason)
}
