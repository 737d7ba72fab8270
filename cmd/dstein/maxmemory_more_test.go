package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"github.com/dstein/dstein/memlimit"
)

// The memory limit of the commands that estimated their memory before the
// harness of maxmemory_test.go held them to their peak resident memory:
// sample, exact, gof and compress. Each input is sized from the command's
// own estimate, the one it prints ("memory about X estimated"): probes at
// a few sizes give the estimate as a function of the size (affine in a
// network's variables and in the draws, quadratic in a test's samples),
// which is solved for the wanted number of bytes. An estimate that
// undercounts makes the run at 80% of the limit go over it; one that is
// not checked before the input is read makes the refusal at 130% read it.

// estimateRe matches the estimate that sample, exact, gof and compress
// print.
var estimateRe = regexp.MustCompile(`memory +about ([0-9.]+[kMGT]B) estimated`)

// estimateOf runs dstein with args under a limit that fits them and
// returns the estimate it prints, in bytes.
func estimateOf(t *testing.T, bin string, args ...string) float64 {
	t.Helper()
	out, err := exec.Command(bin, append(args, "--max-memory=8GB")...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	m := estimateRe.FindSubmatch(out)
	if m == nil {
		t.Fatalf("%v printed no estimate:\n%s", args, out)
	}
	v, err := memlimit.Parse(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	return float64(v)
}

// sizer finds the input size whose estimate is a given number of bytes:
// the estimates at the sizes probes (run once, by the first call) fix a
// polynomial of degree len(probes) − 1 through them, increasing beyond
// the first probe, which is solved for the size.
type sizer struct {
	probes   []int
	estimate func(t *testing.T, dir string, size int) float64
	once     sync.Once
	at       []float64
}

func (s *sizer) size(t *testing.T, dir string, need int64) int {
	t.Helper()
	s.once.Do(func() {
		for _, n := range s.probes {
			s.at = append(s.at, s.estimate(t, dir, n))
		}
		t.Logf("estimates %.0f MB at sizes %v", scaled(s.at, 1<<20), s.probes)
	})
	if len(s.at) != len(s.probes) {
		t.Fatal("the probes failed")
	}
	// Lagrange's form of the polynomial through the probes.
	poly := func(x float64) float64 {
		var y float64
		for i, xi := range s.probes {
			l := s.at[i]
			for j, xj := range s.probes {
				if j != i {
					l *= (x - float64(xj)) / float64(xi-xj)
				}
			}
			y += l
		}
		return y
	}
	lo, hi := float64(s.probes[0]), float64(s.probes[0])
	for poly(hi) < float64(need) {
		lo, hi = hi, 2*hi
		if hi > 1e12 {
			t.Fatalf("no size has an estimate of %d bytes", need)
		}
	}
	for hi-lo > 0.5 {
		mid := (lo + hi) / 2
		if poly(mid) < float64(need) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return int(math.Round(lo))
}

func scaled(v []float64, unit float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Round(x / unit)
	}
	return out
}

// writeSpinsCSV writes a samples CSV of n rows of d ≤ 64 spins (states −1
// and 1), repeating after period rows (distinct rows up to 2^d), as dstein
// sample --out writes them.
func writeSpinsCSV(t *testing.T, path string, n, d, period int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	for i := range d {
		if i > 0 {
			w.WriteByte(',')
		}
		fmt.Fprintf(w, "z%d", i)
	}
	w.WriteByte('\n')
	for r := range n {
		// A mix of the row's index (splitmix64's finaliser): its bits
		// are the spins.
		p := uint64(r%period) + 1
		p = (p ^ p>>30) * 0xbf58476d1ce4e5b9
		p = (p ^ p>>27) * 0x94d049bb133111eb
		p ^= p >> 31
		for i := range d {
			if i > 0 {
				w.WriteByte(',')
			}
			if p>>(i%64)&1 == 1 {
				w.WriteString("1")
			} else {
				w.WriteString("-1")
			}
		}
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestMaxMemoryPeakRSSMore(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and measures its processes")
	}
	bin := buildDstein(t)
	models := t.TempDir()
	// A 5×5 Ising grid: its samples and draws are what gof and compress
	// hold (2^25 states: random draws are distinct); its model is small.
	grid := filepath.Join(models, "grid.json")
	if err := os.WriteFile(grid, []byte(`{"type":"ising","grid":{"rows":5,"cols":5},"coupling":0.1,"field":0.05}`), 0o644); err != nil {
		t.Fatal(err)
	}
	const d = 25

	// sample: Gibbs, one chain, one sweep, on a UAI chain of n binary
	// variables (299,999 factors of 4 entries at n = 300,000: 11 MB): the
	// network, its parse and the run grow with n.
	sampleArgs := func(path string) []string {
		return []string{"sample", "--model", path, "--method", "gibbs", "--n", "1", "--iters", "1"}
	}
	sampleSize := &sizer{probes: []int{40000, 120000}, estimate: func(t *testing.T, dir string, n int) float64 {
		p := filepath.Join(dir, fmt.Sprintf("probe%d.uai", n))
		writeChainUAI(t, p, n)
		return estimateOf(t, bin, sampleArgs(p)...)
	}}
	// exact: variable elimination on a UAI chain of n binary variables:
	// the network, the elimination's structures, tables and result.
	exactSize := &sizer{probes: []int{40000, 120000}, estimate: func(t *testing.T, dir string, n int) float64 {
		p := filepath.Join(dir, fmt.Sprintf("probe%d.uai", n))
		writeChainUAI(t, p, n)
		return estimateOf(t, bin, "exact", "--model", p)
	}}
	// gof: GF-KSD of n samples of the grid: its n×n matrices.
	gofArgs := func(path string) []string {
		return []string{"gof", "--model", grid, "--samples", path, "--test", "gfksd", "--bootstrap", "100"}
	}
	gofSize := &sizer{probes: []int{400, 800, 1200}, estimate: func(t *testing.T, dir string, n int) float64 {
		p := filepath.Join(dir, fmt.Sprintf("probe%d.csv", n))
		writeSpinsCSV(t, p, n, d, n)
		return estimateOf(t, bin, gofArgs(p)...)
	}}
	// compress: Stein thinning to 10 points of n draws of the grid (all
	// distinct): the draws, the index of their states and their Stein
	// points.
	compressArgs := func(path, dir string) []string {
		return []string{"compress", "--model", grid, "--samples", path, "--n", "10", "--rule", "stein", "--out", filepath.Join(dir, "points.csv")}
	}
	compressSize := &sizer{probes: []int{20000, 60000}, estimate: func(t *testing.T, dir string, n int) float64 {
		p := filepath.Join(dir, fmt.Sprintf("probe%d.csv", n))
		writeSpinsCSV(t, p, n, d, n)
		return estimateOf(t, bin, compressArgs(p, dir)...)
	}}

	// sample on an Ising grid of side L with Gibbs and with the default
	// (parallel tempering): the model, its spin graph and threshold
	// tables (one per temperature for the default) grow with L².
	gridFile := func(dir string, side int) string {
		p := filepath.Join(dir, fmt.Sprintf("grid%d.json", side))
		os.WriteFile(p, []byte(fmt.Sprintf(`{"type":"ising","grid":{"rows":%d,"cols":%d},"coupling":0.3}`, side, side)), 0o644)
		return p
	}
	gridArgs := func(path, method string) []string {
		if method == "default" {
			return []string{"sample", "--model", path, "--draws", "1", "--chains", "1", "--warmup", "0"}
		}
		return []string{"sample", "--model", path, "--method", method, "--n", "1", "--iters", "1"}
	}
	gridSizer := func(method string) *sizer {
		return &sizer{probes: []int{100, 200, 300}, estimate: func(t *testing.T, dir string, side int) float64 {
			return estimateOf(t, bin, gridArgs(gridFile(dir, side), method)...)
		}}
	}
	gridCase := func(method string) limitCase {
		sz := gridSizer(method)
		return limitCase{name: "sample " + method + " on an Ising grid", args: func(t *testing.T, dir string, need int64) []string {
			side := sz.size(t, dir, need)
			t.Logf("a %d×%d grid", side, side)
			return gridArgs(gridFile(dir, side), method)
		}, afterLoad: true}
	}

	// sample with parallel tempering and many chains on the 10×10 example
	// grid: each chain's replicas and the words of their sweeps (left out
	// of the estimate once: 137 MB peak at an estimate of 100 MB).
	ptArgs := func(n int) []string {
		return []string{"sample", "--model", "../../examples/ising-grid.json", "--method", "pt", "--n", strconv.Itoa(n), "--iters", "5"}
	}
	ptSize := &sizer{probes: []int{2000, 6000}, estimate: func(t *testing.T, dir string, n int) float64 {
		return estimateOf(t, bin, ptArgs(n)...)
	}}

	cases := []limitCase{
		gridCase("gibbs"),
		gridCase("default"),
		{name: "sample pt with many chains", args: func(t *testing.T, dir string, need int64) []string {
			n := ptSize.size(t, dir, need)
			t.Logf("%d chains", n)
			return ptArgs(n)
		}},
		{name: "sample", args: func(t *testing.T, dir string, need int64) []string {
			n := sampleSize.size(t, dir, need)
			p := filepath.Join(dir, "chain.uai")
			writeChainUAI(t, p, n)
			t.Logf("a chain of %d variables", n)
			return sampleArgs(p)
		}},
		{name: "exact", args: func(t *testing.T, dir string, need int64) []string {
			n := exactSize.size(t, dir, need)
			p := filepath.Join(dir, "chain.uai")
			writeChainUAI(t, p, n)
			t.Logf("a chain of %d variables", n)
			return []string{"exact", "--model", p}
		}},
		{name: "gof", args: func(t *testing.T, dir string, need int64) []string {
			n := gofSize.size(t, dir, need)
			p := filepath.Join(dir, "samples.csv")
			writeSpinsCSV(t, p, n, d, n)
			t.Logf("%d samples", n)
			return gofArgs(p)
		}},
		{name: "compress", args: func(t *testing.T, dir string, need int64) []string {
			n := compressSize.size(t, dir, need)
			p := filepath.Join(dir, "draws.csv")
			writeSpinsCSV(t, p, n, d, n)
			t.Logf("%d draws", n)
			return compressArgs(p, dir)
		}},
	}
	for _, c := range cases {
		checkLimit(t, bin, c, 160<<20)
	}
}
