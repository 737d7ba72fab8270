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
	skip := strings.HasPrefix(sc.Text(), "lp__")
	var z []int
	n := 0
	for sc.Scan() {
		parts := strings.Split(strings.TrimSpace(sc.Text()), ",")
		if skip {
			parts = parts[1:]
		}
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
		dir := os.Getenv("PROBE_DIR")
		if dir == "" {
			dir = "/tmp/audit-exact/gof"
		}
		path := fmt.Sprintf("%s/%s_%d.csv", dir, prefix, k)
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

func TestZZProbeTail(t *testing.T) {
	mp, prefix := os.Getenv("PROBE_MODEL"), os.Getenv("PROBE_PREFIX")
	if mp == "" {
		t.Skip()
	}
	ld, err := modelfile.Open(mp, "")
	if err != nil {
		t.Fatal(err)
	}
	m := ld.Model
	c := stein.NewCycle(m)
	dir := os.Getenv("PROBE_DIR")
	if dir == "" {
		dir = "/tmp/audit-exact/gof"
	}
	var t1s, t2s, t3s, tns, tss, t10s []float64
	for k := 0; k < 40; k++ {
		path := fmt.Sprintf("%s/%s_%d.csv", dir, prefix, k)
		if _, err := os.Stat(path); err != nil {
			break
		}
		s := probeCSV(t, m, path)
		n, d := s.N, s.D
		pts, _ := stein.Prepare(m, s.Z, n)
		t1, t2, t3 := 0.0, 0.0, 0.0
		var tn, ts, t10 float64
		z := make([]int, d)
		for l := range d {
			var ad, du, cn, cs, c10 float64
			for i := range n {
				copy(z, s.Row(i))
				if c.Prev[l][z[l]] < 0 {
					continue
				}
				r := 1 - pts.Score[i*d+l]
				ad += r * r
				base := m.LogProb(z)
				z[l] = c.Prev[l][z[l]]
				dv := math.Exp(base - m.LogProb(z))
				du += dv
				if dv > float64(n) {
					cn++
				}
				if dv > math.Sqrt(float64(n)) {
					cs++
				}
				if dv > float64(n)/10 {
					c10++
				}
			}
			tn = max(tn, cn/float64(n))
			ts = max(ts, cs/float64(n))
			t10 = max(t10, c10/float64(n))
			ad /= float64(n)
			du /= float64(n)
			t1 = max(t1, du/float64(n))
			t2 = max(t2, math.Abs(math.Log(du/ad)))
			t3 = max(t3, du/ad)
		}
		t1s, t2s, t3s = append(t1s, t1), append(tns, tn), append(t3s, t3)
		tns, tss, t10s = append(tns, tn), append(tss, ts), append(t10s, t10)
	}
	q := func(v []float64) string {
		w := append([]float64(nil), v...)
		sort.Float64s(w)
		nn := len(w)
		return fmt.Sprintf("min %.3g q10 %.3g med %.3g q90 %.3g max %.3g", w[0], w[nn/10], w[nn/2], w[nn*9/10], w[nn-1])
	}
	_ = t2s
	t.Logf("%s\n  T1=maxDual/n: %s\n  T3=max dual/direct: %s\n  tau(n): %s\n  tau(n/10): %s\n  tau(sqrt n): %s", prefix, q(t1s), q(t3s), q(tns), q(t10s), q(tss))
}

func TestZZProbeCoord(t *testing.T) {
	mp, prefix := os.Getenv("PROBE_MODEL"), os.Getenv("PROBE_PREFIX")
	if mp == "" {
		t.Skip()
	}
	ld, _ := modelfile.Open(mp, "")
	m := ld.Model
	c := stein.NewCycle(m)
	dir := os.Getenv("PROBE_DIR")
	if dir == "" {
		dir = "/tmp/audit-exact/gof"
	}
	s := probeCSV(t, m, fmt.Sprintf("%s/%s_%d.csv", dir, prefix, 0))
	n, d := s.N, s.D
	pts, _ := stein.Prepare(m, s.Z, n)
	z := make([]int, d)
	line := ""
	for l := range d {
		var du, cn, sbar float64
		for i := range n {
			copy(z, s.Row(i))
			if c.Prev[l][z[l]] < 0 {
				continue
			}
			sbar += pts.Score[i*d+l]
			base := m.LogProb(z)
			z[l] = c.Prev[l][z[l]]
			dv := math.Exp(base - m.LogProb(z))
			du += dv
			if dv > float64(n) {
				cn++
			}
		}
		line += fmt.Sprintf("\n l=%2d sbar=%+.3f dual/n=%.3g tau(n)=%.3f", l, sbar/float64(n), du/float64(n)/float64(n), cn/float64(n))
	}
	t.Log(prefix, line)
}

func TestZZProbeBias(t *testing.T) {
	mp, prefix := os.Getenv("PROBE_MODEL"), os.Getenv("PROBE_PREFIX")
	if mp == "" {
		t.Skip()
	}
	ld, _ := modelfile.Open(mp, "")
	m := ld.Model
	c := stein.NewCycle(m)
	dir := os.Getenv("PROBE_DIR")
	if dir == "" {
		dir = "/tmp/audit-exact/gof"
	}
	var rows []string
	for k := 0; k < 40; k++ {
		path := fmt.Sprintf("%s/%s_%d.csv", dir, prefix, k)
		if _, err := os.Stat(path); err != nil {
			break
		}
		s := probeCSV(t, m, path)
		n, d := s.N, s.D
		pts, _ := stein.Prepare(m, s.Z, n)
		z := make([]int, d)
		var tau2, sig4 float64
		for l := range d {
			var cn, s1, s2 float64
			for i := range n {
				copy(z, s.Row(i))
				if c.Prev[l][z[l]] < 0 {
					continue
				}
				v := pts.Score[i*d+l]
				s1 += v
				s2 += v * v
				base := m.LogProb(z)
				z[l] = c.Prev[l][z[l]]
				if base-m.LogProb(z) > math.Log(float64(n)) {
					cn++
				}
			}
			tau := cn / float64(n)
			mu := s1 / float64(n)
			vr := s2/float64(n) - mu*mu
			tau2 += tau * tau
			sig4 += vr * vr
		}
		h, _ := dksdMatrix(m, s)
		u := uStatistic(h, n)
		boot, _ := steinBootstrap(context.Background(), h, n, Options{B: 300}, newTestRand(rng.NewKey(uint64(k))))
		var b1, b2 float64
		for _, v := range boot {
			b1 += v
			b2 += v * v
		}
		b1 /= float64(len(boot))
		sd := math.Sqrt(b2/float64(len(boot)) - b1*b1)
		fn := float64(n)
		rows = append(rows, fmt.Sprintf("set %2d nU=%+9.3g  nSD*=%8.3g  z=(U-mean*)/sd*=%+8.3g | nΣτ²=%8.3g  sqrt(2Σσ⁴)=%8.3g ratio=%8.3g", k, fn*u, fn*sd, (u-b1)/sd, fn*tau2, math.Sqrt(2*sig4), fn*tau2/math.Sqrt(2*sig4)))
	}
	t.Log(prefix + "\n" + strings.Join(rows, "\n"))
}

// probeBeta is the dual estimate of the typical-sample bias of U.
func probeBeta(m model.Model, s *sampler.Samples, t float64) (float64, []float64) {
	c := stein.NewCycle(m)
	n, d := s.N, s.D
	pts, _ := stein.Prepare(m, s.Z, n)
	em, ep := math.Exp(-1/float64(d)), math.Exp(1/float64(d))
	H := make([]int, n*n)
	for i := range n {
		for j := range n {
			h := 0
			for l := range d {
				if s.Z[i*d+l] != s.Z[j*d+l] {
					h++
				}
			}
			H[i*n+j] = h
		}
	}
	z := make([]int, d)
	logt := math.Log(t)
	var beta float64
	per := make([]float64, d)
	flag := make([]bool, n)
	for l := range d {
		any := false
		for i := range n {
			copy(z, s.Row(i))
			flag[i] = false
			if c.Prev[l][z[l]] < 0 {
				continue
			}
			base := m.LogProb(z)
			z[l] = c.Prev[l][z[l]]
			if base-m.LogProb(z) > logt {
				flag[i] = true
				any = true
			}
		}
		if !any {
			continue
		}
		var b1, b2 float64
		for i := range n {
			if !flag[i] {
				continue
			}
			xi := s.Z[i*d+l]
			wl := c.Prev[l][xi]
			for j := range n {
				if j == i {
					continue
				}
				xj := s.Z[j*d+l]
				if flag[j] {
					b2 += math.Exp(-float64(H[i*n+j]) / float64(d))
				}
				sj := pts.Score[j*d+l]
				if sj < 1-t || c.Prev[l][xj] < 0 {
					continue
				}
				h := H[i*n+j]
				if xi != xj {
					h--
				}
				if wl != xj {
					h++
				}
				var a float64
				switch {
				case xj == wl:
					a = 1 - em
				case wl == c.Prev[l][xj]:
					a = 1 - ep
				}
				b1 += math.Exp(-float64(h)/float64(d)) * (sj - a)
			}
		}
		nn := float64(n) * float64(n-1)
		per[l] = (2*b1 - b2) / nn
		beta += per[l]
	}
	return beta, per
}

func TestZZProbeBeta(t *testing.T) {
	mp, prefix := os.Getenv("PROBE_MODEL"), os.Getenv("PROBE_PREFIX")
	if mp == "" {
		t.Skip()
	}
	ld, _ := modelfile.Open(mp, "")
	m := ld.Model
	dir := os.Getenv("PROBE_DIR")
	if dir == "" {
		dir = "/tmp/audit-exact/gof"
	}
	var rows []string
	var ratios []float64
	for k := 0; k < 40; k++ {
		path := fmt.Sprintf("%s/%s_%d.csv", dir, prefix, k)
		if _, err := os.Stat(path); err != nil {
			break
		}
		s := probeCSV(t, m, path)
		n := s.N
		beta, _ := probeBeta(m, s, float64(n))
		h, _ := dksdMatrix(m, s)
		u := uStatistic(h, n)
		boot, _ := steinBootstrap(context.Background(), h, n, Options{B: 300}, newTestRand(rng.NewKey(uint64(k))))
		var b1, b2 float64
		for _, v := range boot {
			b1 += v
			b2 += v * v
		}
		b1 /= float64(len(boot))
		sd := math.Sqrt(b2/float64(len(boot)) - b1*b1)
		p, _, _ := decide(u, boot, 0.05)
		ratios = append(ratios, beta/sd)
		rows = append(rows, fmt.Sprintf("set %2d p=%.3f U=%+9.3g  sd*=%8.3g  beta=%+9.3g beta/sd*=%+9.3g", k, p, u, sd, beta, beta/sd))
	}
	sort.Float64s(ratios)
	t.Log(prefix + "\n" + strings.Join(rows, "\n") + fmt.Sprintf("\n ratios sorted: %.3g", ratios))
}

func TestZZProbeFlag(t *testing.T) {
	mp, prefix := os.Getenv("PROBE_MODEL"), os.Getenv("PROBE_PREFIX")
	if mp == "" {
		t.Skip()
	}
	ld, _ := modelfile.Open(mp, "")
	m := ld.Model
	dir := os.Getenv("PROBE_DIR")
	if dir == "" {
		dir = "/tmp/audit-exact/gof"
	}
	cs := []float64{1, 1.5, 2, 3}
	ts := []float64{1, 10, 100}
	fa := make([]int, len(cs))
	fb := make([]int, len(ts))
	ra := make([]int, len(cs))
	rab := make([][]int, len(cs))
	fab := make([][]int, len(cs))
	for i := range cs {
		rab[i] = make([]int, len(ts))
		fab[i] = make([]int, len(ts))
	}
	sets, rej := 0, 0
	for k := 0; k < 40; k++ {
		path := fmt.Sprintf("%s/%s_%d.csv", dir, prefix, k)
		if _, err := os.Stat(path); err != nil {
			break
		}
		sets++
		s := probeCSV(t, m, path)
		n, d := s.N, s.D
		beta, _ := probeBeta(m, s, float64(n))
		pts, _ := stein.Prepare(m, s.Z, n)
		maxR := 0.0
		for _, v := range pts.Score[:n*d] {
			maxR = max(maxR, 1-v)
		}
		res, _ := DKSD(context.Background(), m, s, Options{B: 500, Key: rng.NewKey(uint64(k + 1))})
		h, _ := dksdMatrix(m, s)
		boot, _ := steinBootstrap(context.Background(), h, n, Options{B: 300}, newTestRand(rng.NewKey(uint64(k))))
		var b1, b2 float64
		for _, v := range boot {
			b1 += v
			b2 += v * v
		}
		b1 /= float64(len(boot))
		sd := math.Sqrt(b2/float64(len(boot)) - b1*b1)
		if res.Reject {
			rej++
		}
		for j, tb := range ts {
			if maxR > tb*float64(n) {
				fb[j]++
			}
		}
		for i, c := range cs {
			a := beta > c*sd
			if a {
				fa[i]++
			} else if res.Reject {
				ra[i]++
			}
			for j, tb := range ts {
				f := a || maxR > tb*float64(n)
				if f {
					fab[i][j]++
				} else if res.Reject {
					rab[i][j]++
				}
			}
		}
	}
	out := fmt.Sprintf("%-18s sets %d rej %d | B(t=n,10n,100n) flags %v\n", prefix, sets, rej, fb)
	for i, c := range cs {
		out += fmt.Sprintf("   c=%.1f: A flags %2d (unflagged rej %d) | A|B flags %v unflagged rej %v\n", c, fa[i], ra[i], fab[i], rab[i])
	}
	t.Log(out)
}
