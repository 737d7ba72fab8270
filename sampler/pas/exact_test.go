package pas

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/sampler/balance"
	"github.com/dstein/dstein/transform"
)

// tinyModels returns two models small enough to enumerate every path of
// every length: a factor graph on a cycle of 4 variables of 2, 3, 2 and
// 3 states with random tables and one zero entry (its proposal gradient
// gives every move's log-ratio exactly, and some moves are impossible),
// and an RBM with 4 visible and 2 hidden units (its gradient estimates
// the log-ratios to first order only, so that the test of the
// Metropolis–Hastings correction has something to correct).
func tinyModels(t *testing.T) map[string]model.Model {
	t.Helper()
	r := rand.New(rand.NewPCG(11, 3))
	card := []int{2, 3, 2, 3}
	var fs []factorgraph.Factor
	for v := range card {
		u := (v + 1) % len(card)
		table := make([]float64, card[v]*card[u])
		for k := range table {
			table[k] = 1.2 * r.NormFloat64()
		}
		if v == 1 {
			table[2*card[u]+1] = math.Inf(-1) // (z1, z2) = (2, 1) is impossible
		}
		fs = append(fs, factorgraph.Factor{Scope: []int{v, u}, LogTable: table})
	}
	fg, err := factorgraph.New(card, fs)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := rbm.Random(4, 2, 1.2, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]model.Model{"factorgraph": fg, "rbm": rb}
}

// states lists every state of m, in mixed radix with variable 0 fastest.
func states(m model.Model) [][]int {
	d := m.Dim()
	out := [][]int{make([]int, d)}
	for {
		z := append([]int(nil), out[len(out)-1]...)
		i := 0
		for ; i < d; i++ {
			z[i]++
			if z[i] < len(m.States(i)) {
				break
			}
			z[i] = 0
		}
		if i == d {
			return out
		}
		out = append(out, z)
	}
}

func index(m model.Model, z []int) int {
	k, mul := 0, 1
	for i, s := range z {
		k += s * mul
		mul *= len(m.States(i))
	}
	return k
}

// pairProbs is the brute-force local distribution at z: the probability
// of each move (i, s), s ≠ z_i, in proportion to f(t) with t = e^δ and
// δ = g[i, s] − g[i, z_i] from the model's proposal gradient, f computed
// directly (√t, or t/(1+t)) rather than in logs.
func pairProbs(m model.Model, bal balance.Func, z []int) [][]float64 {
	off := model.Offsets(m)
	grad := model.NewProposalGrads(m).Grad(make([]float64, off[m.Dim()]), z)
	p := make([][]float64, m.Dim())
	var sum float64
	for i := range p {
		p[i] = make([]float64, off[i+1]-off[i])
		for s := range p[i] {
			if s == z[i] {
				continue
			}
			t := math.Exp(grad[off[i]+s] - grad[off[i]+z[i]])
			w := math.Sqrt(t)
			if bal == balance.Ratio {
				w = t / (1 + t)
			}
			p[i][s] = w
			sum += w
		}
	}
	for i := range p {
		for s := range p[i] {
			p[i][s] /= sum
		}
	}
	return p
}

// pathProb is the brute-force probability that the local distribution p
// draws the variables of path in their order without replacement, and
// gives variable path[k] the state to[path[k]]: at each step the
// variable's probability over the sum of the probabilities of the
// variables not drawn yet, times the state's share of the variable's
// probability.
func pathProb(p [][]float64, path, to []int) float64 {
	drawn := make([]bool, len(p))
	prob := 1.0
	for _, i := range path {
		var pi, rest float64
		for _, q := range p[i] {
			pi += q
		}
		for j := range p {
			if !drawn[j] {
				for _, q := range p[j] {
					rest += q
				}
			}
		}
		if pi == 0 {
			return 0
		}
		prob *= pi / rest * p[i][to[i]] / pi
		drawn[i] = true
	}
	return prob
}

