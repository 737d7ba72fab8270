//go:build amd64 && !purego

package gemm

import (
	"fmt"
	"testing"

	"github.com/dstein/dstein/rng"
)

// TestBlockingKeepsBits runs the assembly path with other cache blockings
// (several slices of k, several blocks of columns, one-tile chunks) and
// checks the bits against the naive FMA loop.
func TestBlockingKeepsBits(t *testing.T) {
	if !useAsm {
		t.Skip("no AVX2/FMA")
	}
	r := rng.Key{Seed: 6, Stream: 0}.Rand()
	defer func(k, kw, n, m, g int) { kc, kcWide, nc, mcPanels, packGrain = k, kw, n, m, g }(kc, kcWide, nc, mcPanels, packGrain)
	for _, blk := range [][4]int{{256, 1008, 16, 4}, {5, 12, 1, 1}, {64, 48, 3, 2}, {1, 24, 2, 7}, {100, 2040, 64, 100}, {3, 36, 1, 1}} {
		kc, kcWide, nc, mcPanels, packGrain = blk[0], blk[0], blk[1], blk[2], blk[3]
		for _, sz := range [][3]int{{37, 29, 131}, {130, 130, 67}, {9, 101, 300}} {
			for _, lay := range layouts {
				lower, bkn := lay[0], lay[1]
				if lower && sz[0] != sz[1] {
					continue
				}
				oc := newOddCase(r, sz[0], sz[1], sz[2], lower, bkn)
				want := naive(oc.a, oc.b, oc.m, oc.n, oc.k)
				for _, wide := range asmKernels() {
					var got []float64
					withKernel(wide, func() { withAsmAlways(func() { got = oc.run(t) }) })
					sameBits(t, fmt.Sprintf("%s, blocking %v", kernelName(wide), blk), oc, got, want)
				}
			}
		}
	}
}

// TestPackedBKeepsBits checks that products given a PackedB give the bits
// of the unpacked product, with several blockings (several blocks of
// columns and slices of k), whole and in blocks of rows, serial or not;
// packed for one kernel and used with the other, Mul packs B as usual.
func TestPackedBKeepsBits(t *testing.T) {
	if !useAsm {
		t.Skip("no AVX2/FMA")
	}
	r := rng.Key{Seed: 8, Stream: 0}.Rand()
	defer func(k, kw, n, m, g int) { kc, kcWide, nc, mcPanels, packGrain = k, kw, n, m, g }(kc, kcWide, nc, mcPanels, packGrain)
	for _, blk := range [][4]int{{256, 1008, 16, 4}, {5, 12, 1, 1}, {64, 48, 3, 2}} {
		kc, kcWide, nc, mcPanels, packGrain = blk[0], blk[0], blk[1], blk[2], blk[3]
		for _, sz := range [][3]int{{37, 29, 131}, {9, 101, 300}, {100, 25, 100}} {
			m, n, k := sz[0], sz[1], sz[2]
			a, b := normals(r, m*k), normals(r, n*k)
			oc := &oddCase{m: m, n: n, k: k}
			want := naive(a, b, m, n, k)
			for _, packWide := range asmKernels() {
				var pb *PackedB
				withKernel(packWide, func() { pb = PackB(b, n, k, k) })
				if len(pb.blocks) == 0 {
					t.Fatalf("%v: nothing packed", sz)
				}
				for _, wide := range asmKernels() {
					for _, rows := range []int{m, 7} {
						for _, serial := range []bool{true, false} {
							c := make([]float64, m*n)
							withKernel(wide, func() {
								withAsmAlways(func() {
									for lo := 0; lo < m; lo += rows {
										hi := min(lo+rows, m)
										(&ABt{C: c[lo*n:], A: a[lo*k:], B: b, M: hi - lo, N: n, K: k, Ldc: n, Lda: k, Ldb: k, Serial: serial, Packed: pb}).Mul()
									}
								})
							})
							sameBits(t, fmt.Sprintf("packed for %s, %s, blocking %v, rows %d, serial %v", kernelName(packWide), kernelName(wide), blk, rows, serial), oc, c, want)
						}
					}
				}
			}
		}
	}
	// The panels are used: changed, they change the product (with the
	// kernel and blocking they were packed for).
	kc, kcWide, nc, mcPanels, packGrain = 256, 128, 1008, 16, 4
	for _, wide := range asmKernels() {
		a, b := normals(r, 10*100), normals(r, 25*100)
		c := make([]float64, 10*25)
		withKernel(wide, func() {
			pb := PackB(b, 25, 100, 100)
			pb.blocks[0][0]++
			(&ABt{C: c, A: a, B: b, M: 10, N: 25, K: 100, Ldc: 25, Lda: 100, Ldb: 100, Packed: pb}).Mul()
		})
		if want := naive(a, b, 10, 25, 100); c[0] == want[0] {
			t.Fatalf("%s: the packed panels were not used", kernelName(wide))
		}
	}
	// A PackedB of another B is a programming mistake.
	b := normals(r, 25*100)
	pb := PackB(b, 25, 100, 100)
	defer func() {
		if recover() == nil {
			t.Fatal("a PackedB of another B was accepted")
		}
	}()
	c := make([]float64, 10*25)
	(&ABt{C: c, A: normals(r, 10*100), B: append([]float64(nil), b...), M: 10, N: 25, K: 100, Ldc: 25, Lda: 100, Ldb: 100, Packed: pb}).Mul()
}
