package gpu

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/sampler/samplertest"
	"github.com/dstein/dstein/transform"
)

// TestGibbsMatchesExact is the conformance test of the GPU's Gibbs
// kernels: the final states of n independent chains, run through the
// registry as dstein sample runs them, against exact marginals by
// enumeration (samplertest.CheckMarginals: each state's frequency within
// 5 binomial standard errors). Models: an open 3×3 Ising grid with fields
// (two colours), a 3×3 torus (odd sides: three colours), a 3-state Potts
// model on a 2×3 torus with per-state fields (the grid, the Potts model
// and the RBM are samplertest.SmallModels'), independent categorical
// variables of 2, 3, 5 and 4 states (one state impossible, another at
// 0.95), and RBMs with 8 visible and 3 hidden units in float64 and
// float32; and targets the kernels were not written on (otherTargets).
func TestGibbsMatchesExact(t *testing.T) {
	testDevice(t)
	small := samplertest.SmallModels(t)
	open, pt, r := small["ising"], small["potts"], small["rbm"]
	torus, err := ising.Grid(3, 3, true, -0.3, []float64{0.3, -0.2, 0.1, 0, 0.5, -0.4, 0.2, 0.1, -0.3})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := categorical.New([]categorical.Variable{
		{States: []float64{0, 1}, Probs: []float64{0.3, 0.7}},
		{States: []float64{0, 1, 2}, Probs: []float64{0.5, 0, 0.5}},
		{States: []float64{0, 1, 2, 3, 4}, Probs: []float64{0.01, 0.95, 0.01, 0.02, 0.01}},
		{States: []float64{0, 1, 2, 3}, Probs: []float64{0.1, 0.2, 0.3, 0.4}},
	})
	if err != nil {
		t.Fatal(err)
	}
	others := otherTargets(t)
	const n, sweeps = 20000, 60
	for _, c := range []struct {
		name string
		m    model.Model
		set  gibbs.Settings
	}{
		{"ising grid", open, gibbs.Settings{Device: sampler.CUDA}},
		{"ising torus", torus, gibbs.Settings{Device: sampler.CUDA}},
		{"potts torus", pt, gibbs.Settings{Device: sampler.CUDA}},
		{"categorical", cat, gibbs.Settings{Device: sampler.CUDA}},
		{"categorical, the kit's", small["categorical"], gibbs.Settings{Device: sampler.CUDA}},
		{"rbm", r, gibbs.Settings{Device: sampler.CUDA}},
		{"rbm float32", r, gibbs.Settings{Device: sampler.CUDA, Precision: sampler.Float32}},
		{"ising complete", others.complete, gibbs.Settings{Device: sampler.CUDA}},
		{"potts 5 states", others.potts5, gibbs.Settings{Device: sampler.CUDA}},
		{"rbm {0,1}", others.binary, gibbs.Settings{Device: sampler.CUDA}},
	} {
		t.Run(c.name, func(t *testing.T) {
			set := c.set
			s := samplertest.Run(t, "gibbs", &set, c.m, n, sweeps, 11)
			worst := samplertest.CheckMarginals(t, c.name, c.m, s, 0)
			t.Logf("largest error %.2f standard errors", worst)
		})
	}
}

