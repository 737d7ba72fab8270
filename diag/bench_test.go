package diag

import (
	"fmt"
	"testing"

	"github.com/dstein/dstein/rng"
)

// BenchmarkSummarize summarises one quantity of AR(1) draws with a reused
// Workspace, the hot path of summarising many quantities: φ = 0.5, whose
// autocorrelations Geyer's sequence needs for a few lags only (plain
// sums), and φ = 0.99, which needs hundreds (the FFT path).
func BenchmarkSummarize(b *testing.B) {
	for _, c := range []struct {
		m, n int
		phi  float64
	}{{4, 1000, 0.5}, {4, 10000, 0.5}, {4, 1000, 0.99}, {4, 10000, 0.99}} {
		chains := ar1(rng.NewKey(7).For(rng.Test).Rand(), c.m, c.n, c.phi)
		b.Run(fmt.Sprintf("%dx%d/phi=%v", c.m, c.n, c.phi), func(b *testing.B) {
			var w Workspace
			if _, err := w.Summarize(chains); err != nil { // warm: buffers, scores, FFT
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := w.Summarize(chains); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSummarizePooled is the package-level Summarize (pooled
// workspaces) at 4 chains of 1000 draws.
func BenchmarkSummarizePooled(b *testing.B) {
	chains := ar1(rng.NewKey(7).For(rng.Test).Rand(), 4, 1000, 0.5)
	if _, err := Summarize(chains); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Summarize(chains); err != nil {
			b.Fatal(err)
		}
	}
}
