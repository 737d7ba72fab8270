package modeltest

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/dstein/dstein/model"
)

// recorder is a testing.TB that records failures instead of reporting them.
type recorder struct {
	testing.TB
	errors []string
	fatal  bool
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(f string, a ...any) {
	r.errors = append(r.errors, fmt.Sprintf(f, a...))
}
func (r *recorder) Fatalf(f string, a ...any) {
	r.errors = append(r.errors, fmt.Sprintf(f, a...))
	r.fatal = true
	runtime.Goexit()
}

func check(m model.Model, opt Options) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Check(r, m, opt)
	}()
	<-done
	return r
}

// twoSpins is a correct model; its variants below break one contract each.
type twoSpins struct{ j float64 }

func (m twoSpins) Dim() int             { return 2 }
func (m twoSpins) States(int) []float64 { return model.Spins }
func (m twoSpins) LogProb(z []int) float64 {
	return m.j * model.Spin(z[0]) * model.Spin(z[1])
}

type badConditional struct{ twoSpins }

func (m badConditional) LogConditional(dst []float64, z []int, i int) []float64 {
	l := m.j * model.Spin(z[1-i])
	return append(dst[:0], l, -l) // sign flipped
}

type badRelaxed struct{ twoSpins }

func (m badRelaxed) RelaxedLogProb(grad, mem []float64) float64 {
	u0, u1 := mem[1]-mem[0], mem[3]-mem[2]
	if grad != nil {
		g0, g1 := m.j*u1, 2*m.j*u0 // wrong: factor 2
		grad[0], grad[1], grad[2], grad[3] = -g0, g0, -g1, g1
	}
	return m.j * u0 * u1
}

// relaxedSpins is twoSpins with a correct relaxed form.
type relaxedSpins struct{ twoSpins }

func (m relaxedSpins) RelaxedLogProb(grad, mem []float64) float64 {
	u0, u1 := mem[1]-mem[0], mem[3]-mem[2]
	if grad != nil {
		g0, g1 := m.j*u1, m.j*u0
		grad[0], grad[1], grad[2], grad[3] = -g0, g0, -g1, g1
	}
	return m.j * u0 * u1
}

// staleGradient has a gradient tracker that updates only the changed
// variable's own block, missing its neighbour's.
type staleGradient struct{ relaxedSpins }

func (m staleGradient) NewGradientTracker(z []int) model.GradientTracker {
	t := &staleTracker{m: m.relaxedSpins, z: append([]int(nil), z...), g: make([]float64, 4), g2: make([]float64, 4)}
	t.Reset(z)
	return t
}

type staleTracker struct {
	m      relaxedSpins
	z      []int
	g, g2  []float64
	ti, ts int
}

func (t *staleTracker) State() []int    { return t.z }
func (t *staleTracker) Grad() []float64 { return t.g }
func (t *staleTracker) DeltaLogProb(i, s int) float64 {
	z := append([]int(nil), t.z...)
	z[i] = s
	return t.m.LogProb(z) - t.m.LogProb(t.z)
}
func (t *staleTracker) Try(i, s int) ([]int, []float64) {
	z := append([]int(nil), t.z...)
	z[i] = s
	copy(t.g2, t.g)
	mem := make([]float64, 4)
	mem[z[0]], mem[2+z[1]] = 1, 1
	fresh := make([]float64, 4)
	t.m.RelaxedLogProb(fresh, mem)
	copy(t.g2[2*i:2*i+2], fresh[2*i:2*i+2]) // only i's block
	t.ti, t.ts = i, s
	return []int{i}, t.g2
}
func (t *staleTracker) Commit() { t.z[t.ti] = t.ts; t.g, t.g2 = t.g2, t.g }
func (t *staleTracker) Reset(z []int) {
	copy(t.z, z)
	mem := make([]float64, 4)
	mem[z[0]], mem[2+z[1]] = 1, 1
	t.m.RelaxedLogProb(t.g, mem)
}

