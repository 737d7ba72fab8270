package rng

import "testing"

func TestStreams(t *testing.T) {
	a, b := NewKey(7).For(Init).Rand(), NewKey(7).For(Init).Rand()
	for range 100 {
		if a.Uint64() != b.Uint64() {
			t.Fatal("the same key gave different sequences")
		}
	}
	first := NewKey(7).For(Init).Rand().Uint64()
	for _, k := range []Key{NewKey(7).For(Model), NewKey(8).For(Init), NewKey(0), NewKey(7).ForIndex(Init, 0), NewKey(7).Split(0)} {
		if k.Rand().Uint64() == first {
			t.Errorf("%v repeats 7/1", k)
		}
	}
	if NewKey(7).ForIndex(Sample, 3) == NewKey(7).ForIndex(Sample, 4) || NewKey(7).ForIndex(Init, 3) == NewKey(7).ForIndex(Sample, 3) {
		t.Error("indexed streams collide")
	}
}

// The streams that published results were drawn from must never change:
// (seed, purpose) and (seed, purpose<<32 | index) as the first round wrote
// them, and the experiments' SplitMix64 trial seeds.
func TestFrozenDerivations(t *testing.T) {
	k := NewKey(42)
	if got := k.For(Sample); got != (Key{42, 3}) {
		t.Errorf("For(Sample) = %v", got)
	}
	if got := k.ForIndex(Sample, 5); got != (Key{42, 3<<32 | 5}) {
		t.Errorf("ForIndex(Sample, 5) = %v", got)
	}
	// The trial seed the first round's experiments derived.
	trial := func(seed uint64, t int) uint64 {
		z := seed ^ (uint64(t)+1)*0x9e3779b97f4a7c15
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		return z ^ (z >> 31)
	}
	for _, tr := range []int{0, 1, 199} {
		if got := k.Split(tr); got != (Key{trial(42, tr), 0}) {
			t.Errorf("Split(%d) = %v, want %d/0", tr, got, trial(42, tr))
		}
	}
	// A non-root key derives from its own root, not from its seed alone.
	a, b := Key{42, 9}, Key{42, 10}
	if a.For(Init) == b.For(Init) || a.Split(0) == b.Split(0) {
		t.Error("keys with one seed and different streams derive the same streams")
	}
	if a.Root().Stream != 0 || k.Root() != k {
		t.Error("Root is wrong")
	}
}
