package diag

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// readChains reads testdata/NAME.csv: one column per chain, one row per
// draw, under a header row.
func readChains(t *testing.T, name string) [][]float64 {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	chains := make([][]float64, len(rows[0]))
	for _, row := range rows[1:] {
		for c, s := range row {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("%s.csv: %v", name, err)
			}
			chains[c] = append(chains[c], v)
		}
	}
	return chains
}

// The golden values come from testdata/reference.py, an independent numpy
// and scipy implementation written from the paper's definitions (ArviZ
// could not be installed here); the script also made the sequences. It
// is the record of how these numbers were made: this test needs no
// python. The cases cover continuous, few-valued and binary draws, one
// chain, odd lengths, chains that disagree about location or scale,
// chains that never move (R̂ = +Inf), chains too short for Geyer's
// sequence past its first pair, antithetic chains (the S·log₁₀ S cap), a
// constant quantity and draws near 10²⁰⁰.
//
// Tolerance: both sides compute the same defined quantities in double
// precision by different routes (radix sort vs numpy sort, gonum vs
// numpy FFT, gonum's Φ⁻¹ vs scipy's ndtri), so they differ by rounding
// alone, ~1e-13 relative at these sizes; 1e-9 relative leaves room and
// still catches any change of definition. Mean is compared relative to SD
// (its rounding error scales with the spread, and a mean near 0 has no
// relative precision); infinities and zeros must match exactly.
func TestGolden(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "golden.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := rows[0]
	if len(rows) < 10 {
		t.Fatalf("golden.csv has %d cases", len(rows)-1)
	}
	var w Workspace
	worst := 0.0
	defer func() { t.Logf("largest relative difference %.2g", worst) }()
	for _, row := range rows[1:] {
		name := row[0]
		chains := readChains(t, name)
		want := map[string]float64{}
		for i, s := range row[1:] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("golden.csv %s: %v", name, err)
			}
			want[header[i+1]] = v
		}
		s, err := w.Summarize(chains)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		bulk, folded, err := w.RhatParts(chains)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := map[string]float64{
			"mean": s.Mean, "sd": s.SD, "mcse": s.MCSE, "ess_mean": s.ESSMean,
			"ess_bulk": s.BulkESS, "ess_tail": s.TailESS, "rhat": s.Rhat,
			"rhat_bulk": bulk, "rhat_folded": folded,
		}
		for _, k := range header[1:] {
			g, x := got[k], want[k]
			scale := math.Abs(x)
			if k == "mean" {
				scale = want["sd"]
			}
			if g != x {
				worst = max(worst, math.Abs(g-x)/scale)
			}
			ok := g == x || math.Abs(g-x) <= 1e-9*scale
			if !ok {
				t.Errorf("%s %s = %.17g, reference %.17g (rel. diff %.2g)", name, k, g, x, (g-x)/scale)
			}
		}
	}
}
