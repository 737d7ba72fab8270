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
			for _, lower := range []bool{false, true} {
				if lower && sz[0] != sz[1] {
					continue
				}
				oc := newOddCase(r, sz[0], sz[1], sz[2], lower)
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
