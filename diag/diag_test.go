package diag

import (
	"errors"
	"math"
	"testing"

	"github.com/dstein/dstein/rng"
)

func TestInvalidInput(t *testing.T) {
	nan := []float64{0, 1, math.NaN(), 3}
	inf := []float64{0, 1, 2, math.Inf(-1)}
	for _, c := range []struct {
		name   string
		chains [][]float64
		want   error
	}{
		{"no chains", nil, ErrNoChains},
		{"ragged", [][]float64{{1, 2, 3, 4}, {1, 2, 3, 4, 5}}, ErrRagged},
		{"three draws", [][]float64{{1, 2, 3}, {4, 5, 6}}, ErrTooShort},
		{"empty chains", [][]float64{{}, {}}, ErrTooShort},
		{"NaN", [][]float64{{1, 2, 3, 4}, nan}, ErrNotFinite},
		{"Inf", [][]float64{inf, {1, 2, 3, 4}}, ErrNotFinite},
	} {
		if _, err := Summarize(c.chains); !errors.Is(err, c.want) {
			t.Errorf("%s: Summarize error %v, want %v", c.name, err, c.want)
		}
		for name, f := range map[string]func([][]float64) (float64, error){
			"Rhat": Rhat, "BulkESS": BulkESS, "TailESS": TailESS, "ESSMean": ESSMean, "MCSEMean": MCSEMean,
		} {
			if _, err := f(c.chains); !errors.Is(err, c.want) {
				t.Errorf("%s: %s error %v, want %v", c.name, name, err, c.want)
			}
		}
	}
}

// finite fails unless every field of s is finite and the sizes positive;
// Rhat may also be +Inf when infOK.
func finite(t *testing.T, name string, s Summary, infOK bool) {
	t.Helper()
	for k, v := range map[string]float64{"Mean": s.Mean, "SD": s.SD, "MCSE": s.MCSE, "ESSMean": s.ESSMean, "BulkESS": s.BulkESS, "TailESS": s.TailESS} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("%s: %s = %v", name, k, v)
		}
	}
	if !(s.ESSMean > 0 && s.BulkESS > 0 && s.TailESS > 0) {
		t.Errorf("%s: sizes %v %v %v", name, s.ESSMean, s.BulkESS, s.TailESS)
	}
	if math.IsNaN(s.Rhat) || (math.IsInf(s.Rhat, 0) && !infOK) {
		t.Errorf("%s: Rhat = %v", name, s.Rhat)
	}
}

// The shortest chains (4 draws, halves of 2) and a single chain give
// finite values.
func TestShortestChains(t *testing.T) {
	for _, chains := range [][][]float64{
		{{0.3, -1.2, 0.8, 2.0}},
		{{0.3, -1.2, 0.8, 2.0}, {1, 1, 0, 1}},
		{{0, 1, 0, 1, 1}, {1, 0, 0, 1, 0}, {0, 0, 0, 1, 1}},
	} {
		s, err := Summarize(chains)
		if err != nil {
			t.Fatal(err)
		}
		finite(t, "short", s, false)
	}
}

// Every draw the same, odd and even lengths, a value of −0 among +0 (they
// are equal): R̂ = 1, every ESS = S, SD = MCSE = 0.
func TestConstant(t *testing.T) {
	for _, c := range []struct {
		chains [][]float64
		S      float64
	}{
		{[][]float64{{2.5, 2.5, 2.5, 2.5, 2.5, 2.5}, {2.5, 2.5, 2.5, 2.5, 2.5, 2.5}}, 12},
		{[][]float64{{7, 7, 7, 7, 7}, {7, 7, 7, 7, 7}, {7, 7, 7, 7, 7}}, 12}, // middle draws dropped
		{[][]float64{{0, math.Copysign(0, -1), 0, 0}}, 4},
	} {
		s, err := Summarize(c.chains)
		if err != nil {
			t.Fatal(err)
		}
		want := Summary{Mean: c.chains[0][0], ESSMean: c.S, BulkESS: c.S, TailESS: c.S, Rhat: 1}
		if s != want {
			t.Errorf("constant %v: %+v, want %+v", c.chains[0][0], s, want)
		}
		if b, f, _ := RhatParts(c.chains); b != 1 || f != 1 {
			t.Errorf("RhatParts = %v, %v, want 1, 1", b, f)
		}
	}
}

// Chains that never move, each at its own value: R̂ = +Inf, the ESS a small
// finite number. With 4 chains of 100 draws (halves of h = 50), ρ_t = 1 at
// every lag, Geyer's sequence runs to its last pair at lag 46, τ = −1 +
// 2·46 + 1 = 92 and ESS = 400/92; the indicators are constant within each
// split chain and get the same.
func TestNonMixing(t *testing.T) {
	chains := make([][]float64, 4)
	for c := range chains {
		chains[c] = make([]float64, 100)
		for i := range chains[c] {
			chains[c][i] = float64(c) * 1.5
		}
	}
	s, err := Summarize(chains)
	if err != nil {
		t.Fatal(err)
	}
	finite(t, "non-mixing", s, true)
	if !math.IsInf(s.Rhat, 1) {
		t.Errorf("Rhat = %v, want +Inf", s.Rhat)
	}
	want := 400.0 / 92
	for k, v := range map[string]float64{"ESSMean": s.ESSMean, "BulkESS": s.BulkESS, "TailESS": s.TailESS} {
		if math.Abs(v-want) > 1e-12*want {
			t.Errorf("%s = %v, want %v", k, v, want)
		}
	}
}

