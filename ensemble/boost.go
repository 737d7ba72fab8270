package ensemble

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/dstein/dstein/bnn"
)

// BENN-style boosting (SAMME, Zhu et al. 2009): member k trains on examples
// drawn with replacement by the sample weights the members before it left;
// after its last epoch its weighted training error err gives its vote
// α_k = log((1 − err)/err) + log(K − 1), and the weights of the examples it
// misclassifies grow by e^α_k.

// resampler draws example indices in proportion to sample weights.
type resampler struct {
	cum []float64 // cumulative weights
	r   *rand.Rand
}

func newResampler(weights []float64, r *rand.Rand) *resampler {
	cum := make([]float64, len(weights))
	acc := 0.0
	for i, w := range weights {
		acc += w
		cum[i] = acc
	}
	return &resampler{cum: cum, r: r}
}

// draw fills idx with independent draws.
func (s *resampler) draw(idx []int) {
	n := len(s.cum)
	for b := range idx {
		u := s.r.Float64() * s.cum[n-1]
		idx[b] = min(sort.SearchFloat64s(s.cum, u), n-1)
	}
}

// boost updates the SAMME sample weights after member k and records its
// coefficient α_k = log((1 − err)/err) + log(K − 1).
func (t *trainer) boost(k int) error {
	net := t.nets[k]
	classes := t.train.Classes
	miss := make([]bool, t.nTrain)
	const eb = evalBatch
	idx := make([]int, 0, eb)
	x := make([]float32, eb*t.train.Size())
	y := make([]uint8, eb)
	for lo := 0; lo < t.nTrain; lo += eb {
		hi := min(lo+eb, t.nTrain)
		idx = idx[:0]
		for i := lo; i < hi; i++ {
			idx = append(idx, i)
		}
		t.train.Batch(idx, x, y)
		logits := net.Forward(x, len(idx), bnn.PassOptions{Mode: bnn.STE})
		for b := range idx {
			miss[lo+b] = argmax(logits[b*classes:(b+1)*classes]) != int(y[b])
		}
	}
	var errW, tot float64
	for i, w := range t.cp.SampleWeights {
		tot += w
		if miss[i] {
			errW += w
		}
	}
	e := errW / tot
	e = min(max(e, 1e-10), 1-1e-10)
	alpha := math.Log((1-e)/e) + math.Log(float64(classes-1))
	if alpha < 0 {
		alpha = 0 // worse than chance on the weighted data: no vote
	}
	t.cp.Alphas = append(t.cp.Alphas, alpha)
	tot = 0
	for i := range t.cp.SampleWeights {
		if miss[i] {
			t.cp.SampleWeights[i] *= math.Exp(alpha)
		}
		tot += t.cp.SampleWeights[i]
	}
	for i := range t.cp.SampleWeights {
		t.cp.SampleWeights[i] /= tot
	}
	t.logf("boosting: member %d weighted training error %.4f, α = %.3f", k+1, e, alpha)
	return nil
}