// TestGibbsColouring: a grid of even sides, or an open one, takes two
// colours (the checkerboard); a torus of odd sides, which has odd cycles,
// at most five (greedy colouring: at most the degree plus one; four on the
// 3×3 torus, whose optimum is three); no two neighbours share a colour.
func TestGibbsColouring(t *testing.T) {
	for _, c := range []struct {
		rows, cols int
		periodic   bool
		want       int
	}{{4, 6, true, 2}, {3, 3, true, 4}, {5, 7, false, 2}} {
		m, err := ising.Grid(c.rows, c.cols, c.periodic, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		classes := colouring(m, m.Dim())
		if len(classes) != c.want {
			t.Errorf("%d×%d periodic %v: %d colours, want %d", c.rows, c.cols, c.periodic, len(classes), c.want)
		}
		col := map[int32]int{}
		for k, cl := range classes {
			for _, i := range cl {
				col[i] = k
			}
		}
		for i := range m.Dim() {
			nb, _ := m.Neighbors(i)
			for _, j := range nb {
				if col[int32(i)] == col[int32(j)] {
					t.Errorf("%d×%d: neighbours %d and %d share colour %d", c.rows, c.cols, i, j, col[int32(i)])
				}
			}
		}
	}
}

// TestGibbsReproducible: the same key gives the same chains, another key
// others; a canceled context stops a sweep before it starts.
func TestGibbsReproducible(t *testing.T) {
	dev := testDevice(t)
	m, err := ising.Grid(4, 4, true, 0.3, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := func(seed uint64) []int {
		p := rbmLikeProblem(m, 50, seed)
		g, err := NewGibbs(dev, p, gibbs.Settings{Device: sampler.CUDA})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		for range 5 {
			if err := g.Step(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		return append([]int(nil), g.Current()...)
	}
	a, b, c := run(1), run(1), run(2)
	same := func(x, y []int) bool {
		for k := range x {
			if x[k] != y[k] {
				return false
			}
		}
		return true
	}
	if !same(a, b) || same(a, c) {
		t.Errorf("seed 1 twice the same: %v; seeds 1 and 2 the same: %v", same(a, b), same(a, c))
	}
	g, err := NewGibbs(dev, rbmLikeProblem(m, 10, 1), gibbs.Settings{Device: sampler.CUDA})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.Step(ctx); err == nil || g.Stats().Evaluations != 0 {
		t.Errorf("a canceled sweep: %v, %d evaluations", err, g.Stats().Evaluations)
	}
	if _, err := NewGibbs(dev, rbmLikeProblem(m, 10, 1), gibbs.Settings{Device: sampler.CUDA, MultiSpin: true}); err == nil || !strings.Contains(err.Error(), "multi-spin") {
		t.Errorf("multi-spin on the GPU: %v", err)
	}
}

// rbmLikeProblem is n chains of m started at state 0 with the key of seed.
func rbmLikeProblem(m model.Model, n int, seed uint64) *sampler.Problem {
	tr, err := transform.ForModel(transform.Normal{}, m)
	if err != nil {
		panic(err)
	}
	return &sampler.Problem{Model: m, N: n, Z: make([]int, n*m.Dim()), Transform: tr, Key: rng.NewKey(seed)}
}

// TestPhilox checks gibbs.cu's Philox4x32-10 against the known-answer
// vectors of Random123 (Salmon et al.'s reference: counters 0 and all
// ones under keys 0 and all ones, and the digits of π), compiled for the
// host with the C++ compiler (skipped without one).
func TestPhilox(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no C++ compiler")
	}
	dir := t.TempDir()
	src := `#include <cstdio>
#include <math.h>
#define __device__
#define __forceinline__ inline
#define __global__
struct emu_dim3 { unsigned x, y, z; };
static emu_dim3 threadIdx, blockIdx, blockDim, gridDim;
#define DSTEIN_F32 0
#include "gibbs.cu"
int main() {
	unsigned v[3][6] = {{0, 0, 0, 0, 0, 0}, {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
		{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0}};
	for (int k = 0; k < 3; k++) {
		philox(v[k], v[k][4], v[k][5]);
		printf("%08x %08x %08x %08x\n", v[k][0], v[k][1], v[k][2], v[k][3]);
	}
}
`
	os.WriteFile(filepath.Join(dir, "gibbs.cu"), []byte(gibbsSource), 0o644)
	os.WriteFile(filepath.Join(dir, "kat.cpp"), []byte(src), 0o644)
	bin := filepath.Join(dir, "kat")
	if out, err := exec.Command(cxx, "-o", bin, filepath.Join(dir, "kat.cpp")).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "6627e8d5 e169c58d bc57ac4c 9b00dbd8\n408f276d 41c83b0e a20bc7c6 6d5451fd\nd16cfe09 94fdcceb 5001e420 24126ea1\n"
	if string(out) != want {
		t.Errorf("Philox4x32-10:\n%s\nwant\n%s", out, want)
	}
}

// TestGibbsReadFailure: a copy of the chains that fails (here from a null
// device address, which the stand-in driver refuses as the real one does)
// leaves the last states read, and Err, the next Step and the run loop
// report it instead of results.
func TestGibbsReadFailure(t *testing.T) {
	dev := testDevice(t)
	m, err := ising.Grid(3, 3, false, 0.3, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGibbs(dev, rbmLikeProblem(m, 5, 1), gibbs.Settings{Device: sampler.CUDA})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	saved := g.states
	g.states = 0
	g.Current()
	g.states = saved
	if err := g.Err(); err == nil || !strings.Contains(err.Error(), "reading the chains") {
		t.Errorf("Err after a failed read: %v", err)
	}
	if err := g.Step(context.Background()); err != g.Err() {
		t.Errorf("Step after a failed read: %v", err)
	}
}

// otherTargets are models the GPU kernels were not written on: an Ising
// model on the complete graph of 7 spins with mixed couplings (no grid:
// the colouring gives each spin its own colour), a 5-state Potts model on
// a 2×2 torus whose first variable is nearly deterministic (a field of 6
// on its state 0: P ≈ 0.99), and an RBM read with {0, 1} units.
func otherTargets(t *testing.T) (m struct{ complete, potts5, binary model.Model }) {
	t.Helper()
	var edges []ising.Edge
	for i := range 7 {
		for j := i + 1; j < 7; j++ {
			edges = append(edges, ising.Edge{I: i, J: j, Coupling: 0.25 * float64((i+2*j)%3-1)})
		}
	}
	c, err := ising.New(7, edges, []float64{0.4, -0.3, 0.2, 0, 0.1, -0.5, 0.3})
	if err != nil {
		t.Fatal(err)
	}
	f := make([]float64, 4*5)
	f[0] = 6
	for k := 5; k < len(f); k++ {
		f[k] = 0.3 * float64(k%4-1)
	}
	p, err := potts.Grid(2, 2, true, 5, 0.6, f)
	if err != nil {
		t.Fatal(err)
	}
	W, b, cb, err := rbm.RandomParams(7, 3, 0.8, 0.7, 21)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := rbm.NewBinary(W, b, cb)
	if err != nil {
		t.Fatal(err)
	}
	m.complete, m.potts5, m.binary = c, p, bin
	return m
}
