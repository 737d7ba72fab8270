package ensemble

import (
	"fmt"
	"math/rand/v2"

	"github.com/dstein/dstein/bnn"
	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/svgd"
)

// gfsvgd trains all networks together as the particles of GF-SVGD (the
// paper's appendix algorithm). In each step, particle j's binarized network
// gives log p_c (up to p0 and a constant) and its relaxed network at the
// step's temperature gives log ρ and its gradient, both on the particle's
// minibatch with the same dropout masks; the log ratios log μ_j = log ρ/p_c
// become weights (svgd.Weights), and the binary latent weights w move along
//
//	Δw_i = Σ_j γ_j [k(w_j, w_i) (∇log ρ(w_j) − w_j) + ∇_{w_j} k(w_j, w_i)]
//
// (svgd.Direction, RBF kernel, prior p0 = N(0, I)), with Adam; the batch
// normalisation parameters move along their own gradient of log ρ.
type gfsvgd struct {
	t     *trainer
	n, d  int
	scale float64 // N/B
	kind  svgd.Weighting
	bw    kernel.Bandwidth

	// x are the particles' latent binary weights, s their scores
	// ∇log ρ − w and dst the direction, each row-major n×d.
	x, s, dst []float32
	logMu, w  []float64
	rank      []int
	dir       *svgd.Direction[float32]
	h         float64 // the bandwidth of the last step
	// dirs[j][i] is the direction of parameter i of particle j: a row slice
	// of dst for binary parameters, the gradient otherwise.
	dirs [][][]float32

	// The unit's example orders and dropout streams, per particle.
	ords  [][]int
	drops []*rand.Rand

	// Sums over the unit's steps of the diagnostics.
	repSum, koffSum, essSum, rankESSSum float64
}

func newGFSVGD(t *trainer) *gfsvgd {
	n, d := len(t.nets), t.nets[0].NumBinary()
	g := &gfsvgd{t: t, n: n, d: d, scale: float64(t.nTrain) / float64(t.cfg.Batch), kind: t.cfg.weighting(),
		x: make([]float32, n*d), s: make([]float32, n*d), dst: make([]float32, n*d),
		logMu: make([]float64, n), w: make([]float64, n), rank: make([]int, n),
		dir: svgd.New[float32](n, d, svgd.RBF), ords: make([][]int, n), drops: make([]*rand.Rand, n)}
	g.bw, _ = t.cfg.bandwidth() // validated
	g.dir.Diagnose = true
	for j, net := range t.nets {
		dirs := paramGrads(net)
		o := j * d
		for i, p := range net.Params() {
			if p.Binary {
				dirs[i] = g.dst[o : o+len(p.W) : o+len(p.W)]
				o += len(p.W)
			}
		}
		g.dirs = append(g.dirs, dirs)
	}
	return g
}

func (g *gfsvgd) begin(ep int) error {
	for j := range g.n {
		g.ords[j] = g.t.order(j, ep)
		g.drops[j] = g.t.key.ForIndex(rng.Dropout, j<<12|ep).Rand()
	}
	g.repSum, g.koffSum, g.essSum, g.rankESSSum = 0, 0, 0, 0
	return nil
}

func (g *gfsvgd) step(s int) (loss, acc float64, err error) {
	t := g.t
	cfg := t.cfg
	ep := t.unit
	B, classes, d := cfg.Batch, t.train.Classes, g.d
	tau := t.temperature(ep*t.steps+s, cfg.Epochs*t.steps)
	for j, net := range t.nets {
		copy(t.idx, g.ords[j][s*B:(s+1)*B])
		t.train.Batch(t.idx, t.x, t.y)
		// log p_c up to p0 and a constant: the binarized network. This pass
		// draws the step's dropout masks.
		logits := net.Forward(t.x, B, bnn.PassOptions{Mode: bnn.STE, Train: true, Rand: g.drops[j]})
		llBin := bnn.LogLik(logits, t.y, classes, 0, nil)
		l, a := batchStats(logits, t.y, classes, llBin)
		loss += l / float64(g.n)
		acc += a / float64(g.n)
		// log ρ and its gradient: the relaxed network on the same batch
		// with the same masks.
		logits = net.Forward(t.x, B, bnn.PassOptions{Mode: bnn.Relaxed, Temperature: float32(tau), Train: true, KeepStats: true, ReuseMasks: true})
		llRel := bnn.LogLik(logits, t.y, classes, g.scale, t.dl)
		net.Backward(t.dl)
		g.logMu[j] = g.scale * (llRel - llBin)
		xj, sj := g.x[j*d:(j+1)*d:(j+1)*d], g.s[j*d:(j+1)*d:(j+1)*d]
		net.BinaryVector(xj)
		net.BinaryGrad(sj)
		for i, w := range xj {
			sj[i] -= w // ∇ log p0 with p0 = N(0, I)
		}
	}
	ess := svgd.Weights(g.w, g.logMu, g.kind, 1, g.rank)
	g.essSum += svgd.ESS(g.logMu)
	if g.kind == svgd.Rank {
		g.rankESSSum += ess
	}
	g.h = g.dir.Compute(g.dst, g.x, g.s, g.w, g.bw)
	g.repSum += g.dir.RepulsionRatio()
	g.koffSum += g.dir.KernelOffDiagonal()
	gs := ep*t.steps + s
	lr := t.lr(gs, cfg.Epochs*t.steps)
	for j, net := range t.nets {
		t.adamStep(j, g.dirs[j], lr, gs+1)
		if err := checkFinite(net); err != nil {
			return 0, 0, fmt.Errorf("particle %d, epoch %d, step %d: %w", j+1, ep+1, s+1, err)
		}
	}
	return loss, acc, nil
}

func (g *gfsvgd) end(log *EpochLog) error {
	t := g.t
	for j := range g.n {
		if _, err := t.memberTestProbs(j); err != nil {
			return err
		}
	}
	log.TestAccuracy = accuracy(t.averageProbs(g.n, nil), t.testLabels(), t.test.Classes)
	st := float64(t.steps)
	log.Repulsion, log.KernelOffDiagonal = g.repSum/st, g.koffSum/st
	log.ImportanceESS, log.RankESS = g.essSum/st, g.rankESSSum/st
	return nil
}

func (g *gfsvgd) describe(log EpochLog) string {
	return fmt.Sprintf("epoch %d/%d: train loss %.4f, train accuracy %.4f, ensemble test accuracy %.4f; repulsive/driving %.3g, mean off-diagonal kernel %.3g, ESS of ρ/p_c %.2f of %d (%.1f s)",
		log.Epoch, g.t.cfg.Epochs, log.TrainLoss, log.TrainAccuracy, log.TestAccuracy, log.Repulsion, log.KernelOffDiagonal, log.ImportanceESS, g.n, log.Seconds)
}
