package gof

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/modelfile"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/stein"
)

func probeCSV(t *testing.T, m model.Model, path string) *sampler.Samples {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	var z []int
	n := 0
	for sc.Scan() {
		parts := strings.Split(strings.TrimSpace(sc.Text()), ",")
		if len(parts) != m.Dim() {
			continue
		}
		for l, p := range parts {
			v, _ := strconv.ParseFloat(p, 64)
			idx := -1
			for k, s := range m.States(l) {
				if s == v {
					idx = k
				}
			}
			if idx < 0 {
				t.Fatalf("value %v", v)
			}
			z = append(z, idx)
		}
		n++
	}
	return &sampler.Samples{N: n, D: m.Dim(), Z: z}
}

func TestZZProbeSets(t *testing.T) {
	mp, prefix := os.Getenv("PROBE_MODEL"), os.Getenv("PROBE_PREFIX")
	if mp == "" {
		t.Skip()
	}
	ld, err := modelfile.Open(mp, "")
	if err != nil {
		t.Fatal(err)
	}
	m := ld.Model
	for k := 0; k < 40; k++ {
		path := fmt.Sprintf("/tmp/audit-exact/gof/%s_%d.csv", prefix, k)
		if _, err := os.Stat(path); err != nil {
			break
		}
		s := probeCSV(t, m, path)
		res, err := DKSD(context.Background(), m, s, Options{B: 500, Key: rng.NewKey(uint64(k + 1))})
		if err != nil {
			t.Fatal(err)
		}
		pts, _ := stein.Prepare(m, s.Z, s.N)
		minS := 0.0
		for _, v := range pts.Score {
			minS = min(minS, v)
		}
		h, _ := dksdMatrix(m, s)
		n := s.N
		// row sums off-diagonal
		rs := make([]float64, n)
		for i := range n {
			for j := range n {
				if i != j {
					rs[i] += h[i*n+j]
				}
			}
		}
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return math.Abs(rs[idx[a]]) > math.Abs(rs[idx[b]]) })
		t.Logf("set %2d p=%.3f U=%+.4g minScore=%8.3g topRow=%+.3g (diag %.3g) 2nd=%+.3g", k, res.PValue, res.Statistic, minS, rs[idx[0]]/float64(n*(n-1)), h[idx[0]*n+idx[0]], rs[idx[1]]/float64(n*(n-1)))
	}
}

func TestZZProbeEnum(t *testing.T) {
	mp := os.Getenv("PROBE_ENUM")
	if mp == "" {
		t.Skip()
	}
	ld, err := modelfile.Open(mp, "")
	if err != nil {
		t.Fatal(err)
	}
	m := ld.Model
	lp, logZ, err := exact.LogProbs(context.Background(), m, 6000)
	if err != nil {
		t.Fatal(err)
	}
	var all [][]int
	var ps []float64
	forEachStateLast(m, func(z []int, idx int) {
		if !math.IsInf(lp[idx], -1) {
			all = append(all, append([]int(nil), z...))
			ps = append(ps, math.Exp(lp[idx]-logZ))
		}
	})
	N := len(all)
	s := sampler.NewSamples(N, m.Dim())
	for i, z := range all {
		copy(s.Row(i), z)
		if math.Abs(m.LogProb(z)-logZ-math.Log(ps[i])) > 1e-9 {
			t.Fatalf("order mismatch")
		}
	}
	h, err := dksdMatrix(m, s)
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	var e2, ediag, eall float64
	for j := range N {
		var e, sc float64
		for i := range N {
			e += ps[i] * h[i*N+j]
			sc += ps[i] * math.Abs(h[i*N+j])
			e2 += ps[i] * ps[j] * h[i*N+j] * h[i*N+j]
		}
		eall += ps[j] * e
		ediag += ps[j] * h[j*N+j]
		worst = max(worst, math.Abs(e)/sc)
	}
	t.Logf("N=%d  max_x' |E_x κ|/E|κ| = %.3g  E κ = %.3g  E κ(x,x) = %.4g  E κ² = %.4g", N, worst, eall, ediag, e2)
	// per-coordinate score tails
	pts, _ := stein.Prepare(m, s.Z, N)
	d := m.Dim()
	for l := range d {
		var mean, m2, tailP, tailMean float64
		for i := range N {
			v := pts.Score[i*d+l]
			mean += ps[i] * v
			m2 += ps[i] * v * v
			if v < -1 { // p(¬x)/p(x) > 2
				tailP += ps[i]
				tailMean += ps[i] * v
			}
		}
		if l < 4 {
			t.Logf(" l=%d E s=%.2g E s²=%.4g P(R>2)=%.3g  tail part of mean %.3g", l, mean, m2, tailP, tailMean)
		}
	}
	// distribution of U at n=200 restricted: mean of κ over pairs of states with max ratio < c, and prob of a sample missing the rest
	for _, c := range []float64{10, 100, 1000, 1e4} {
		typ := make([]bool, N)
		var pt float64
		for i := range N {
			typ[i] = true
			for l := range d {
				if pts.Score[i*d+l] < 1-c {
					typ[i] = false
				}
			}
			if typ[i] {
				pt += ps[i]
			}
		}
		var e float64
		for i := range N {
			for j := range N {
				if typ[i] && typ[j] && i != j {
					e += ps[i] * ps[j] * h[i*N+j]
				}
			}
		}
		e /= pt * pt
		t.Logf(" c=%g: P(all ratios<c)=%.5f  P(200 samples all typical)=%.3f  E[κ | both typical]=%.4g  vs null sd of U at n=200 ≈ sqrt(2Eκ²)/n=%.3g", c, pt, math.Pow(pt, 200), e, math.Sqrt(2*e2)/200)
	}
}

func forEachStateLast(m model.Model, f func(z []int, idx int)) {
	d := m.Dim()
	z := make([]int, d)
	n := model.StateCount(m)
	for idx := range n {
		f(z, idx)
		for l := d - 1; l >= 0; l-- {
			z[l]++
			if z[l] < len(m.States(l)) {
				break
			}
			z[l] = 0
		}
	}
}
