package gof

import (
	"context"
	"github.com/dstein/dstein/rng"
	"math/rand/v2"
	"testing"

	"github.com/dstein/dstein/model/ising"
)

// The benchmarks time a whole test at n = 1000, d = 100 (10×10 periodic
// Ising grid at T = 20): the statistic and 1000 bootstrap draws (or
// permutations). The samples are uniform spins; the cost does not depend
// on them.
func benchSetup(b *testing.B) (*ising.Ising, *rand.Rand) {
	m, err := ising.Grid(10, 10, true, 1.0/20, nil)
	if err != nil {
		b.Fatal(err)
	}
	return m, rand.New(rand.NewPCG(1, 1))
}

func BenchmarkGFKSD(b *testing.B) {
	m, r := benchSetup(b)
	s := randomSamples(m, 1000, r)
	for b.Loop() {
		if _, err := GFKSD(context.Background(), m, s, GFKSDSettings{}, Options{B: 1000, Key: rng.NewKey(1)}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDKSD(b *testing.B) {
	m, r := benchSetup(b)
	s := randomSamples(m, 1000, r)
	for b.Loop() {
		if _, err := DKSD(context.Background(), m, s, Options{B: 1000, Key: rng.NewKey(1)}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBKSD(b *testing.B) {
	m, r := benchSetup(b)
	s := randomSamples(m, 1000, r)
	for b.Loop() {
		if _, err := BKSD(context.Background(), m, s, Options{B: 1000, Key: rng.NewKey(1)}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMMD(b *testing.B) {
	m, r := benchSetup(b)
	s, ref := randomSamples(m, 1000, r), randomSamples(m, 1000, r)
	for b.Loop() {
		if _, err := MMD(context.Background(), s, ref, Options{B: 1000, Key: rng.NewKey(1)}); err != nil {
			b.Fatal(err)
		}
	}
}
