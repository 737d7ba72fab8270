package ensemble

import (
	"github.com/dstein/dstein/bnn"
	"math"
)

// argmax returns the index of the largest entry (the first of equals).
func argmax[T float32 | float64](row []T) int {
	best := 0
	for k := range row {
		if row[k] > row[best] {
			best = k
		}
	}
	return best
}

func (t *trainer) nTest() int {
	if t.cfg.TestLimit > 0 && t.cfg.TestLimit < t.test.N {
		return t.cfg.TestLimit
	}
	return t.test.N
}

func (t *trainer) testLabels() []uint8 { return t.test.Labels[:t.nTest()] }

// memberTestProbs computes (and keeps) member k's class probabilities on
// the test set with binary weights and activations. It stops between
// evaluation batches once the step's context is canceled, with
// t.ctx.Err() and the probabilities unfinished (evaluating a large network
// on the test set takes seconds: a Ctrl-C there ran out the grace period).
func (t *trainer) memberTestProbs(k int) ([]float64, error) {
	if t.testProbs == nil {
		t.testProbs = make([][]float64, t.cfg.Ensemble)
	}
	classes := t.test.Classes
	nt := t.nTest()
	probs := make([]float64, nt*classes)
	const eb = evalBatch
	idx := make([]int, 0, eb)
	x := make([]float32, eb*t.test.Size())
	y := make([]uint8, eb)
	for lo := 0; lo < nt; lo += eb {
		if t.ctx != nil && t.ctx.Err() != nil {
			return nil, t.ctx.Err()
		}
		hi := min(lo+eb, nt)
		idx = idx[:0]
		for i := lo; i < hi; i++ {
			idx = append(idx, i)
		}
		t.test.Batch(idx, x, y)
		logits := t.nets[k].Forward(x, len(idx), bnn.PassOptions{Mode: bnn.STE})
		bnn.Softmax(logits, classes, probs[lo*classes:hi*classes])
	}
	t.testProbs[k] = probs
	return probs, nil
}

// averageProbs averages the first m members' probabilities, weighted by
// alphas when not nil.
func (t *trainer) averageProbs(m int, alphas []float64) []float64 {
	out := make([]float64, len(t.testProbs[0]))
	var tot float64
	for k := range m {
		w := 1.0
		if alphas != nil {
			w = alphas[k]
		}
		tot += w
		for i, p := range t.testProbs[k] {
			out[i] += w * p
		}
	}
	if tot > 0 {
		for i := range out {
			out[i] /= tot
		}
	}
	return out
}

func accuracy(probs []float64, labels []uint8, classes int) float64 {
	correct := 0
	for b, y := range labels {
		if argmax(probs[b*classes:(b+1)*classes]) == int(y) {
			correct++
		}
	}
	return float64(correct) / float64(len(labels))
}

// result gathers the accuracies of the members, of every prefix of the
// ensemble and of the whole, and the digest of the weights.
func (t *trainer) result() (*Result, error) {
	cfg := t.cfg
	res := &Result{Config: cfg, NumBinary: t.nets[0].NumBinary(), History: t.cp.History, Seconds: t.cp.Seconds}
	labels := t.testLabels()
	for k := range cfg.Ensemble {
		if t.testProbs == nil || t.testProbs[k] == nil {
			if _, err := t.memberTestProbs(k); err != nil {
				return nil, err
			}
		}
		res.MemberAccuracy = append(res.MemberAccuracy, accuracy(t.testProbs[k], labels, t.test.Classes))
	}
	var alphas []float64
	if cfg.Spec().Boosted {
		alphas = t.cp.Alphas
		res.Alphas = alphas
	}
	for m := 1; m <= cfg.Ensemble; m++ {
		res.PrefixAccuracy = append(res.PrefixAccuracy, accuracy(t.averageProbs(m, alphas), labels, t.test.Classes))
	}
	res.EnsembleAccuracy = res.PrefixAccuracy[cfg.Ensemble-1]
	res.TestImages = len(labels)
	res.InputMean, res.InputStd = t.cp.InputMean, t.cp.InputStd
	a := res.EnsembleAccuracy
	res.EnsembleAccuracySE = math.Sqrt(a * (1 - a) / float64(len(labels)))
	res.WeightsSHA256 = digest(t.nets)
	if res.Seconds > 0 {
		res.ExamplesPerSecond = float64(cfg.Epochs*t.steps*cfg.Batch) * float64(cfg.Ensemble) / res.Seconds
	}
	return res, nil
}
