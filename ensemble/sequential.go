package ensemble

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dstein/dstein/bnn"
	"github.com/dstein/dstein/rng"
)

// sequential trains the members of the baselines one after another, each
// by Adam ascent on its minibatch log-likelihood scaled by N/B: with the
// straight-through estimator (ste, bagging, benn) or the SignSwish
// derivative and BNN+'s regulariser (bnnplus). Bagging's members see their
// own bootstrap resample of the training data; BENN's see examples drawn by
// the boosting weights of the members before them (boost.go).
type sequential struct {
	t     *trainer
	mode  bnn.Mode
	scale float64 // N/B

	// The current unit: member k's epoch ep, its network, the gradient
	// arrays Adam follows, the example order (or BENN's resampler) and
	// the dropout stream.
	k, ep    int
	net      *bnn.Net
	dirs     [][]float32
	ord      []int
	resample *resampler
	drop     *rand.Rand
}

func newSequential(t *trainer) *sequential {
	q := &sequential{t: t, mode: bnn.STE, scale: float64(t.nTrain) / float64(t.cfg.Batch)}
	if t.cfg.Spec().SignSwish {
		q.mode = bnn.SignSwish
	}
	return q
}

func (q *sequential) begin(u int) error {
	t := q.t
	q.k, q.ep = t.position(u)
	if q.ep == 0 && t.cfg.Spec().Boosted && q.k > 0 && len(t.cp.Alphas) < q.k {
		return fmt.Errorf("internal: boosting weights of member %d missing", q.k)
	}
	q.net = t.nets[q.k]
	q.dirs = paramGrads(q.net)
	q.drop = t.key.ForIndex(rng.Dropout, q.k<<12|q.ep).Rand()
	q.ord, q.resample = nil, nil
	if t.cfg.Spec().Boosted {
		q.resample = newResampler(t.cp.SampleWeights, t.key.ForIndex(rng.Bootstrap, 1<<24|q.k<<12|q.ep).Rand())
	} else {
		q.ord = t.order(q.k, q.ep)
	}
	return nil
}

func (q *sequential) step(s int) (loss, acc float64, err error) {
	t := q.t
	cfg := t.cfg
	B, classes := cfg.Batch, t.train.Classes
	if q.resample != nil {
		q.resample.draw(t.idx)
	} else {
		copy(t.idx, q.ord[s*B:(s+1)*B])
	}
	t.train.Batch(t.idx, t.x, t.y)
	o := bnn.PassOptions{Mode: q.mode, Train: true, SwishBeta: float32(cfg.SwishBeta), Rand: q.drop}
	logits := q.net.Forward(t.x, B, o)
	ll := bnn.LogLik(logits, t.y, classes, q.scale, t.dl)
	loss, acc = batchStats(logits, t.y, classes, ll)
	q.net.Backward(t.dl)
	if cfg.Spec().SignSwish {
		// The regulariser −N·λ·Σ(1 − |w|)² of the objective.
		c := float32(2 * float64(t.nTrain) * *cfg.Regularizer)
		for _, p := range q.net.Params() {
			if !p.Binary {
				continue
			}
			for i, w := range p.W {
				a := float32(math.Abs(float64(w)))
				sg := float32(1)
				if w < 0 {
					sg = -1
				}
				p.G[i] += c * (1 - a) * sg
			}
		}
	}
	gs := q.ep*t.steps + s
	t.adamStep(q.k, q.dirs, t.lr(gs, cfg.Epochs*t.steps), gs+1)
	if err := checkFinite(q.net); err != nil {
		return 0, 0, fmt.Errorf("member %d, epoch %d, step %d: %w", q.k+1, q.ep+1, s+1, err)
	}
	return loss, acc, nil
}

func (q *sequential) end(log *EpochLog) error {
	t := q.t
	probs, err := t.memberTestProbs(q.k)
	if err != nil {
		return err
	}
	log.TestAccuracy = accuracy(probs, t.testLabels(), t.test.Classes)
	if q.ep == t.cfg.Epochs-1 && t.cfg.Spec().Boosted {
		return t.boost(q.k)
	}
	return nil
}

func (q *sequential) describe(log EpochLog) string {
	cfg := q.t.cfg
	return fmt.Sprintf("member %d/%d epoch %d/%d: train loss %.4f, train accuracy %.4f, member test accuracy %.4f (%.1f s)",
		q.k+1, cfg.Ensemble, q.ep+1, cfg.Epochs, log.TrainLoss, log.TrainAccuracy, log.TestAccuracy, log.Seconds)
}

// order returns the example order of member (or particle) k's epoch ep: a
// permutation of the training examples, or of the member's bootstrap
// resample for bagging.
func (t *trainer) order(k, ep int) []int {
	base := make([]int, t.nTrain)
	if t.cfg.Spec().Bootstrap {
		br := t.key.ForIndex(rng.Bootstrap, k).Rand()
		for i := range base {
			base[i] = br.IntN(t.nTrain)
		}
	} else {
		for i := range base {
			base[i] = i
		}
	}
	r := t.key.ForIndex(rng.Order, k<<12|ep).Rand()
	r.Shuffle(len(base), func(i, j int) { base[i], base[j] = base[j], base[i] })
	return base
}

// batchStats returns the mean cross-entropy and the accuracy of logits.
func batchStats(logits []float32, y []uint8, classes int, ll float64) (float64, float64) {
	correct := 0
	for b, lab := range y {
		if argmax(logits[b*classes:(b+1)*classes]) == int(lab) {
			correct++
		}
	}
	return -ll / float64(len(y)), float64(correct) / float64(len(y))
}
