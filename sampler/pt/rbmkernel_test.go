package pt

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dstein/dstein/sampler/gibbs"
)

// drawSpins gives the spins of gibbs.Threshold unit by unit, on
// preactivations of every size (math.Exp's special branches beyond
// ±354 included), at several β, across its blocks.
func TestDrawSpinsMatchesThreshold(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{0, 1, 7, 63, 64, 65, 300} {
		l, w := make([]float64, n), make([]uint64, n)
		for i := range l {
			l[i] = []float64{r.NormFloat64(), 400 * r.NormFloat64(), 0, math.Inf(1)}[r.IntN(4)]
			w[i] = r.Uint64()
		}
		for _, beta := range []float64{1, 0.37, 0} {
			s := make([]float64, n)
			drawSpins(s, l, beta, w)
			for i := range l {
				want := -1.0
				if w[i] < gibbs.Threshold(beta*l[i]) {
					want = 1
				}
				if s[i] != want {
					t.Fatalf("n %d, β %v, unit %d (l = %v): spin %v, want %v", n, beta, i, l[i], s[i], want)
				}
			}
		}
	}
}