// proposalSpins is twoSpins with a correct proposal gradient: block i is
// (−L_i, +L_i), L_i = j·z_other, the spin's log conditional.
type proposalSpins struct {
	twoSpins
	scale float64 // 1 when correct
}

func (m proposalSpins) ProposalGrad(grad []float64, z []int) []float64 {
	for i := range 2 {
		l := m.scale * m.j * model.Spin(z[1-i])
		grad[2*i], grad[2*i+1] = -l, l
	}
	return grad
}

// staleProposal has a proposal tracker that updates only the changed
// variable's own block, missing its neighbour's.
type staleProposal struct{ proposalSpins }

func (m staleProposal) NewProposalTracker(z []int) model.GradientTracker {
	t := &staleProposalTracker{m: m.proposalSpins, z: append([]int(nil), z...), g: make([]float64, 4), g2: make([]float64, 4)}
	t.Reset(z)
	return t
}

type staleProposalTracker struct {
	m      proposalSpins
	z      []int
	g, g2  []float64
	ti, ts int
}

func (t *staleProposalTracker) State() []int    { return t.z }
func (t *staleProposalTracker) Grad() []float64 { return t.g }
func (t *staleProposalTracker) DeltaLogProb(i, s int) float64 {
	z := append([]int(nil), t.z...)
	z[i] = s
	return t.m.LogProb(z) - t.m.LogProb(t.z)
}
func (t *staleProposalTracker) Try(i, s int) ([]int, []float64) {
	z := append([]int(nil), t.z...)
	z[i] = s
	copy(t.g2, t.g)
	fresh := t.m.ProposalGrad(make([]float64, 4), z)
	copy(t.g2[2*i:2*i+2], fresh[2*i:2*i+2]) // only i's block
	t.ti, t.ts = i, s
	return []int{i}, t.g2
}
func (t *staleProposalTracker) Commit()       { t.z[t.ti] = t.ts; t.g, t.g2 = t.g2, t.g }
func (t *staleProposalTracker) Reset(z []int) { copy(t.z, z); t.m.ProposalGrad(t.g, z) }

type nanModel struct{ twoSpins }

func (nanModel) LogProb(z []int) float64 {
	if z[0] == 1 && z[1] == 1 {
		return math.NaN()
	}
	return 0
}

// The kit must catch each kind of broken model and pass a correct one.
func TestCheckCatchesBrokenModels(t *testing.T) {
	ok := twoSpins{0.4}
	if r := check(ok, Options{Reference: ok.LogProb}); len(r.errors) > 0 {
		t.Fatalf("a correct model failed: %v", r.errors)
	}
	if r := check(relaxedSpins{ok}, Options{}); len(r.errors) > 0 {
		t.Fatalf("a correct relaxed model failed: %v", r.errors)
	}
	if r := check(proposalSpins{ok, 1}, Options{}); len(r.errors) > 0 {
		t.Fatalf("a correct model with a proposal gradient failed: %v", r.errors)
	}
	cases := map[string]struct {
		m   model.Model
		opt Options
	}{
		"wrong reference":   {ok, Options{Reference: func(z []int) float64 { return 0.5 * ok.LogProb(z) }}},
		"wrong conditional": {badConditional{ok}, Options{}},
		"wrong gradient":    {badRelaxed{ok}, Options{}},
		"NaN":               {nanModel{ok}, Options{}},
		"stale gradient":    {staleGradient{relaxedSpins{ok}}, Options{}},
		"inexact proposal":  {proposalSpins{ok, 2}, Options{}},
		"stale proposal":    {staleProposal{proposalSpins{ok, 1}}, Options{}},
	}
	for name, c := range cases {
		if r := check(c.m, c.opt); len(r.errors) == 0 {
			t.Errorf("%s: Check passed a broken model", name)
		}
	}
}
