package pt

import (
	"runtime"
	"slices"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/samplertest"
)

// The replicas swept in parallel (replicas.go) draw exactly what the
// chain-by-chain path draws: the same states, ladders and statistics
// after every iteration, on 1, 2 and 8 cores, for block Gibbs of an RBM,
// the spin kernel's site sweeps, and both while the auto ladder's pilot
// sweeps its shadow replica, sizes the ladder and probes plain chains
// (the kernels whose sweeps take a fixed number of uniform words).
func TestReplicaSweepsDrawWhatChainSweepsDraw(t *testing.T) {
	grid, err := ising.Grid(4, 4, false, 0.5, []float64{0.1, -0.2, 0, 0.3, 0, 0, 0.1, -0.1, 0.2, 0, 0, 0.1, -0.3, 0, 0.2, 0})
	if err != nil {
		t.Fatal(err)
	}
	strong, err := ising.Grid(4, 4, true, 0.9, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := rbm.Random(10, 4, 0.8, 0.3, 2)
	if err != nil {
		t.Fatal(err)
	}
	pottsGrid, err := potts.Grid(3, 3, true, 3, 0.8, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		m    model.Model
		set  Settings
	}{
		{"rbm block", r, Settings{Kernel: Block, Tune: 10}},
		{"ising site", grid, Settings{Tune: 10}},
		{"ising site, auto ladder", strong, Settings{Auto: true, Tune: 40}},
		{"rbm block, auto ladder", r, Settings{Auto: true, Kernel: Block, Tune: 40}},
		{"rbm site (trackers)", r, Settings{Tune: 10}},
		{"potts site (trackers), auto ladder", pottsGrid, Settings{Auto: true, Tune: 40}},
		{"factor graph (trackers)", samplertest.SmallModels(t)["factorgraph"], Settings{Tune: 10}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if newS(t, c.m, 6, c.set, 5).fixedDraws() == 0 {
				t.Fatal("the kernel takes no fixed number of words: the test checks nothing")
			}
			shadowed := false
			for _, procs := range []int{1, 2, 16} {
				old := runtime.GOMAXPROCS(procs)
				got := newS(t, c.m, 6, c.set, 5)
				got.path = byReplicaAlways
				ref := newS(t, c.m, 6, c.set, 5)
				ref.path = byChain
				for it := range 150 {
					shadowed = shadowed || got.shadow == 1
					run(t, got, 1)
					run(t, ref, 1)
					if !slices.Equal(got.Current(), ref.Current()) || !slices.Equal(got.Ladder(), ref.Ladder()) || !sameStats(got.Stats(), ref.Stats()) {
						t.Fatalf("%d cores, iteration %d: the parallel replicas' states, ladder or statistics differ from the chain-by-chain path's", procs, it)
					}
				}
				runtime.GOMAXPROCS(old)
			}
			if c.set.Auto && !shadowed {
				t.Error("the pilot's shadow replica never ran")
			}
		})
	}
}

// unitFloat turns a word into what Rand.Float64 makes of it, so that the
// trackers' sweeps draw what they drew from the stream before.
func TestUnitFloat(t *testing.T) {
	a, b := rng.NewKey(3).Rand(), rng.NewKey(3).Rand()
	for i := range 10000 {
		if x, y := a.Float64(), unitFloat(b.Uint64()); x != y {
			t.Fatalf("draw %d: Float64 %v, unitFloat %v", i, x, y)
		}
	}
}

func sameStats(a, b sampler.Stats) bool {
	return a.Evaluations == b.Evaluations && slices.Equal(a.Values, b.Values)
}
