package diag

import (
	"math"
	"testing"

	"github.com/dstein/dstein/rng"
)

// One Workspace used for quantities of changing shapes, in either order,
// gives the same bits as a fresh one for each (a buffer that kept stale
// data from a call of another shape would show here).
func TestWorkspaceReuse(t *testing.T) {
	r := rng.NewKey(21).For(rng.Test).Rand()
	var sets [][][]float64
	for _, shape := range [][2]int{{4, 200}, {1, 301}, {3, 101}, {2, 9}, {4, 200}, {5, 64}, {1, 7}} {
		sets = append(sets, ar1(r, shape[0], shape[1], 0.8))
	}
	sets = append(sets, readChains(t, "bernoulli"), readChains(t, "stuck"), readChains(t, "slow"))
	fresh := make([]Summary, len(sets))
	for i, chains := range sets {
		var w Workspace
		s, err := w.Summarize(chains)
		if err != nil {
			t.Fatal(err)
		}
		fresh[i] = s
	}
	var w Workspace
	for pass := range 2 {
		for j := range sets {
			i := j
			if pass == 1 {
				i = len(sets) - 1 - j
			}
			s, _ := w.Summarize(sets[i])
			if s != fresh[i] {
				t.Errorf("set %d, pass %d: reused %+v, fresh %+v", i, pass, s, fresh[i])
			}
			for name, f := range map[string]func([][]float64) (float64, error){
				"Rhat": w.Rhat, "BulkESS": w.BulkESS, "TailESS": w.TailESS, "ESSMean": w.ESSMean, "MCSEMean": w.MCSEMean,
			} {
				v, _ := f(sets[i])
				want := map[string]float64{"Rhat": fresh[i].Rhat, "BulkESS": fresh[i].BulkESS, "TailESS": fresh[i].TailESS,
					"ESSMean": fresh[i].ESSMean, "MCSEMean": fresh[i].MCSE}[name]
				if v != want {
					t.Errorf("set %d: %s %v, Summarize %v", i, name, v, want)
				}
			}
		}
	}
}

// Once warm, a Workspace summarises without allocating, and so does the
// package-level Summarize (pooled workspaces).
func TestNoAllocations(t *testing.T) {
	chains := ar1(rng.NewKey(22).For(rng.Test).Rand(), 4, 1000, 0.95)
	var w Workspace
	if _, err := w.Summarize(chains); err != nil {
		t.Fatal(err)
	}
	if !w.byFFT {
		t.Fatal("φ = 0.95 should take the FFT path")
	}
	if n := testing.AllocsPerRun(20, func() { _, _ = w.Summarize(chains) }); n != 0 {
		t.Errorf("Workspace.Summarize: %v allocations per call", n)
	}
	if raceOn {
		return // the pool drops workspaces at random under the race detector
	}
	if n := testing.AllocsPerRun(20, func() { _, _ = Summarize(chains) }); n > 0 {
		t.Errorf("Summarize: %v allocations per call", n)
	}
}

// The autocovariances by FFT equal the plain sums at every lag, for odd
// and even half lengths and with a constant chain among them; the error
// bound is the FFT's rounding, ~1e-15 of the lag-0 sum for these sizes.
func TestTransformMatchesSums(t *testing.T) {
	r := rng.NewKey(23).For(rng.Test).Rand()
	for _, n := range []int{4, 9, 64, 301, 1000} {
		chains := ar1(r, 3, n, 0.7)
		for i := range chains[1] {
			chains[1][i] = 0.25
		}
		var w Workspace
		if err := w.load(chains); err != nil {
			t.Fatal(err)
		}
		w.ess(w.split) // centres the split chains into w.cent
		w.transform()
		h := w.h
		sum0 := 0.0
		for c := range 2 * w.m {
			d := w.cent[c*h : (c+1)*h]
			sum0 += dot(d, d)
		}
		for lag := range h {
			direct := 0.0
			for c := range 2 * w.m {
				d := w.cent[c*h : (c+1)*h]
				direct += dot(d[:h-lag], d[lag:])
			}
			byFFT := w.acov[lag] / float64(len(w.acov))
			if math.Abs(byFFT-direct) > 1e-12*sum0 {
				t.Fatalf("n = %d, lag %d: FFT %v, sum %v", n, lag, byFFT, direct)
			}
		}
	}
}

// The golden case "slow" (φ = 0.97) takes the FFT path, so the golden
// test checks it against the reference too.
func TestGoldenSlowUsesFFT(t *testing.T) {
	var w Workspace
	if _, err := w.ESSMean(readChains(t, "slow")); err != nil {
		t.Fatal(err)
	}
	if !w.byFFT {
		t.Error("the slow case stayed within the direct lags")
	}
}

func TestFFTSize(t *testing.T) {
	for in, want := range map[int]int{1: 1, 7: 8, 11: 12, 999: 1000, 1001: 1024, 9999: 10000, 19999: 20000} {
		if got := fftSize(in); got != want {
			t.Errorf("fftSize(%d) = %d, want %d", in, got, want)
		}
	}
}

// The ESS is the same, up to rounding, whether the autocovariances are
// all plain sums, all from the FFT, or sums first and FFT after (the
// default); the data sets span fast, slow, stuck and antithetic chains so
// that the default takes each route. Rounding differs by ~1e-15 of the
// lag-0 sum per lag, and a τ built from a few hundred lags moves by far
// less than 1e-11 relative.
func TestESSPaths(t *testing.T) {
	r := rng.NewKey(24).For(rng.Test).Rand()
	// mixed: half the variance iid, half AR(1) with φ = 0.99, so ρ₁ ≈ 0.5
	// but the sequence runs past directLags (the mixed route).
	mixed := ar1(r, 4, 2000, 0.99)
	for c, x := range ar1(r, 4, 2000, 0) {
		for i, v := range x {
			mixed[c][i] += v
		}
	}
	sets := [][][]float64{ar1(r, 4, 1000, 0.5), mixed, ar1(r, 4, 1000, 0.97), ar1(r, 2, 3001, -0.6),
		readChains(t, "stuck"), readChains(t, "slow"), readChains(t, "heavy")}
	var w Workspace
	if _, err := w.ESSMean(mixed); err != nil || !w.byFFT {
		t.Fatalf("the mixed set did not reach the FFT (%v)", err)
	}
	if rho1 := w.acovAt(1) / w.acovAt(0); rho1 > slowMixing {
		t.Fatalf("the mixed set went to the FFT at once (ρ₁ ≈ %.2f)", rho1)
	}
	defer func(d int, s float64) { directLags, slowMixing = d, s }(directLags, slowMixing)
	type res struct{ mean, bulk, tail float64 }
	run := func(d int, s float64) []res {
		directLags, slowMixing = d, s
		var out []res
		for _, chains := range sets {
			v, err := Summarize(chains)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, res{v.ESSMean, v.BulkESS, v.TailESS})
		}
		return out
	}
	def := run(directLags, slowMixing)
	sums := run(math.MaxInt, math.Inf(1))
	fft := run(0, math.Inf(1))
	for i := range sets {
		for _, other := range []res{sums[i], fft[i]} {
			for _, p := range [][2]float64{{def[i].mean, other.mean}, {def[i].bulk, other.bulk}, {def[i].tail, other.tail}} {
				if math.Abs(p[0]-p[1]) > 1e-11*p[1] {
					t.Errorf("set %d: %v by default, %v by one route only", i, def[i], other)
				}
			}
		}
	}
}