// Two of four binary chains never switch (one stuck at 0, one at 1) while
// the other two mix: R̂ is finite and far above 1.01 and the ESS small.
// In rank-normalised units (two values ±a) the mixing halves have
// variance ≈ a², the stuck ones 0, so W ≈ a²/2; the 8 split means are
// ≈ 0 (4), −a (2), +a (2), variance ≈ 4a²/7, and R̂ ≈ √(1 + 8/7) ≈ 1.46.
// Over 100 simulated data sets it is 1.464 with SD 0.001, so 1.3 is far
// from both 1.01 and the expected value.
func TestTwoStateStuck(t *testing.T) {
	r := rng.NewKey(11).For(rng.Test).Rand()
	chains := make([][]float64, 4)
	for c := range chains {
		chains[c] = make([]float64, 1000)
	}
	for _, c := range []int{0, 1} {
		for i := range chains[c] {
			if r.Float64() < 0.5 {
				chains[c][i] = 1
			}
		}
	}
	for i := range chains[3] {
		chains[3][i] = 1
	}
	s, err := Summarize(chains)
	if err != nil {
		t.Fatal(err)
	}
	finite(t, "stuck", s, false)
	if s.Rhat < 1.3 {
		t.Errorf("Rhat = %v, want about 1.46", s.Rhat)
	}
	if s.BulkESS > 100 || s.ESSMean > 100 {
		t.Errorf("ESS bulk %v mean %v of 4000 draws, want small", s.BulkESS, s.ESSMean)
	}
}

// One chain of four shifted by one SD. The 8 split means are 1 (2) and 0
// (6), variance 0.21 against a pooled variance of 1.19, so in
// rank-normalised units R̂ ≈ √(1 + 0.18/0.84) ≈ 1.10; repeated simulation
// gives 1.102 with SD 0.007, so 1.05 is 7 SD below and still far above
// 1.01.
func TestShiftedChain(t *testing.T) {
	chains := ar1(rng.NewKey(12).For(rng.Test).Rand(), 4, 1000, 0)
	for i := range chains[0] {
		chains[0][i]++
	}
	bulk, folded, err := RhatParts(chains)
	if err != nil {
		t.Fatal(err)
	}
	if bulk < 1.05 {
		t.Errorf("bulk R̂ = %v, want about 1.10", bulk)
	}
	if rh, _ := Rhat(chains); rh != max(bulk, folded) {
		t.Errorf("Rhat %v is not max(%v, %v)", rh, bulk, folded)
	}
}

// One chain of four with three times the SD and the same mean: the
// rank-normalised split-R̂ sees nothing (its means agree; R̂ − 1 has SD
// √(2/7)/(2·500) ≈ 0.0005 for iid halves of 500, so 1.01 is ~20 SD away),
// the folded one does (repeated simulation: 1.146, SD 0.010; 1.05 is 9 SD
// below).
func TestScaledChain(t *testing.T) {
	chains := ar1(rng.NewKey(13).For(rng.Test).Rand(), 4, 1000, 0)
	for i := range chains[0] {
		chains[0][i] *= 3
	}
	bulk, folded, err := RhatParts(chains)
	if err != nil {
		t.Fatal(err)
	}
	if bulk > 1.01 {
		t.Errorf("bulk R̂ = %v, want below 1.01", bulk)
	}
	if folded < 1.05 {
		t.Errorf("folded R̂ = %v, want about 1.15", folded)
	}
}

// A single chain is split into two halves: a stationary chain gives R̂
// near 1, one whose second half sits one SD higher gives a large R̂.
// Halves of 2000 iid draws: R̂ − 1 has SD √2/(2·2000) ≈ 0.0004 (one
// degree of freedom), so 1.01 is 25 SD away; the shifted halves differ
// by 1 against a within SD of 1, R̂ ≈ √(1 + 0.5·0.8) ≈ 1.2.
func TestSingleChain(t *testing.T) {
	x := ar1(rng.NewKey(14).For(rng.Test).Rand(), 1, 4000, 0)
	rh, err := Rhat(x)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(rh-1) > 0.01 {
		t.Errorf("single stationary chain: R̂ = %v", rh)
	}
	for i := 2000; i < 4000; i++ {
		x[0][i]++
	}
	if rh, _ = Rhat(x); rh < 1.1 {
		t.Errorf("single chain with a step: R̂ = %v, want about 1.2", rh)
	}
}

