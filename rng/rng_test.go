package rng

import "testing"

func TestStreams(t *testing.T) {
	a, b := New(7, 1), New(7, 1)
	for range 100 {
		if a.Uint64() != b.Uint64() {
			t.Fatal("the same (seed, stream) gave different sequences")
		}
	}
	pairs := [][2]uint64{{7, 2}, {8, 1}, {0, 0}}
	first := New(7, 1).Uint64()
	for _, p := range pairs {
		if New(p[0], p[1]).Uint64() == first {
			t.Errorf("(seed %d, stream %d) repeats (7, 1)", p[0], p[1])
		}
	}
	if Trial(StreamSample, 3) == Trial(StreamSample, 4) || Trial(StreamInit, 3) == Trial(StreamSample, 3) {
		t.Error("trial streams collide")
	}
}
