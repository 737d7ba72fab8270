package mh

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dstein/dstein/optim"
)

// accepter is a toy task: every chain accepts its proposal when its
// acceptance probability p[c] ≥ 0.5.
type accepter struct {
	chains []Chain
	p      []float64
	fail   int // chain that fails at the third step (−1: none)
	steps  int
}

func (a *accepter) Do(lo, hi int) {
	for c := lo; c < hi; c++ {
		if a.p[c] >= 0.5 {
			a.chains[c].Accepted++
		}
		if c == a.fail && a.steps == 2 {
			a.chains[c].Err = errors.New("bad state")
		}
	}
}

func newAccepter(n int) (*accepter, Set) {
	a := &accepter{chains: make([]Chain, n), p: make([]float64, n), fail: -1}
	set := make(Set, n)
	for c := range set {
		set[c] = &a.chains[c]
		a.p[c] = float64(c) / float64(n-1) // mean 0.5
	}
	return a, set
}

// TestStepsAdapt: the recursion sees the chains' mean acceptance
// probability at each adaptive step, its value is handed back only then,
// and the statistics count the acceptances after the adaptation.
func TestStepsAdapt(t *testing.T) {
	a, set := newAccepter(5)
	s := Steps{Pkg: "toy", Set: set, Adapt: 4, Ctx: context.Background(),
		Ad: optim.Averaged{X: 1, Gain: 1, Target: 0.25, Lo: -10, Hi: 10, Steps: 4}}
	var got []float64
	for k := range 6 {
		if s.Tuning() != (k < 4) {
			t.Fatalf("step %d: Tuning %v", k, s.Tuning())
		}
		u, adapted, err := s.Step(context.Background(), a, func(c int) float64 { return a.p[c] })
		a.steps++
		if err != nil {
			t.Fatal(err)
		}
		if adapted != (k < 4) {
			t.Fatalf("step %d: adapted %v", k, adapted)
		}
		if adapted {
			got = append(got, u)
		}
	}
	// X rises by 0.5 − 0.25 a step: 1.25, 1.5, then the average of the
	// values steps 3 and 4 ran with (1.5 and 1.75).
	want := []float64{1.25, 1.5, 1.75, 1.625}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("adapted values %v, want %v", got, want)
		}
	}
	st := s.Stats("size", 1.625)
	// 3 of 5 chains accept (p = 0.5, 0.75, 1) at every step; after the
	// adaptation 2 steps of 5 chains.
	vals := map[string]float64{}
	for _, v := range st.Values {
		vals[v.Name] = v.Value
	}
	if vals["acceptance_rate"] != 0.6 || vals["tuned_acceptance_rate"] != 0.6 || vals["size"] != 1.625 || s.Done != 6 {
		t.Errorf("stats %v after %d steps", vals, s.Done)
	}
}

// TestStepsStop: a chain's error and a cancellation stop the loop for
// good, the error naming the sampler and the chain.
func TestStepsStop(t *testing.T) {
	a, set := newAccepter(3)
	a.fail = 1
	s := Steps{Pkg: "toy", Set: set, Ctx: context.Background()}
	var err error
	for range 3 {
		_, _, err = s.Step(context.Background(), a, func(int) float64 { return 0 })
		a.steps++
	}
	if err == nil || !strings.Contains(err.Error(), "toy: chain 1: bad state") {
		t.Fatalf("chain error: %v", err)
	}
	if _, _, again := s.Step(context.Background(), a, func(int) float64 { return 0 }); again != err || s.Done != 2 {
		t.Errorf("after the error: %v, %d steps", again, s.Done)
	}
	b, set2 := newAccepter(2)
	s2 := Steps{Pkg: "toy", Set: set2, Ctx: context.Background()}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := s2.Step(ctx, b, func(int) float64 { return 0 }); !errors.Is(err, context.Canceled) || s2.Done != 0 {
		t.Errorf("canceled: %v, %d steps", err, s2.Done)
	}
	if s2.Ctx.Err() != nil {
		t.Error("the context of a stopped step was left in place")
	}
}