// For a binary quantity, rank normalisation (two values) and the
// indicator I(x ≤ q₀.₀₅) = 1 − x are affine maps of x, and the ESS is
// unchanged by affine maps, while I(x ≤ q₀.₉₅) is always 1 and counts as
// the bulk-ESS: so TailESS = BulkESS = ESSMean up to rounding.
func TestBinaryTail(t *testing.T) {
	r := rng.NewKey(15).For(rng.Test).Rand()
	chains := make([][]float64, 4)
	for c := range chains {
		chains[c] = make([]float64, 500)
		for i := range chains[c] {
			if r.Float64() < 0.3 {
				chains[c][i] = 1
			}
		}
	}
	s, err := Summarize(chains)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]float64{"BulkESS": s.BulkESS, "TailESS": s.TailESS} {
		if math.Abs(v-s.ESSMean) > 1e-9*s.ESSMean {
			t.Errorf("%s = %v, ESSMean = %v", k, v, s.ESSMean)
		}
	}
	if tail, _ := TailESS(chains); tail != s.TailESS {
		t.Errorf("TailESS %v, Summarize %v", tail, s.TailESS)
	}
}

// Multiplying the draws by a power of two changes no bit of the
// diagnostics and scales Mean, SD and MCSE exactly; any other factor
// changes the sizes and R̂ by rounding only.
func TestScale(t *testing.T) {
	chains := ar1(rng.NewKey(16).For(rng.Test).Rand(), 3, 301, 0.6)
	base, err := Summarize(chains)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []float64{0x1p-600, 0x1p600, 1e-300, 3e290} {
		scaled := make([][]float64, len(chains))
		for c, x := range chains {
			for _, v := range x {
				scaled[c] = append(scaled[c], v*f)
			}
		}
		s, err := Summarize(scaled)
		if err != nil {
			t.Fatal(err)
		}
		tol := 1e-12
		if math.Log2(f) == math.Round(math.Log2(f)) {
			tol = 0
		}
		for k, p := range map[string][2]float64{
			"Mean": {s.Mean / f, base.Mean}, "SD": {s.SD / f, base.SD}, "MCSE": {s.MCSE / f, base.MCSE},
			"ESSMean": {s.ESSMean, base.ESSMean}, "BulkESS": {s.BulkESS, base.BulkESS},
			"TailESS": {s.TailESS, base.TailESS}, "Rhat": {s.Rhat, base.Rhat},
		} {
			if math.Abs(p[0]-p[1]) > tol*math.Abs(p[1]) {
				t.Errorf("×%g: %s %v, unscaled %v", f, k, p[0], p[1])
			}
		}
	}
}

// Draws at the ends of the float64 range: small integers times the
// smallest subnormal (2^−1074) have the diagnostics of the integers
// themselves, since scaling by a power of two is exact; draws near
// ±MaxFloat64 give finite results (no overflow in the sums of squares).
func TestExtremeValues(t *testing.T) {
	r := rng.NewKey(17).For(rng.Test).Rand()
	ints := make([][]float64, 3)
	tiny := make([][]float64, 3)
	huge := make([][]float64, 3)
	for c := range ints {
		for range 60 {
			k := float64(r.IntN(20) - 10)
			ints[c] = append(ints[c], k)
			tiny[c] = append(tiny[c], k*0x1p-1074)
			huge[c] = append(huge[c], k/10*math.MaxFloat64)
		}
	}
	a, err := Summarize(ints)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Summarize(tiny)
	if err != nil {
		t.Fatal(err)
	}
	finite(t, "tiny", b, false)
	if a.Rhat != b.Rhat || a.ESSMean != b.ESSMean || a.BulkESS != b.BulkESS || a.TailESS != b.TailESS {
		t.Errorf("subnormal draws: %+v, integers %+v", b, a)
	}
	// The SD is itself subnormal: within one step 2^−1074 of the exact one.
	if math.Abs(b.SD-a.SD*0x1p-1074) > 0x1p-1074 {
		t.Errorf("subnormal SD %v, integers %v", b.SD, a.SD)
	}
	s, err := Summarize(huge)
	if err != nil {
		t.Fatal(err)
	}
	finite(t, "huge", s, false)
}

// The mean is nearly correctly rounded whatever the order of the draws:
// 1950 ones among 4000 draws, in long runs, give exactly 1950/4000, and the
// SD the exact √(p(1−p)·S/(S−1)) within two ulps (compensated sums).
func TestMeanRounding(t *testing.T) {
	chains := make([][]float64, 4)
	for c := range chains {
		chains[c] = make([]float64, 1000)
	}
	for i := range 950 {
		chains[0][i] = 1
	}
	for i := range chains[3] {
		chains[3][i] = 1
	}
	s, err := Summarize(chains)
	if err != nil {
		t.Fatal(err)
	}
	p := 1950.0 / 4000
	if s.Mean != p {
		t.Errorf("Mean = %.17g, want %.17g", s.Mean, p)
	}
	if sd := math.Sqrt(p * (1 - p) * 4000 / 3999); math.Abs(s.SD-sd) > 4e-16*sd {
		t.Errorf("SD = %.17g, want %.17g", s.SD, sd)
	}
}