// paths calls f with every ordered path of L distinct variables from z,
// each with a state other than its own, and the state y it leads to.
func paths(m model.Model, z []int, L int, f func(path, y []int)) {
	y := append([]int(nil), z...)
	used := make([]bool, m.Dim())
	var path []int
	var rec func()
	rec = func() {
		if len(path) == L {
			f(path, y)
			return
		}
		for i := range m.Dim() {
			if used[i] {
				continue
			}
			used[i] = true
			path = append(path, i)
			for s := range m.States(i) {
				if s == z[i] {
					continue
				}
				y[i] = s
				rec()
			}
			y[i] = z[i]
			path = path[:len(path)-1]
			used[i] = false
		}
	}
	rec()
}

// place moves chain ch of s to the state z, with its log p* and local
// distribution.
func place(t *testing.T, s *Sampler, ch *chain, z []int) {
	t.Helper()
	copy(ch.Z, z)
	copy(ch.z2, z)
	ch.pg.Grad(ch.g, ch.Z)
	ch.lp = s.m.LogProb(ch.Z)
	if err := s.fill(context.Background(), ch.at, ch.g, ch.Z); err != nil {
		t.Fatal(err)
	}
}

// near reports whether a and b agree to 1e-12, relative to the larger
// of 1 and |b| (both −Inf counts as agreement).
func near(a, b float64) bool {
	if math.IsInf(b, -1) {
		return math.IsInf(a, -1)
	}
	return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b))
}

// The proposal is the path distribution it claims to be. From every
// state of the tiny models, with either balancing function and every
// path length L = 1 … 4: paths are drawn (draw) exactly when L variables
// can move, and the log-probability draw reports for each drawn path
// agrees to 1e-12 with the brute-force product over the path (pathProb),
// which logPath, the function that scores the reverse paths, also gives.
// The brute-force probabilities of all ordered paths of length L sum to
// 1, and the frequency of each proposed state y among 4000 draws (the
// paths that lead to it summed over their orders) lies within 5 binomial
// standard errors sqrt(q(1−q)/4000) of its brute-force probability q, so
// that no state of probability 0 is ever proposed. (5 SE over the ≈ 8,000
// comparisons fail by chance with probability about 0.5%; the seed is
// fixed.)
func TestProposalDistribution(t *testing.T) {
	const draws = 4000
	for name, m := range tinyModels(t) {
		tr, _ := transform.ForModel(transform.Normal{}, m)
		for _, bal := range []balance.Func{balance.Sqrt, balance.Ratio} {
			s, err := newS(m, tr, 1, Settings{Balance: bal}, 5)
			if err != nil {
				t.Fatal(err)
			}
			ch := &s.chains[0]
			removed := make([]float64, m.Dim())
			for _, x := range states(m) {
				place(t, s, ch, x)
				p := pairProbs(m, bal, x)
				for L := 1; L <= m.Dim(); L++ {
					label := fmt.Sprintf("%s, %v, x = %v, L = %d", name, bal, x, L)
					q := map[int]float64{}
					var total float64
					paths(m, x, L, func(path, y []int) {
						pr := pathProb(p, path, y)
						q[index(m, y)] += pr
						total += pr
						if got := s.logPath(ch.at, path, false, y, removed); !near(got, math.Log(pr)) {
							t.Errorf("%s: logPath of %v to %v is %v; brute force %v", label, path, y, got, math.Log(pr))
						}
					})
					can := L <= ch.at.movable
					if can && math.Abs(total-1) > 1e-12 || !can && total != 0 {
						t.Errorf("%s: the paths' probabilities sum to %v with %d variables that can move", label, total, ch.at.movable)
					}
					counts := map[int]int{}
					for range draws {
						if !s.draw(ch, L) {
							if can {
								t.Fatalf("%s: no path drawn", label)
							}
							break
						}
						y := append([]int(nil), ch.z2...)
						if pr := pathProb(p, ch.path, y); !near(ch.logFwd, math.Log(pr)) {
							t.Fatalf("%s: path %v to %v: log-probability %v; brute force %v", label, ch.path, y, ch.logFwd, math.Log(pr))
						}
						counts[index(m, y)]++
						s.undo(ch)
					}
					if !can {
						continue
					}
					for k, want := range q {
						got := float64(counts[k]) / draws
						if se := math.Sqrt(want * (1 - want) / draws); math.Abs(got-want) > 5*se+1e-12 {
							t.Errorf("%s: state %d proposed with frequency %.4f; probability %.4f (SE %.4f)", label, k, got, want, se)
						}
					}
					for k := range counts {
						if _, ok := q[k]; !ok {
							t.Errorf("%s: state %d is no path's end, yet was proposed", label, k)
						}
					}
				}
			}
		}
	}
}

