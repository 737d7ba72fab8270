package modeltest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dstein/dstein/model"
)

// Why one file of about 560 lines: the conformance suite every model passes: one check per
// contract of model.Model and its optional interfaces, which read best in one place.

// Options tune Check. The zero value is valid.
type Options struct {
	// Reference, when not nil, returns the unnormalised log-probability of
	// z computed independently from the model's definition (for example by
	// summing out hidden units). Check compares log-probability differences,
	// so the two may differ by a constant.
	Reference func(z []int) float64
	// Tol is the absolute tolerance for comparing log-probabilities.
	// Default 1e-9.
	Tol float64
	// GradTol is the tolerance for gradients against central finite
	// differences, relative to max(1, |gradient|). Default 1e-5.
	GradTol float64
	// MaxStates bounds the enumeration. Default 1<<16.
	MaxStates int
	// GradPoints is the number of random interior membership vectors at
	// which a Relaxed gradient is checked. Default 5.
	GradPoints int
	// Seed seeds the random gradient points.
	Seed uint64
}

func (o *Options) defaults() {
	if o.Tol == 0 {
		o.Tol = 1e-9
	}
	if o.GradTol == 0 {
		o.GradTol = 1e-5
	}
	if o.MaxStates == 0 {
		o.MaxStates = 1 << 16
	}
	if o.GradPoints == 0 {
		o.GradPoints = 5
	}
}

