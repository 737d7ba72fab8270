package exact

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
)

// On a 10×10 grid the clamped transfer and clamped variable elimination are
// independent computations (different orders, linear and log space); they
// agree to 1e-9. Both are checked against an exact sample as well: each of
// the 4950 pair moments of N = 20000 draws must lie within 5 standard
// errors sqrt((1 − E²)/N) of the exact value (a two-sided tail of 5.7e-7
// per moment, 3e-3 for the whole test; the seed is fixed).
func TestGridPairs10x10(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	m := randomIsingGrid(t, 10, 10, 0.5, r)
	ctx := context.Background()
	start := time.Now()
	grid, err := GridPairs(ctx, m, memlimit.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	tGrid := time.Since(start)
	start = time.Now()
	card, fs, vals := isingFactorList(m)
	ve, err := VEPairs(ctx, card, fs, vals, 0, memlimit.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("10×10: clamped transfer %v, clamped VE %v", tGrid, time.Since(start))
	comparePairs(t, "10×10 transfer vs VE", grid, ve, pairsTol)

	g, err := NewIsingGrid(m)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	d := m.Dim()
	buf := make([]int, n*d)
	g.Sample(buf, rand.New(rand.NewPCG(73, 74)))
	sum := make([]float64, d*d)
	for o := 0; o < len(buf); o += d {
		z := buf[o : o+d]
		for i := range d {
			si := model.Spin(z[i])
			row := sum[i*d : (i+1)*d]
			for j := i + 1; j < d; j++ {
				row[j] += si * model.Spin(z[j])
			}
		}
	}
	worst := 0.0
	for i := range d {
		for j := i + 1; j < d; j++ {
			e := grid.Moment(i, j)
			se := math.Sqrt(max(1-e*e, 1e-12) / n)
			dev := math.Abs(sum[i*d+j]/n-e) / se
			worst = max(worst, dev)
			if dev > 5 {
				t.Errorf("E[z_%d z_%d]: sample %.5f, exact %.5f (%.1f SE)", i, j, sum[i*d+j]/n, e, dev)
			}
		}
	}
	t.Logf("largest deviation over 4950 moments: %.2f SE", worst)
}

func BenchmarkGridPairs10x10(b *testing.B) {
	m := randomIsingGrid(b, 10, 10, 0.5, rand.New(rand.NewPCG(1, 2)))
	for b.Loop() {
		if _, err := GridPairs(context.Background(), m, memlimit.Budget{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGridPairs12x12(b *testing.B) {
	m := randomIsingGrid(b, 12, 12, 0.5, rand.New(rand.NewPCG(1, 2)))
	for b.Loop() {
		if _, err := GridPairs(context.Background(), m, memlimit.Budget{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVEPairs10x10(b *testing.B) {
	m := randomIsingGrid(b, 10, 10, 0.5, rand.New(rand.NewPCG(1, 2)))
	card, fs, vals := isingFactorList(m)
	for b.Loop() {
		if _, err := VEPairs(context.Background(), card, fs, vals, 0, memlimit.Budget{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRBMPairs100x12(b *testing.B) {
	r := mustRandomRBM(b, 100, 12, 0.3, 0.3, 1)
	for b.Loop() {
		if _, err := RBMPairs(context.Background(), r, memlimit.Budget{}); err != nil {
			b.Fatal(err)
		}
	}
}

// The routes that run on the worker pool give bit-identical tables on one
// core and on four.
func TestPairsDeterministic(t *testing.T) {
	ctx := context.Background()
	grid := randomIsingGrid(t, 5, 6, 0.5, rand.New(rand.NewPCG(91, 92)))
	card, fs, vals := isingFactorList(grid)
	r := mustRandomRBM(t, 40, 9, 0.4, 0.3, 93)
	build := func() []*Pairs {
		g, err1 := GridPairs(ctx, grid, memlimit.Budget{})
		v, err2 := VEPairs(ctx, card, fs, vals, 0, memlimit.Budget{})
		h, err3 := RBMPairs(ctx, r, memlimit.Budget{})
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatal(err)
		}
		return []*Pairs{g, v, h}
	}
	old := runtime.GOMAXPROCS(1)
	one := build()
	runtime.GOMAXPROCS(4)
	four := build()
	runtime.GOMAXPROCS(old)
	for k := range one {
		if !slices.Equal(one[k].p, four[k].p) {
			t.Errorf("route %s: tables differ between one and four cores", one[k].Route())
		}
	}
}
