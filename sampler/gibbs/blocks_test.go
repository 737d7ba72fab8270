package gibbs

import (
	"context"
	"os"
	"testing"

	"github.com/dstein/dstein/model/bif"
	"github.com/dstein/dstein/model/factorgraph"
)

// network reads a Bayesian network shipped with the BIF reader's tests.
func network(tb testing.TB, name string) *factorgraph.Graph {
	tb.Helper()
	f, err := os.Open("../../model/bif/testdata/" + name + ".bif")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	g, _, err := bif.Read(f)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// TestBlockSweepsDoNotAllocate: a sweep with joint block updates (alarm:
// one block; insurance: 15 blocks, one a sweep) allocates nothing once
// warm. 50 runs: AllocsPerRun truncates the mean, so a one-off refill of
// the worker pool's batches reads 0 and an allocation in every step at
// least 1.
func TestBlockSweepsDoNotAllocate(t *testing.T) {
	for _, name := range []string{"alarm", "insurance"} {
		g := network(t, name)
		s := newSampler(t, g, 8, Settings{}, 1)
		if s.blocks == nil {
			t.Fatalf("%s: no blocks", name)
		}
		ctx := context.Background()
		for range 3 {
			s.Step(ctx)
		}
		if a := testing.AllocsPerRun(50, func() { s.Step(ctx) }); a != 0 {
			t.Errorf("%s: a step allocates %v times", name, a)
		}
	}
}

// BenchmarkNetworkSweep measures sweeps of 100 chains on bnlearn's alarm
// (37 variables, one block of three) and insurance (27 variables, 15
// blocks, one a sweep), block updates included.
func BenchmarkNetworkSweep(b *testing.B) {
	ctx := context.Background()
	for _, name := range []string{"alarm", "insurance"} {
		b.Run(name, func(b *testing.B) {
			s := newSampler(b, network(b, name), 100, Settings{}, 1)
			b.ReportAllocs()
			for b.Loop() {
				s.Step(ctx)
			}
		})
	}
}