// ForEachState calls fn with every joint state of m, last variable fastest.
// fn must not keep z.
func ForEachState(m model.Model, fn func(z []int)) {
	d := m.Dim()
	z := make([]int, d)
	for {
		fn(z)
		i := d - 1
		for ; i >= 0; i-- {
			z[i]++
			if z[i] < len(m.States(i)) {
				break
			}
			z[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// agree reports whether a and b agree within tol, treating equal infinities
// as equal.
func agree(a, b, tol float64) bool {
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= tol
}

// Check runs the conformance suite on m.
func Check(t testing.TB, m model.Model, opt Options) {
	t.Helper()
	opt.defaults()
	d := m.Dim()
	if d < 1 {
		t.Fatalf("model has dimension %d", d)
	}
	for i := range d {
		if len(m.States(i)) < 1 {
			t.Fatalf("variable %d has no states", i)
		}
	}
	if n := model.StateCount(m); n > opt.MaxStates {
		t.Fatalf("model has %d joint states; Check enumerates at most %d", n, opt.MaxStates)
	}

	// Reference point for differences: the first possible state.
	var z0 []int
	var lp0, ref0 float64
	ForEachState(m, func(z []int) {
		lp := m.LogProb(z)
		if math.IsNaN(lp) || math.IsInf(lp, 1) {
			t.Fatalf("LogProb(%v) = %v; want finite or −Inf", z, lp)
		}
		if z0 == nil && !math.IsInf(lp, -1) {
			z0 = append([]int(nil), z...)
			lp0 = lp
			if opt.Reference != nil {
				ref0 = opt.Reference(z)
			}
		}
	})
	if z0 == nil {
		t.Fatalf("every state has probability zero")
	}
	if opt.Reference != nil {
		ForEachState(m, func(z []int) {
			got, want := m.LogProb(z)-lp0, opt.Reference(z)-ref0
			if !agree(got, want, opt.Tol) {
				t.Errorf("LogProb(%v) − LogProb(%v) = %v; reference gives %v", z, z0, got, want)
			}
		})
	}

	zz := make([]int, d)
	if c, ok := m.(model.Conditional); ok {
		var dst []float64
		ForEachState(m, func(z []int) {
			lp := m.LogProb(z)
			for i := range d {
				snapshot := append(zz[:0], z...)
				dst = c.LogConditional(dst, z, i)
				for k := range z {
					if z[k] != snapshot[k] {
						t.Fatalf("LogConditional modified z")
					}
				}
				if len(dst) != len(m.States(i)) {
					t.Fatalf("LogConditional(%v, %d) returned %d values; variable has %d states", z, i, len(dst), len(m.States(i)))
				}
				for s := range dst {
					if math.IsNaN(dst[s]) || math.IsInf(dst[s], 1) {
						t.Fatalf("LogConditional(%v, %d)[%d] = %v", z, i, s, dst[s])
					}
					if math.IsInf(lp, -1) {
						continue
					}
					zs := append([]int(nil), z...)
					zs[i] = s
					want := m.LogProb(zs) - lp
					got := dst[s] - dst[z[i]]
					if !agree(got, want, opt.Tol) {
						t.Errorf("LogConditional(%v, %d): state %d minus current = %v; LogProb difference %v", z, i, s, got, want)
					}
				}
			}
		})
	}

	if dl, ok := m.(model.Delta); ok {
		ForEachState(m, func(z []int) {
			lp := m.LogProb(z)
			for i := range d {
				for s := range m.States(i) {
					got := dl.DeltaLogProb(z, i, s)
					if math.IsNaN(got) {
						t.Fatalf("DeltaLogProb(%v, %d, %d) is NaN", z, i, s)
					}
					zs := append([]int(nil), z...)
					zs[i] = s
					lps := m.LogProb(zs)
					if math.IsInf(lp, -1) && math.IsInf(lps, -1) {
						continue // defined by the model's local factors
					}
					if !agree(got, lps-lp, opt.Tol) {
						t.Errorf("DeltaLogProb(%v, %d, %d) = %v; LogProb difference %v", z, i, s, got, lps-lp)
					}
				}
			}
		})
	}

	if r, ok := m.(model.Relaxed); ok {
		checkRelaxed(t, m, r, z0, lp0, opt)
		checkGradientTracker(t, m, r, opt)
	}
	checkProposal(t, m, opt)
	if lb, ok := m.(model.LogProbBatch); ok {
		checkLogProbBatch(t, m, lb, opt)
	}
	checkTracker(t, m, opt)
}

// checkLogProbBatch evaluates random states in one batch and compares
// each with LogProb to relative 1e-12 (the batch sums in another order).
func checkLogProbBatch(t testing.TB, m model.Model, lb model.LogProbBatch, opt Options) {
	t.Helper()
	const n = 7
	d := m.Dim()
	rnd := rand.New(rand.NewPCG(opt.Seed, 17))
	z := make([]int, n*d)
	for j := range n {
		for i := range d {
			z[j*d+i] = rnd.IntN(len(m.States(i)))
		}
	}
	lp := make([]float64, n)
	lb.NewLogProbBatch(n).LogProbs(lp, z)
	for j := range n {
		want := m.LogProb(z[j*d : (j+1)*d])
		if math.Abs(lp[j]-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("LogProbs row %d = %v; LogProb gives %v", j, lp[j], want)
		}
	}
	// Row ranges, last first, on a fresh batch: the whole batch's bits.
	rows := make([]float64, n)
	b := lb.NewLogProbBatch(n)
	for hi := n; hi > 0; hi -= 3 {
		b.LogProbRows(max(0, hi-3), hi, rows, z)
	}
	for j := range n {
		if math.Float64bits(rows[j]) != math.Float64bits(lp[j]) {
			t.Errorf("LogProbRows row %d = %v; LogProbs gives %v", j, rows[j], lp[j])
		}
	}
}

// checkGradientTracker checks the gradient tracker of a Relaxed model (the
// model's own, or the generic one) against RelaxedLogProb's gradient at the
// one-hot memberships (walkGradientTracker).
func checkGradientTracker(t testing.TB, m model.Model, r model.Relaxed, opt Options) {
	t.Helper()
	off := model.Offsets(m)
	mem := make([]float64, off[m.Dim()])
	want := make([]float64, off[m.Dim()])
	fresh := func(z []int) []float64 {
		clear(mem)
		for i, s := range z {
			mem[off[i]+s] = 1
		}
		r.RelaxedLogProb(want, mem)
		return want
	}
	walkGradientTracker(t, m, "gradient tracker", "RelaxedLogProb", model.NewGradientTracker(r, make([]int, m.Dim())), fresh, opt)
}

// checkProposal checks the proposal gradient of m (model.NewProposalTracker,
// model.ProposalGrads: the model's ProposalGrad, its relaxation's gradient,
// or its log conditionals). The whole-state evaluator must equal the
// model's from-scratch computation (ProposalGrad, RelaxedLogProb at the
// one-hot memberships, or a fresh Tracker's LogConditional) exactly, and
// the tracker must follow it (walkGradientTracker; for a Relaxed model
// without ProposalGradient it is the relaxed tracker, which
// checkGradientTracker walks). Where the gradient is
// the model's ProposalGrad or its log conditionals, at every state no entry
// may be NaN or +Inf and every current state's entry must be finite, and at
// every possible state each difference g[i, s] − g[i, z_i] must equal the
// change of LogProb within Tol (−Inf where the new state is impossible):
// the contract of model.ProposalGradient.
func checkProposal(t testing.TB, m model.Model, opt Options) {
	t.Helper()
	d := m.Dim()
	off := model.Offsets(m)
	want := make([]float64, off[d])
	var fresh func(z []int) []float64
	pg, isPG := m.(model.ProposalGradient)
	r, isRelaxed := m.(model.Relaxed)
	switch {
	case isPG:
		fresh = func(z []int) []float64 { return pg.ProposalGrad(want, z) }
	case isRelaxed:
		mem := make([]float64, off[d])
		fresh = func(z []int) []float64 {
			clear(mem)
			for i, s := range z {
				mem[off[i]+s] = 1
			}
			r.RelaxedLogProb(want, mem)
			return want
		}
	default:
		var dst []float64
		fresh = func(z []int) []float64 {
			tr := model.NewTracker(m, z)
			for i := range d {
				dst = tr.LogConditional(dst, i)
				b := want[off[i]:off[i+1]]
				copy(b, dst)
				if math.IsInf(b[z[i]], -1) {
					clear(b)
				}
			}
			return want
		}
	}
	exact := isPG || !isRelaxed
	grads := model.NewProposalGrads(m)
	got := make([]float64, off[d])
	zs := make([]int, d)
	ForEachState(m, func(z []int) {
		g := fresh(z)
		if h := grads.Grad(got, z); &h[0] != &got[0] {
			t.Fatalf("ProposalGrads.Grad did not return its destination")
		}
		for k := range g {
			if got[k] != g[k] && !(math.IsNaN(got[k]) && math.IsNaN(g[k])) {
				t.Errorf("ProposalGrads at %v, entry %d: %v; the model gives %v", z, k, got[k], g[k])
			}
		}
		if !exact {
			return
		}
		for i := range d {
			for k := off[i]; k < off[i+1]; k++ {
				if math.IsNaN(g[k]) || math.IsInf(g[k], 1) {
					t.Errorf("proposal gradient at %v, entry %d (variable %d): %v; want finite or −Inf", z, k, i, g[k])
				}
			}
			if cur := g[off[i]+z[i]]; math.IsNaN(cur) || math.IsInf(cur, 0) {
				t.Errorf("proposal gradient at %v, variable %d's current state: %v; want finite", z, i, cur)
			}
		}
		lp := m.LogProb(z)
		if math.IsInf(lp, -1) {
			return
		}
		for i := range d {
			cur := g[off[i]+z[i]]
			for s := range m.States(i) {
				copy(zs, z)
				zs[i] = s
				if est, want := g[off[i]+s]-cur, m.LogProb(zs)-lp; !agree(est, want, opt.Tol*math.Max(1, math.Abs(cur))) {
					t.Errorf("proposal gradient at %v, variable %d, state %d: difference %v; LogProb difference %v", z, i, s, est, want)
				}
			}
		}
	})
	if !exact {
		return // the proposal tracker is the relaxed one, which checkGradientTracker walks
	}
	walkGradientTracker(t, m, "proposal tracker", "the proposal gradient", model.NewProposalTracker(m, make([]int, d)), fresh, opt)
}

// walkGradientTracker walks a gradient tracker through every state by tried
// and committed single-variable changes. At every possible state it
// compares Grad, and the gradient of every tried change (abandoned), with
// fresh (the from-scratch gradient, named source in messages), within Tol
// relative to max(1, |entry|); blocks outside a Try's changed variables
// must equal Grad exactly.
func walkGradientTracker(t testing.TB, m model.Model, name, source string, tr model.GradientTracker, fresh func(z []int) []float64, opt Options) {
	t.Helper()
	d := m.Dim()
	off := model.Offsets(m)
	same := func(what string, z []int, got, want []float64, blocks []int) {
		t.Helper()
		for _, i := range blocks {
			for k := off[i]; k < off[i+1]; k++ {
				if !agree(got[k], want[k], opt.Tol*math.Max(1, math.Abs(want[k]))) {
					t.Errorf("%s %s at %v, entry %d (variable %d): %v; %s gives %v", name, what, z, k, i, got[k], source, want[k])
				}
			}
		}
	}
	all := make([]int, d)
	for i := range all {
		all[i] = i
	}
	zs := make([]int, d)
	seen := make([]bool, d)
	ForEachState(m, func(z []int) {
		for i, s := range z {
			if tr.State()[i] != s {
				tr.Try(i, s)
				tr.Commit()
			}
		}
		for i := range z {
			if tr.State()[i] != z[i] {
				t.Fatalf("%s state %v after moving to %v", name, tr.State(), z)
			}
		}
		lp := m.LogProb(z)
		if math.IsInf(lp, -1) {
			return
		}
		same("Grad", z, tr.Grad(), fresh(z), all)
		for i := range d {
			for s := range m.States(i) {
				if s == z[i] {
					continue
				}
				copy(zs, z)
				zs[i] = s
				lps := m.LogProb(zs)
				if got := tr.DeltaLogProb(i, s); !agree(got, lps-lp, opt.Tol) {
					t.Errorf("%s DeltaLogProb at %v, variable %d, state %d: %v; want %v", name, z, i, s, got, lps-lp)
				}
				changed, g := tr.Try(i, s)
				clear(seen)
				for _, v := range changed {
					if seen[v] {
						t.Fatalf("%s Try(%d, %d) at %v names variable %d twice", name, i, s, z, v)
					}
					seen[v] = true
				}
				if !seen[i] {
					t.Fatalf("%s Try(%d, %d) at %v does not name variable %d", name, i, s, z, i)
				}
				cur := tr.Grad()
				for v := range d {
					for k := off[v]; !seen[v] && k < off[v+1]; k++ {
						if g[k] != cur[k] && !(math.IsNaN(g[k]) && math.IsNaN(cur[k])) {
							t.Errorf("%s Try(%d, %d) at %v changed entry %d of variable %d, which it does not name", name, i, s, z, k, v)
						}
					}
				}
				if !math.IsInf(lps, -1) {
					same("Try", zs, g, fresh(zs), all)
				}
			}
		}
		// The tries were abandoned: Grad is still the current state's.
		same("Grad after abandoned tries", z, tr.Grad(), fresh(z), all)
	})
	tr.Reset(make([]int, d))
	for _, v := range tr.State() {
		if v != 0 {
			t.Fatalf("%s Reset to zeros gave %v", name, tr.State())
		}
	}
}

// checkTracker walks a tracker (the model's own, or the generic one) through
// every state by single-variable changes and compares it with LogProb.
func checkTracker(t testing.TB, m model.Model, opt Options) {
	t.Helper()
	d := m.Dim()
	start := make([]int, d)
	tr := model.NewTracker(m, start)
	var dst []float64
	ForEachState(m, func(z []int) {
		// Move the tracker to z one variable at a time.
		for i, s := range z {
			tr.Set(i, s)
		}
		got := tr.State()
		for i := range z {
			if got[i] != z[i] {
				t.Fatalf("tracker state %v after setting %v", got, z)
			}
		}
		lp := m.LogProb(z)
		if math.IsInf(lp, -1) {
			return
		}
		for i := range d {
			dst = tr.LogConditional(dst, i)
			for s := range m.States(i) {
				zs := append([]int(nil), z...)
				zs[i] = s
				want := m.LogProb(zs) - lp
				if !agree(dst[s]-dst[z[i]], want, opt.Tol) {
					t.Errorf("tracker LogConditional at %v, variable %d, state %d: %v; want %v", z, i, s, dst[s]-dst[z[i]], want)
				}
				if got := tr.DeltaLogProb(i, s); !agree(got, want, opt.Tol) {
					t.Errorf("tracker DeltaLogProb at %v, variable %d, state %d: %v; want %v", z, i, s, got, want)
				}
			}
		}
	})
	// Reset jumps anywhere.
	tr.Reset(start)
	for i, v := range tr.State() {
		if v != start[i] {
			t.Fatalf("tracker Reset to %v gave %v", start, tr.State())
		}
	}
}

func checkRelaxed(t testing.TB, m model.Model, r model.Relaxed, z0 []int, lp0 float64, opt Options) {
	t.Helper()
	off := model.Offsets(m)
	mem := make([]float64, off[len(off)-1])
	oneHot := func(z []int) {
		clear(mem)
		for i, s := range z {
			mem[off[i]+s] = 1
		}
	}
	oneHot(z0)
	f0 := r.RelaxedLogProb(nil, mem)
	ForEachState(m, func(z []int) {
		oneHot(z)
		got := r.RelaxedLogProb(nil, mem) - f0
		want := m.LogProb(z) - lp0
		if !agree(got, want, opt.Tol) {
			t.Errorf("RelaxedLogProb at one-hot %v differs from LogProb by %v (relative to %v)", z, got-want, z0)
		}
	})

	rnd := rand.New(rand.NewPCG(opt.Seed, 99))
	grad := make([]float64, len(mem))
	for p := 0; p < opt.GradPoints; p++ {
		// A random interior point of the product of simplices.
		for i := range m.Dim() {
			var s float64
			for k := off[i]; k < off[i+1]; k++ {
				mem[k] = 0.05 + rnd.Float64()
				s += mem[k]
			}
			for k := off[i]; k < off[i+1]; k++ {
				mem[k] /= s
			}
		}
		f := r.RelaxedLogProb(grad, mem)
		if f2 := r.RelaxedLogProb(nil, mem); f2 != f {
			t.Fatalf("RelaxedLogProb with and without gradient differ: %v vs %v", f, f2)
		}
		for k := range mem {
			h := 1e-6
			orig := mem[k]
			mem[k] = orig + h
			fp := r.RelaxedLogProb(nil, mem)
			mem[k] = orig - h
			fm := r.RelaxedLogProb(nil, mem)
			mem[k] = orig
			fd := (fp - fm) / (2 * h)
			if math.Abs(fd-grad[k]) > opt.GradTol*math.Max(1, math.Abs(grad[k])) {
				t.Errorf("relaxed gradient entry %d = %v; central difference %v", k, grad[k], fd)
			}
		}
		if rb, ok := r.(model.RelaxedBatch); ok {
			checkRelaxedBatch(t, rb, mem)
		}
	}
}

// checkRelaxedBatch evaluates a batch of three points (mem, its mirror
// image within each variable's simplex, mem again) and compares each row
// with RelaxedLogProb to relative 1e-12 (the batch sums in another order).
func checkRelaxedBatch(t testing.TB, r model.RelaxedBatch, mem []float64) {
	t.Helper()
	k := len(mem)
	rows := make([]float64, 3*k)
	copy(rows, mem)
	for q := range mem {
		rows[k+q] = mem[k-1-q]
	}
	copy(rows[2*k:], mem)
	f, grad := make([]float64, 3), make([]float64, 3*k)
	r.NewRelaxedBatch(3).RelaxedLogProbs(f, grad, rows)
	// One point at a time, last first, on a fresh batch: the same bits.
	f1, grad1 := make([]float64, 3), make([]float64, 3*k)
	b := r.NewRelaxedBatch(3)
	for j := 2; j >= 0; j-- {
		b.RelaxedLogProbRows(j, j+1, f1, grad1, rows)
	}
	for q := range grad {
		if q < 3 && math.Float64bits(f1[q]) != math.Float64bits(f[q]) {
			t.Errorf("RelaxedLogProbRows row %d = %v; RelaxedLogProbs gives %v", q, f1[q], f[q])
		}
		if math.Float64bits(grad1[q]) != math.Float64bits(grad[q]) {
			t.Errorf("RelaxedLogProbRows gradient entry %d = %v; RelaxedLogProbs gives %v", q, grad1[q], grad[q])
			break
		}
	}
	want, wg := make([]float64, 3), make([]float64, 3*k)
	for j := range 3 {
		want[j] = r.RelaxedLogProb(wg[j*k:(j+1)*k], rows[j*k:(j+1)*k])
	}
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }
	for j := range 3 {
		if !close(f[j], want[j]) {
			t.Errorf("RelaxedLogProbs row %d = %v; RelaxedLogProb gives %v", j, f[j], want[j])
		}
		for q := range k {
			if !close(grad[j*k+q], wg[j*k+q]) {
				t.Errorf("RelaxedLogProbs row %d, gradient entry %d = %v; RelaxedLogProb gives %v", j, q, grad[j*k+q], wg[j*k+q])
				return
			}
		}
	}
}