// kernel returns the transition matrix of the sampler's kernel with path
// lengths L drawn from lengths (L → probability) on m, built by
// enumerating every path from every state: the probability of a path
// from the local distribution at x (logPath, as draw scores it) times its
// acceptance probability, with the reverse path scored at y by logPath
// (and checked against the brute-force product); the rest of each row on
// its diagonal. A state of probability zero is never entered, and one is
// left by any path (as a chain that starts there does).
func kernel(t *testing.T, s *Sampler, m model.Model, bal balance.Func, lengths map[int]float64) [][]float64 {
	t.Helper()
	all := states(m)
	n := len(all)
	locals := make([]*local, n)
	lp := make([]float64, n)
	probs := make([][][]float64, n)
	g := make([]float64, s.off[s.d])
	pg := model.NewProposalGrads(m)
	for k, z := range all {
		locals[k] = newLocal(s.off[s.d], s.d)
		if err := s.fill(context.Background(), locals[k], pg.Grad(g, z), z); err != nil {
			t.Fatal(err)
		}
		lp[k] = m.LogProb(z)
		probs[k] = pairProbs(m, bal, z)
	}
	removed := make([]float64, s.d)
	P := make([][]float64, n)
	for k, x := range all {
		P[k] = make([]float64, n)
		for L, pl := range lengths {
			paths(m, x, L, func(path, y []int) {
				j := index(m, y)
				fwd := s.logPath(locals[k], path, false, y, removed)
				if math.IsInf(fwd, -1) || math.IsInf(lp[j], -1) {
					return
				}
				rev := s.logPath(locals[j], path, true, x, removed)
				back := make([]int, len(path))
				for a, i := range path {
					back[len(path)-1-a] = i
				}
				if want := math.Log(pathProb(probs[j], back, x)); !near(rev, want) {
					t.Errorf("reverse of %v from %v to %v: log-probability %v; brute force %v", path, x, y, rev, want)
				}
				acc := 1.0
				if !math.IsInf(lp[k], -1) {
					acc = math.Exp(min(0, lp[j]-lp[k]+rev-fwd))
				}
				P[k][j] += pl * math.Exp(fwd) * acc
			})
		}
		var off float64
		for j, p := range P[k] {
			if j != k {
				off += p
			}
		}
		if off > 1+1e-12 {
			t.Fatalf("row %v leaves with probability %v", x, off)
		}
		P[k][k] = 1 - off
	}
	return P
}

// The kernel satisfies detailed balance exactly: on the tiny models, with
// either balancing function and R = 1, 2, 3 (lengths uniform on 1, …,
// min(2R − 1, 4)), the transition matrix built by enumerating the
// kernel's path probabilities (kernel) satisfies π_x P(x, y) = π_y P(y, x)
// and π P = π to 1e-12, π the exact distribution, whatever the quality of
// the gradient's estimates (the RBM's are first-order).
func TestDetailedBalance(t *testing.T) {
	for name, m := range tinyModels(t) {
		all := states(m)
		pi := make([]float64, len(all))
		var norm float64
		for k, z := range all {
			pi[k] = math.Exp(m.LogProb(z))
			norm += pi[k]
		}
		for k := range pi {
			pi[k] /= norm
		}
		tr, _ := transform.ForModel(transform.Normal{}, m)
		for _, bal := range []balance.Func{balance.Sqrt, balance.Ratio} {
			for _, R := range []int{1, 2, 3} {
				s, err := newS(m, tr, 1, Settings{PathLength: R, Balance: bal}, 1)
				if err != nil {
					t.Fatal(err)
				}
				top := min(2*R-1, m.Dim())
				lengths := map[int]float64{}
				for L := 1; L <= top; L++ {
					lengths[L] = 1 / float64(top)
				}
				P := kernel(t, s, m, bal, lengths)
				label := fmt.Sprintf("%s, %v, R = %d", name, bal, R)
				var worst, moved float64
				for x := range P {
					var flow float64
					for y := range P {
						flow += pi[y] * P[y][x]
						worst = max(worst, math.Abs(pi[x]*P[x][y]-pi[y]*P[y][x]))
						if y != x {
							moved += pi[x] * P[x][y]
						}
					}
					if math.Abs(flow-pi[x]) > 1e-12 {
						t.Errorf("%s: (πP)(%v) = %v; π = %v", label, all[x], flow, pi[x])
					}
				}
				if worst > 1e-12 {
					t.Errorf("%s: detailed balance off by %v", label, worst)
				}
				t.Logf("%s: detailed balance to %.1e; the chain moves with probability %.3f per step at equilibrium", label, worst, moved)
			}
		}
	}
}

