package samplertest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	_ "github.com/dstein/dstein/sampler/all"
	"github.com/dstein/dstein/transform"
)

// Cancellation test settings. The step is sized to take about stepTarget
// when nothing cancels it, 12 times cancelAfter, so that it is still
// running when the context is canceled even on a busy machine; the bound
// on the latency is generous for the same reason.
const (
	cancelAfter  = 50 * time.Millisecond
	stepTarget   = 600 * time.Millisecond
	latencyBound = 10 * time.Second
	// probeTimeout bounds the probe step that sizes the problem: a probe
	// canceled by it is already long enough.
	probeTimeout = 300 * time.Millisecond
	// chainBytes bounds the memory of the chains (the method's estimate
	// plus the problem's starting points and states).
	chainBytes = 192 << 20
)

// bigProblem is a model on which one step of a method can be made long,
// by many chains (or, for a one-shot method, by building its exact
// sampler).
type bigProblem struct {
	name string
	m    model.Model
	tr   *transform.Transform
}

// bigProblems returns the candidate models, in the order they are tried: a
// dense ferromagnetic Ising model (every pair of 500 spins coupled, so a
// site update or a log p* costs hundreds of operations, and one model of
// 125,000 edges serves every chain; Swendsen–Wang takes only ferromagnetic
// Ising models, the relaxed methods need the relaxation it has), then an
// RBM with 22 hidden units, whose exact sampler enumerates 2^22 hidden
// configurations (for the exact method, which has no exact sampler for
// the first).
func bigProblems(t *testing.T) []bigProblem {
	t.Helper()
	dense, err := ising.Complete(500, 0.5/500, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := rbm.Random(200, 22, 0.05, 0.5, 3)
	if err != nil {
		t.Fatal(err)
	}
	var out []bigProblem
	for _, c := range []struct {
		name string
		m    model.Model
	}{{"dense ferromagnetic Ising model, 500 spins", dense}, {"RBM, 200 visible and 22 hidden units", r}} {
		tr, err := transform.ForModel(transform.Normal{}, c.m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bigProblem{c.name, c.m, tr})
	}
	return out
}

// build returns meth's sampler on p with n chains and its default
// settings.
func (p bigProblem) build(meth *sampler.Method, n int) (sampler.Sampler, error) {
	set := meth.NewSettings()
	return meth.New(sampler.NewProblem(p.m, p.tr, n, sampler.Init{}, rng.NewKey(5)), set)
}

// maxChains returns the most chains whose memory (the method's estimate,
// which may grow faster than n, plus the problem's starting points and
// states) stays within chainBytes.
func (p bigProblem) maxChains(meth *sampler.Method) int {
	bytes := func(n int) float64 {
		return meth.MemoryOf(p.m, n, meth.NewSettings()) + 16*float64(n)*float64(p.m.Dim())
	}
	lo, hi := 1, 2
	for bytes(hi) <= chainBytes {
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; bytes(mid) <= chainBytes {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// sizeStep finds a problem that meth accepts and the number of chains that
// makes one step take about stepTarget: it probes steps of n0 chains (as
// many as the cores, so that the probe runs in parallel as the real step
// will) under probeTimeout and scales n by the time the fastest of three
// took (the first may pay for page faults, any for a garbage collection),
// within the memory bound; when two time out, n0 chains are enough.
// A problem whose sampler cannot be built, or whose probe fails otherwise
// (the exact method on a model without an exact sampler), is skipped.
func sizeStep(t *testing.T, meth *sampler.Method, problems []bigProblem) (bigProblem, int, error) {
	t.Helper()
	n0 := min(max(2, runtime.GOMAXPROCS(0)), 16)
	var why []string
	for _, p := range problems {
		s, err := p.build(meth, n0)
		if err != nil {
			why = append(why, fmt.Sprintf("%s: %v", p.name, err))
			continue
		}
		took, timeouts := time.Duration(math.MaxInt64), 0
		for range 3 {
			if timeouts == 2 {
				break
			}
			ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
			start := time.Now()
			err = s.Step(ctx)
			cancel()
			if errors.Is(err, context.DeadlineExceeded) {
				// The sampler is spent: probe a new one.
				timeouts++
				if s, err = p.build(meth, n0); err != nil {
					break
				}
				continue
			}
			if err != nil {
				break
			}
			took = min(took, time.Since(start))
		}
		switch {
		case err != nil:
			why = append(why, fmt.Sprintf("%s: %v", p.name, err))
			continue
		case timeouts == 2:
			t.Logf("%s: probes of %d chains still running after %v", p.name, n0, probeTimeout)
			return p, n0, nil
		}
		maxN := max(n0, p.maxChains(meth))
		scale := float64(stepTarget) / float64(max(took, time.Microsecond))
		n := min(maxN, max(n0, int(float64(n0)*scale)))
		t.Logf("%s: a step of %d chains takes %v; %d chains (at most %d by memory)", p.name, n0, took, n, maxN)
		return p, n, nil
	}
	return bigProblem{}, 0, fmt.Errorf("no test problem works for %s (add one to bigProblems): %v", meth.Name, why)
}

// stepCanceled runs Step with a context canceled cancelAfter after the
// start. It returns Step's error, how long after the cancellation Step
// returned (negative: before it), and whether Step returned at all within
// latencyBound of the cancellation.
func stepCanceled(s sampler.Sampler) (err error, latency time.Duration, returned bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	canceledAt := start.Add(cancelAfter)
	timer := time.AfterFunc(cancelAfter, func() {
		canceledAt = time.Now()
		cancel()
	})
	done := make(chan error, 1)
	go func() { done <- s.Step(ctx) }()
	select {
	case err = <-done:
	case <-time.After(cancelAfter + latencyBound):
		return nil, 0, false
	}
	end := time.Now()
	if timer.Stop() {
		return err, end.Sub(canceledAt), true // returned before the cancellation
	}
	<-ctx.Done() // canceledAt is set
	return err, end.Sub(canceledAt), true
}

// Every registered method's Step returns promptly after its context is
// canceled, however long the step: on a problem sized so that one step
// takes about 0.6 s (many chains on a dense Ising model; for the one-shot
// exact method, an exact sampler whose construction enumerates 2^22
// configurations), a context canceled 50 ms into the step must make Step
// return an error that is context.Canceled (nil would mean that the step
// finished first, so it was not long) within 10 s; the latency is logged.
// A step that finished before the cancellation was too short to say
// anything (a probe misled by a busy machine): it is retried with 4 times
// the chains, twice at most. The canceled sampler then keeps its states
// valid (every state index in range) and returns the same error from
// every later Step (the contract of sampler.Sampler).
func TestEveryMethodStopsWhenCanceled(t *testing.T) {
	problems := bigProblems(t)
	for _, meth := range sampler.Methods() {
		t.Run(meth.Name, func(t *testing.T) {
			runtime.GC() // the previous method's chains
			checkStopsWhenCanceled(t, meth, problems)
		})
	}
}

// checkStopsWhenCanceled sizes a step of meth on the first of problems
// that it accepts, cancels it 50 ms in and checks what
// TestEveryMethodStopsWhenCanceled requires.
func checkStopsWhenCanceled(t *testing.T, meth *sampler.Method, problems []bigProblem) {
	t.Helper()
	p, n, err := sizeStep(t, meth, problems)
	if err != nil {
		t.Fatal(err)
	}
	for try := 0; ; try++ {
		s, err := p.build(meth, n)
		if err != nil {
			t.Fatal(err)
		}
		stepErr, latency, returned := stepCanceled(s)
		switch {
		case !returned:
			t.Fatalf("Step of %d chains on the %s still running %v after its context was canceled", n, p.name, latencyBound)
		case latency < 0 && stepErr == nil && try < 2:
			t.Logf("Step of %d chains finished %v before the cancellation; trying %d", n, -latency, 4*n)
			n *= 4
			continue
		case latency < 0 && stepErr == nil:
			t.Fatalf("Step of %d chains on the %s finished %v before the cancellation at %v: the step is too short for this test", n, p.name, -latency, cancelAfter)
		case stepErr == nil:
			t.Fatalf("Step of %d chains on the %s ignored the cancellation: it finished without an error %v after it", n, p.name, latency)
		case !errors.Is(stepErr, context.Canceled):
			t.Fatalf("Step returned %v; want context.Canceled", stepErr)
		}
		t.Logf("%d chains on the %s: Step returned %v after the cancellation", n, p.name, latency)
		checkSpent(t, s, p.m, n)
		return
	}
}

// checkSpent checks what a canceled sampler must keep: valid states, and
// the cancellation as the answer of every later Step.
func checkSpent(t *testing.T, s sampler.Sampler, m model.Model, n int) {
	t.Helper()
	if again := s.Step(context.Background()); !errors.Is(again, context.Canceled) {
		t.Errorf("a Step after the canceled one returned %v; want the cancellation again", again)
	}
	cur := s.Current()
	d := m.Dim()
	if len(cur) != n*d {
		t.Fatalf("Current has %d entries after the cancellation; want %d", len(cur), n*d)
	}
	for k, z := range cur {
		if z < 0 || z >= len(m.States(k%d)) {
			t.Fatalf("after the cancellation, chain %d has state %d for variable %d", k/d, z, k%d)
		}
	}
	_ = s.Stats()
}

// GWG's Step returns promptly after cancellation on a product of 2000
// categorical variables of 4 states with random probabilities (Dirichlet(1)
// for each variable), the model on which it once ran on for more than
// 25 s after the signal: from the default start every proposal there
// rebases the chain's weights twice (gwg.rebase: 8000 exponentials and a
// rebuild of the sum tree; one chain's sweep takes about 0.6 s on the
// project's machine), so the step must look at its context between
// rebases, not only between sweeps. The step is sized and canceled, and
// the result checked, as in TestEveryMethodStopsWhenCanceled.
func TestGWGStopsWhenCanceledOnACategoricalModel(t *testing.T) {
	meth, err := sampler.Lookup("gwg")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(26, 2))
	vars := make([]categorical.Variable, 2000)
	for i := range vars {
		p := make([]float64, 4)
		var sum float64
		for k := range p {
			p[k] = r.ExpFloat64()
			sum += p[k]
		}
		for k := range p {
			p[k] /= sum
		}
		vars[i] = categorical.Variable{States: []float64{0, 1, 2, 3}, Probs: p}
	}
	m, err := categorical.New(vars)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := transform.ForModel(transform.Normal{}, m)
	if err != nil {
		t.Fatal(err)
	}
	checkStopsWhenCanceled(t, meth, []bigProblem{{"product of 2000 categorical variables of 4 states", m, tr}})
}