// Why the path length is drawn anew for every proposal rather than fixed
// (as DISCS fixes it to the nearest integer of its adapted r): a path of
// exactly L binary variables changes the parity of the number of ones by
// L, so with L = 2 the kernel never leaves the parity class of its start
// (on the tiny RBM, no state of the other class is reached from 0000,
// however many steps), and with L = 4 it only jumps between complements.
// Lengths uniform on 1–3 (R = 2) reach every state.
func TestFixedEvenLengthIsReducible(t *testing.T) {
	m := tinyModels(t)["rbm"]
	tr, _ := transform.ForModel(transform.Normal{}, m)
	s, err := newS(m, tr, 1, Settings{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	reach := func(P [][]float64) int {
		seen := map[int]bool{0: true}
		frontier := []int{0}
		for len(frontier) > 0 {
			x := frontier[0]
			frontier = frontier[1:]
			for y, p := range P[x] {
				if p > 0 && !seen[y] {
					seen[y] = true
					frontier = append(frontier, y)
				}
			}
		}
		return len(seen)
	}
	n := len(states(m))
	for _, c := range []struct {
		lengths map[int]float64
		want    int
	}{
		{map[int]float64{2: 1}, n / 2},
		{map[int]float64{4: 1}, 2},
		{map[int]float64{1: 1.0 / 3, 2: 1.0 / 3, 3: 1.0 / 3}, n},
	} {
		if got := reach(kernel(t, s, m, balance.Sqrt, c.lengths)); got != c.want {
			t.Errorf("lengths %v: %d of the %d states reached from 0000; want %d", c.lengths, got, n, c.want)
		}
	}
}

// The sum tree draws leaves in proportion to their weights, never one of
// weight zero (even at the rounding edge u = total), and removing and
// putting back leaves restores every sum bit for bit.
func TestSumTree(t *testing.T) {
	w := []float64{0, 0.5, 0, 1e-300, 2, 0, 0.25}
	tr := newSumTree(len(w))
	copy(tr.leaves(), w)
	tr.build()
	before := append([]float64(nil), tr.t...)
	r := rand.New(rand.NewPCG(1, 2))
	const n = 100000
	counts := make([]int, len(w))
	for range n {
		counts[tr.find(r.Float64()*tr.total())]++
	}
	for _, u := range []float64{0, tr.total(), math.Nextafter(tr.total(), 0)} {
		if i := tr.find(u); w[i] == 0 {
			t.Errorf("u = %v found leaf %d of weight 0", u, i)
		}
	}
	total := tr.total()
	for i, c := range counts {
		p := w[i] / total
		// Binomial counts: 5 standard errors.
		if se := math.Sqrt(p * (1 - p) / n); math.Abs(float64(c)/n-p) > 5*se {
			t.Errorf("leaf %d drawn with frequency %v; probability %v", i, float64(c)/n, p)
		}
	}
	for _, i := range []int{4, 1, 6} {
		tr.set(i, 0)
	}
	if got := tr.total(); got != 1e-300 {
		t.Errorf("total after removing three leaves %v; want 1e-300", got)
	}
	for _, i := range []int{1, 6, 4} {
		tr.set(i, w[i])
	}
	for k := range before {
		if tr.t[k] != before[k] {
			t.Fatalf("node %d is %v after putting the leaves back; was %v", k, tr.t[k], before[k])
		}
	}
}
