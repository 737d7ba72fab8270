package ensemble

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"time"

	"github.com/dstein/dstein/bnn"
	"github.com/dstein/dstein/dataset"
	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/rng"
)

// Event reports training progress after each step.
type Event struct {
	Member, Members int // the member being trained (−1: all, GF-SVGD)
	Epoch, Epochs   int // 0-based epoch of that member
	Step, Steps     int // step within the epoch
	Loss, Accuracy  float64
}

// EpochLog summarises one epoch (of all particles for GF-SVGD, of one
// member otherwise).
type EpochLog struct {
	Member int `json:"member"` // −1 for GF-SVGD (all particles)
	Epoch  int `json:"epoch"`  // 1-based
	// TrainLoss and TrainAccuracy are the mean cross-entropy and accuracy of
	// the binarized network(s) on the epoch's minibatches.
	TrainLoss     float64 `json:"train_loss"`
	TrainAccuracy float64 `json:"train_accuracy"`
	// TestAccuracy is the ensemble's (GF-SVGD) or the member's test
	// accuracy after the epoch.
	TestAccuracy float64 `json:"test_accuracy"`
	// Repulsion is the mean over steps and particles of ‖repulsive term‖ /
	// ‖driving term‖ of the GF-SVGD update (0 for other methods).
	Repulsion float64 `json:"repulsion,omitempty"`
	// KernelOffDiagonal is the mean of k(w_i, w_j) over pairs i ≠ j.
	KernelOffDiagonal float64 `json:"kernel_offdiag,omitempty"`
	// ImportanceESS is the mean effective sample size of the
	// self-normalised ratios ρ/p_c; RankESS that of the rank weights used
	// (when Weights is "rank").
	ImportanceESS float64 `json:"importance_ess,omitempty"`
	RankESS       float64 `json:"rank_ess,omitempty"`
	// Seconds is the training time of the epoch; EvalSeconds the time spent
	// on test accuracy (and boosting weights) after it.
	Seconds     float64 `json:"seconds"`
	EvalSeconds float64 `json:"eval_seconds"`
}

// Result is the outcome of a training run.
type Result struct {
	Config           Config     `json:"config"`
	NumBinary        int        `json:"binary_weights_per_network"`
	EnsembleAccuracy float64    `json:"ensemble_test_accuracy"`
	MemberAccuracy   []float64  `json:"member_test_accuracy"`
	PrefixAccuracy   []float64  `json:"prefix_test_accuracy"` // ensemble of the first k members
	Alphas           []float64  `json:"benn_alphas,omitempty"`
	History          []EpochLog `json:"history"`
	Seconds          float64    `json:"train_seconds"`
	// ExamplesPerSecond is the training throughput: training examples
	// processed by all networks together per second of training
	// (evaluation excluded). Networks are trained one step at a time, each
	// step using both cores, so a single network trains at about this rate.
	ExamplesPerSecond float64 `json:"examples_per_second"`
	ResumedFrom       int     `json:"resumed_from_unit,omitempty"`
	// WeightsSHA256 is a digest of every network's parameters and running
	// statistics: equal digests mean bit-identical trained networks.
	WeightsSHA256 string `json:"weights_sha256"`
}

// Options configure Train.
type Options struct {
	// Dir, when not empty, receives a checkpoint after each epoch.
	Dir string
	// Resume continues from Dir's checkpoint when there is one.
	Resume bool
	// Progress, when not nil, is called after every step.
	Progress func(Event)
	// Log, when not nil, receives one line per epoch and on resume.
	Log func(string)
}

// evalBatch is the batch size of evaluation passes: small enough that the
// activations of several networks stay within tens of megabytes.
const evalBatch = 100

// CheckpointName is the checkpoint file inside Options.Dir.
const CheckpointName = "checkpoint.gob"

type adam struct {
	M, V []float32
}

// checkpoint is everything needed to continue a run after a unit of work (a
// GF-SVGD epoch, or one member's epoch for the sequential methods).
type checkpoint struct {
	Config        Config
	Units         int
	Members       []bnn.State
	Adam          [][]adam
	Alphas        []float64
	SampleWeights []float64
	History       []EpochLog
	Seconds       float64
}

type trainer struct {
	cfg         Config
	opt         Options
	train, test *dataset.Set
	nTrain      int
	steps       int // per epoch
	nets        []*bnn.Net
	adams       [][]adam
	cp          checkpoint
	bw          kernel.Bandwidth
	x           []float32
	y           []uint8
	idx         []int
	dl          []float32
	testProbs   [][]float64
}

// Train runs the configured method on the data and returns the result. The
// context cancels between steps; a canceled run keeps its last checkpoint.
func Train(ctx context.Context, cfg Config, train, test *dataset.Set, opt Options) (*Result, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &trainer{cfg: cfg, opt: opt, train: train, test: test}
	t.nTrain = train.N
	if cfg.TrainLimit > 0 && cfg.TrainLimit < t.nTrain {
		t.nTrain = cfg.TrainLimit
	}
	t.steps = t.nTrain / cfg.Batch
	if t.steps < 1 {
		return nil, fmt.Errorf("%d training examples is fewer than one batch of %d", t.nTrain, cfg.Batch)
	}
	t.bw, _ = cfg.bandwidth()
	in := bnn.Shape{H: train.H, W: train.W, C: train.C}
	for k := range cfg.Ensemble {
		n, err := bnn.New(cfg.Arch, in, train.Classes)
		if err != nil {
			return nil, err
		}
		ir := rng.NewKey(cfg.Seed).ForIndex(rng.Init, k).Rand()
		n.Init(ir)
		if cfg.Init == "uniform" {
			for _, p := range n.Params() {
				if p.Binary {
					for i := range p.W {
						p.W[i] = float32(2*ir.Float64() - 1)
					}
				}
			}
		}
		t.nets = append(t.nets, n)
		var a []adam
		for _, p := range n.Params() {
			a = append(a, adam{M: make([]float32, len(p.W)), V: make([]float32, len(p.W))})
		}
		t.adams = append(t.adams, a)
	}
	t.cp = checkpoint{Config: cfg}
	if cfg.Method == "benn" {
		t.cp.SampleWeights = make([]float64, t.nTrain)
		for i := range t.cp.SampleWeights {
			t.cp.SampleWeights[i] = 1 / float64(t.nTrain)
		}
	}
	resumed := 0
	if opt.Dir != "" && opt.Resume {
		ok, err := t.load()
		if err != nil {
			return nil, err
		}
		if ok {
			resumed = t.cp.Units
			t.logf("resuming from %s: %s completed", filepath.Join(opt.Dir, CheckpointName), t.describeUnits(t.cp.Units))
		} else {
			t.logf("no checkpoint in %s; starting from the beginning", opt.Dir)
		}
	}
	t.x = make([]float32, cfg.Batch*train.Size())
	t.y = make([]uint8, cfg.Batch)
	t.idx = make([]int, cfg.Batch)
	t.dl = make([]float32, cfg.Batch*train.Classes)
	var err error
	if cfg.Method == "gfsvgd" {
		err = t.runGFSVGD(ctx)
	} else {
		err = t.runSequential(ctx)
	}
	if err != nil {
		return nil, err
	}
	res := t.result()
	res.ResumedFrom = resumed
	return res, nil
}

func (t *trainer) logf(format string, a ...any) {
	if t.opt.Log != nil {
		t.opt.Log(fmt.Sprintf(format, a...))
	}
}

func (t *trainer) totalUnits() int {
	if t.cfg.sequential() {
		return t.cfg.Ensemble * t.cfg.Epochs
	}
	return t.cfg.Epochs
}

func (t *trainer) describeUnits(u int) string {
	if !t.cfg.sequential() {
		return fmt.Sprintf("epoch %d of %d", u, t.cfg.Epochs)
	}
	if u == 0 {
		return "nothing"
	}
	return fmt.Sprintf("member %d of %d, epoch %d of %d", (u-1)/t.cfg.Epochs+1, t.cfg.Ensemble, (u-1)%t.cfg.Epochs+1, t.cfg.Epochs)
}

// lr is the cosine-decayed step size at step s of tot.
func (t *trainer) lr(s, tot int) float64 {
	return t.cfg.LearningRate * (0.01 + 0.99*(1+math.Cos(math.Pi*float64(s)/float64(tot)))/2)
}

// temperature is the relaxation's temperature at step s of tot.
func (t *trainer) temperature(s, tot int) float64 {
	a, b := t.cfg.Temperature, t.cfg.TemperatureEnd
	if b <= 0 || tot < 2 {
		return a
	}
	return a * math.Pow(b/a, float64(s)/float64(tot-1))
}

// order returns the example order of a member's epoch: a permutation of the
// training examples, or of the member's bootstrap resample for bagging.
func (t *trainer) order(member, epoch int) []int {
	r := rng.NewKey(t.cfg.Seed).ForIndex(rng.Sample, member<<12|epoch).Rand()
	var base []int
	if t.cfg.Method == "bagging" {
		br := rng.NewKey(t.cfg.Seed).ForIndex(rng.Model, member).Rand()
		base = make([]int, t.nTrain)
		for i := range base {
			base[i] = br.IntN(t.nTrain)
		}
	} else {
		base = make([]int, t.nTrain)
		for i := range base {
			base[i] = i
		}
	}
	r.Shuffle(len(base), func(i, j int) { base[i], base[j] = base[j], base[i] })
	return base
}

// adamStep moves every parameter of member k along its direction dir (the
// gradient of the objective, or GF-SVGD's update for the binary weights):
// ascent with Adam, bias-corrected at step s (1-based), binary latent weights
// clipped to [−1, 1].
func (t *trainer) adamStep(k int, dirs [][]float32, lr float64, s int) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	c1 := 1 - math.Pow(b1, float64(s))
	c2 := 1 - math.Pow(b2, float64(s))
	step := float32(lr / c1)
	sc2 := float32(1 / c2)
	for pi, p := range t.nets[k].Params() {
		a := t.adams[k][pi]
		g := dirs[pi]
		for i := range p.W {
			a.M[i] = b1*a.M[i] + (1-b1)*g[i]
			a.V[i] = b2*a.V[i] + (1-b2)*g[i]*g[i]
			p.W[i] += step * a.M[i] / (float32(math.Sqrt(float64(a.V[i]*sc2))) + eps)
			if p.Binary {
				p.W[i] = min(1, max(-1, p.W[i]))
			}
		}
	}
}

func paramGrads(n *bnn.Net) [][]float32 {
	var g [][]float32
	for _, p := range n.Params() {
		g = append(g, p.G)
	}
	return g
}

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

// runSequential trains the members of the baselines one after another.
func (t *trainer) runSequential(ctx context.Context) error {
	cfg := t.cfg
	mode := bnn.STE
	if cfg.Method == "bnnplus" {
		mode = bnn.SignSwish
	}
	scale := float64(t.nTrain) / float64(cfg.Batch)
	for u := t.cp.Units; u < t.totalUnits(); u++ {
		k, ep := u/cfg.Epochs, u%cfg.Epochs
		if ep == 0 && cfg.Method == "benn" && k > 0 && len(t.cp.Alphas) < k {
			return fmt.Errorf("internal: boosting weights of member %d missing", k)
		}
		start := time.Now()
		net := t.nets[k]
		ord := t.order(k, ep)
		dropR := rng.NewKey(cfg.Seed).ForIndex(rng.Test, k<<12|ep).Rand()
		var cum []float64
		if cfg.Method == "benn" {
			cum = make([]float64, t.nTrain)
			acc := 0.0
			for i, w := range t.cp.SampleWeights {
				acc += w
				cum[i] = acc
			}
		}
		var lossSum, accSum float64
		dirs := paramGrads(net)
		for s := range t.steps {
			if err := ctx.Err(); err != nil {
				return err
			}
			if cum != nil {
				for b := range t.idx {
					u := dropR.Float64() * cum[len(cum)-1]
					t.idx[b] = min(sort.SearchFloat64s(cum, u), t.nTrain-1)
				}
			} else {
				copy(t.idx, ord[s*cfg.Batch:(s+1)*cfg.Batch])
			}
			t.train.Batch(t.idx, t.x, t.y)
			o := bnn.PassOptions{Mode: mode, Train: true, SwishBeta: float32(cfg.SwishBeta), Rand: dropR}
			logits := net.Forward(t.x, cfg.Batch, o)
			ll := bnn.LogLik(logits, t.y, t.train.Classes, scale, t.dl)
			loss, acc := batchStats(logits, t.y, t.train.Classes, ll)
			lossSum += loss
			accSum += acc
			net.Backward(t.dl)
			if cfg.Method == "bnnplus" {
				// The regulariser −N·λ·Σ(1 − |w|)² of the objective.
				c := float32(2 * float64(t.nTrain) * cfg.Regularizer)
				for _, p := range net.Params() {
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
			gs := ep*t.steps + s
			t.adamStep(k, dirs, t.lr(gs, cfg.Epochs*t.steps), gs+1)
			if err := checkFinite(net); err != nil {
				return fmt.Errorf("member %d, epoch %d, step %d: %w", k+1, ep+1, s+1, err)
			}
			if t.opt.Progress != nil {
				t.opt.Progress(Event{Member: k, Members: cfg.Ensemble, Epoch: ep, Epochs: cfg.Epochs, Step: s + 1, Steps: t.steps, Loss: lossSum / float64(s+1), Accuracy: accSum / float64(s+1)})
			}
		}
		trainSec := time.Since(start).Seconds()
		probs := t.memberTestProbs(k)
		testAcc := accuracy(probs, t.testLabels(), t.train.Classes)
		if ep == cfg.Epochs-1 && cfg.Method == "benn" {
			if err := t.boost(k); err != nil {
				return err
			}
		}
		log := EpochLog{Member: k, Epoch: ep + 1, TrainLoss: lossSum / float64(t.steps), TrainAccuracy: accSum / float64(t.steps),
			TestAccuracy: testAcc, Seconds: trainSec, EvalSeconds: time.Since(start).Seconds() - trainSec}
		t.cp.History = append(t.cp.History, log)
		t.cp.Seconds += log.Seconds
		t.cp.Units = u + 1
		t.logf("member %d/%d epoch %d/%d: train loss %.4f, train accuracy %.4f, member test accuracy %.4f (%.1f s)",
			k+1, cfg.Ensemble, ep+1, cfg.Epochs, log.TrainLoss, log.TrainAccuracy, testAcc, log.Seconds)
		if err := t.save(); err != nil {
			return err
		}
	}
	return nil
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

// runGFSVGD trains all particles together with the appendix algorithm.
func (t *trainer) runGFSVGD(ctx context.Context) error {
	cfg := t.cfg
	n := cfg.Ensemble
	scale := float64(t.nTrain) / float64(cfg.Batch)
	D := t.nets[0].NumBinary()
	W := make([][]float32, n)  // latent binary weights
	G := make([][]float32, n)  // ∇ log ρ(w_j; D_j)
	Dl := make([][]float32, n) // the update of each particle
	for j := range n {
		W[j] = make([]float32, D)
		G[j] = make([]float32, D)
		Dl[j] = make([]float32, D)
	}
	logMu := make([]float64, n)
	gamma := make([]float64, n)
	K := make([]float64, n*n)
	sq := make([]float64, n*n)
	pairs := make([]float64, 0, n*n)
	rep := make([]float64, D)
	// Binary weights move along Δw; the batch-normalisation parameters
	// along their own gradient of log ρ.
	dirs := make([][][]float32, n)
	for j, net := range t.nets {
		dirs[j] = paramGrads(net)
		o := 0
		for pi, p := range net.Params() {
			if p.Binary {
				dirs[j][pi] = Dl[j][o : o+len(p.W)]
				o += len(p.W)
			}
		}
	}
	maskSrc := rand.NewPCG(0, 0)
	maskRand := rand.New(maskSrc)
	for ep := t.cp.Units; ep < cfg.Epochs; ep++ {
		start := time.Now()
		ords := make([][]int, n)
		drops := make([]*rand.Rand, n)
		for j := range n {
			ords[j] = t.order(j, ep)
			drops[j] = rng.NewKey(cfg.Seed).ForIndex(rng.Test, j<<12|ep).Rand()
		}
		var lossSum, accSum, repSum, essSum, rankESSSum, koffSum float64
		for s := range t.steps {
			if err := ctx.Err(); err != nil {
				return err
			}
			tau := t.temperature(ep*t.steps+s, cfg.Epochs*t.steps)
			for j, net := range t.nets {
				copy(t.idx, ords[j][s*cfg.Batch:(s+1)*cfg.Batch])
				t.train.Batch(t.idx, t.x, t.y)
				// Both passes use the same dropout masks: the stream is
				// reset to one seed per step before each.
				maskSeed := drops[j].Uint64()
				maskSrc.Seed(maskSeed, 0)
				// log p_c up to p0 and a constant: the binarized network.
				logits := net.Forward(t.x, cfg.Batch, bnn.PassOptions{Mode: bnn.STE, Train: true, Rand: maskRand})
				llBin := bnn.LogLik(logits, t.y, t.train.Classes, 0, nil)
				loss, acc := batchStats(logits, t.y, t.train.Classes, llBin)
				lossSum += loss / float64(n)
				accSum += acc / float64(n)
				// log ρ and its gradient: the relaxed network on the same
				// batch with the same masks.
				maskSrc.Seed(maskSeed, 0)
				logits = net.Forward(t.x, cfg.Batch, bnn.PassOptions{Mode: bnn.Relaxed, Temperature: float32(tau), Train: true, KeepStats: true, Rand: maskRand})
				llRel := bnn.LogLik(logits, t.y, t.train.Classes, scale, t.dl)
				net.Backward(t.dl)
				logMu[j] = scale * (llRel - llBin)
				net.BinaryVector(W[j])
				net.BinaryGrad(G[j])
				for i, w := range W[j] {
					G[j][i] -= w // ∇ log p0 with p0 = N(0, I)
				}
			}
			// Weights.
			ess, rankESS := weights(cfg.Weights, logMu, gamma)
			essSum += ess
			rankESSSum += rankESS
			// Kernel.
			pairs = pairs[:0]
			for i := range n {
				for j := range i {
					var d float64
					for k, a := range W[i] {
						v := float64(a - W[j][k])
						d += v * v
					}
					sq[i*n+j], sq[j*n+i] = d, d
					pairs = append(pairs, d)
				}
			}
			med2 := 0.0
			if len(pairs) > 0 {
				sort.Float64s(pairs)
				m := len(pairs)
				if m%2 == 1 {
					med2 = pairs[m/2]
				} else {
					med2 = (pairs[m/2-1] + pairs[m/2]) / 2
				}
			}
			h := t.bw.FromMedian(med2, n)
			koff := 0.0
			for i := range n {
				for j := range n {
					K[i*n+j] = math.Exp(-sq[i*n+j] / h)
					if i != j {
						koff += K[i*n+j] / float64(n*(n-1))
					}
				}
			}
			koffSum += koff
			// Δw_i = Σ_j γ_j [g_j k(w_j, w_i) + ∇_{w_j} k(w_j, w_i)] / Ω.
			var omega float64
			for _, g := range gamma {
				omega += g
			}
			var ratio float64
			for i := range n {
				clear(rep)
				di := Dl[i]
				clear(di)
				for j := range n {
					c := gamma[j] * K[j*n+i] / omega
					for k, g := range G[j] {
						di[k] += float32(c * float64(g))
					}
					if j != i {
						r := c * 2 / h
						for k := range rep {
							rep[k] += r * float64(W[i][k]-W[j][k])
						}
					}
				}
				var nd, nr float64
				for k := range di {
					nd += float64(di[k]) * float64(di[k])
					nr += rep[k] * rep[k]
					di[k] += float32(rep[k])
				}
				if nd > 0 {
					ratio += math.Sqrt(nr/nd) / float64(n)
				}
			}
			repSum += ratio
			gs := ep*t.steps + s
			lr := t.lr(gs, cfg.Epochs*t.steps)
			for j, net := range t.nets {
				t.adamStep(j, dirs[j], lr, gs+1)
				if err := checkFinite(net); err != nil {
					return fmt.Errorf("particle %d, epoch %d, step %d: %w", j+1, ep+1, s+1, err)
				}
			}
			if t.opt.Progress != nil {
				t.opt.Progress(Event{Member: -1, Members: n, Epoch: ep, Epochs: cfg.Epochs, Step: s + 1, Steps: t.steps, Loss: lossSum / float64(s+1), Accuracy: accSum / float64(s+1)})
			}
		}
		trainSec := time.Since(start).Seconds()
		for j := range n {
			t.memberTestProbs(j)
		}
		ensAcc := accuracy(t.averageProbs(n, nil), t.testLabels(), t.train.Classes)
		st := float64(t.steps)
		log := EpochLog{Member: -1, Epoch: ep + 1, TrainLoss: lossSum / st, TrainAccuracy: accSum / st, TestAccuracy: ensAcc,
			Repulsion: repSum / st, KernelOffDiagonal: koffSum / st, ImportanceESS: essSum / st, RankESS: rankESSSum / st, Seconds: trainSec, EvalSeconds: time.Since(start).Seconds() - trainSec}
		t.cp.History = append(t.cp.History, log)
		t.cp.Seconds += log.Seconds
		t.cp.Units = ep + 1
		t.logf("epoch %d/%d: train loss %.4f, train accuracy %.4f, ensemble test accuracy %.4f; repulsive/driving %.3g, mean off-diagonal kernel %.3g, ESS of ρ/p_c %.2f of %d (%.1f s)",
			ep+1, cfg.Epochs, log.TrainLoss, log.TrainAccuracy, ensAcc, log.Repulsion, log.KernelOffDiagonal, log.ImportanceESS, n, log.Seconds)
		if err := t.save(); err != nil {
			return err
		}
	}
	return nil
}

// weights fills gamma from the log ratios log μ_j = log ρ/p_c and returns the
// effective sample size of the self-normalised ratios and of gamma.
func weights(kind string, logMu, gamma []float64) (ess, gammaESS float64) {
	n := len(logMu)
	mx := math.Inf(-1)
	for _, l := range logMu {
		mx = math.Max(mx, l)
	}
	var s, s2 float64
	for _, l := range logMu {
		w := math.Exp(l - mx)
		s += w
		s2 += w * w
	}
	ess = s * s / s2
	if kind == "self" {
		for j, l := range logMu {
			gamma[j] = math.Exp(l-mx) / s
		}
	} else {
		// γ_j = 1/H(μ_j), H(t) = #{l : μ_l ≥ t}/n.
		for j, lj := range logMu {
			c := 0
			for _, l := range logMu {
				if l >= lj {
					c++
				}
			}
			gamma[j] = float64(n) / float64(c)
		}
	}
	var g1, g2 float64
	for _, g := range gamma {
		g1 += g
		g2 += g * g
	}
	return ess, g1 * g1 / g2
}

func checkFinite(n *bnn.Net) error {
	for _, p := range n.Params() {
		for i, v := range p.W {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("%s[%d] became %v", p.Name, i, v)
			}
		}
	}
	return nil
}

func (t *trainer) nTest() int {
	if t.cfg.TestLimit > 0 && t.cfg.TestLimit < t.test.N {
		return t.cfg.TestLimit
	}
	return t.test.N
}

func (t *trainer) testLabels() []uint8 { return t.test.Labels[:t.nTest()] }

// memberTestProbs computes (and keeps) member k's class probabilities on
// the test set with binary weights and activations.
func (t *trainer) memberTestProbs(k int) []float64 {
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
	return probs
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

func (t *trainer) result() *Result {
	cfg := t.cfg
	res := &Result{Config: cfg, NumBinary: t.nets[0].NumBinary(), History: t.cp.History, Seconds: t.cp.Seconds}
	labels := t.testLabels()
	for k := range cfg.Ensemble {
		if t.testProbs == nil || t.testProbs[k] == nil {
			t.memberTestProbs(k)
		}
		res.MemberAccuracy = append(res.MemberAccuracy, accuracy(t.testProbs[k], labels, t.test.Classes))
	}
	var alphas []float64
	if cfg.Method == "benn" {
		alphas = t.cp.Alphas
		res.Alphas = alphas
	}
	for m := 1; m <= cfg.Ensemble; m++ {
		res.PrefixAccuracy = append(res.PrefixAccuracy, accuracy(t.averageProbs(m, alphas), labels, t.test.Classes))
	}
	res.EnsembleAccuracy = res.PrefixAccuracy[cfg.Ensemble-1]
	h := sha256.New()
	for _, n := range t.nets {
		st := n.State()
		for _, p := range st.Params {
			binary.Write(h, binary.LittleEndian, p)
		}
		for i := range st.Mean {
			binary.Write(h, binary.LittleEndian, st.Mean[i])
			binary.Write(h, binary.LittleEndian, st.Var[i])
		}
	}
	res.WeightsSHA256 = hex.EncodeToString(h.Sum(nil))
	if res.Seconds > 0 {
		res.ExamplesPerSecond = float64(cfg.Epochs*t.steps*cfg.Batch) * float64(cfg.Ensemble) / res.Seconds
	}
	return res
}

// save writes the checkpoint atomically.
func (t *trainer) save() error {
	if t.opt.Dir == "" {
		return nil
	}
	t.cp.Members = t.cp.Members[:0]
	t.cp.Adam = t.cp.Adam[:0]
	for k, n := range t.nets {
		t.cp.Members = append(t.cp.Members, n.State())
		t.cp.Adam = append(t.cp.Adam, t.adams[k])
	}
	return safeio.Replace(filepath.Join(t.opt.Dir, CheckpointName), func(w *bufio.Writer) error {
		return gob.NewEncoder(w).Encode(&t.cp)
	})
}

// readCheckpoint reads Dir's checkpoint.
func (t *trainer) readCheckpoint() (checkpoint, error) {
	var cp checkpoint
	path := filepath.Join(t.opt.Dir, CheckpointName)
	f, err := os.Open(path)
	if err != nil {
		return cp, err
	}
	defer f.Close()
	if err := gob.NewDecoder(bufio.NewReader(f)).Decode(&cp); err != nil {
		return cp, fmt.Errorf("%s is not a dstein checkpoint or is damaged: %w", path, err)
	}
	return cp, nil
}

// load reads the checkpoint, if any, and restores the networks.
func (t *trainer) load() (bool, error) {
	path := filepath.Join(t.opt.Dir, CheckpointName)
	cp, err := t.readCheckpoint()
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !reflect.DeepEqual(cp.Config, t.cfg) {
		return false, fmt.Errorf("%s was written by a run with different settings (%+v); this run has %+v: use another --out or the same settings", path, cp.Config, t.cfg)
	}
	if len(cp.Members) != len(t.nets) || len(cp.Adam) != len(t.nets) {
		return false, fmt.Errorf("%s holds %d networks, want %d", path, len(cp.Members), len(t.nets))
	}
	for k, n := range t.nets {
		if err := n.SetState(cp.Members[k]); err != nil {
			return false, fmt.Errorf("%s: network %d: %w", path, k+1, err)
		}
		if len(cp.Adam[k]) != len(t.adams[k]) {
			return false, fmt.Errorf("%s: network %d has %d optimizer states, want %d", path, k+1, len(cp.Adam[k]), len(t.adams[k]))
		}
		for pi := range t.adams[k] {
			if len(cp.Adam[k][pi].M) != len(t.adams[k][pi].M) || len(cp.Adam[k][pi].V) != len(t.adams[k][pi].V) {
				return false, fmt.Errorf("%s: network %d optimizer state %d has the wrong size", path, k+1, pi)
			}
		}
		t.adams[k] = cp.Adam[k]
	}
	if t.cfg.Method == "benn" && len(cp.SampleWeights) != t.nTrain {
		return false, fmt.Errorf("%s: %d boosting weights, want %d", path, len(cp.SampleWeights), t.nTrain)
	}
	t.cp = cp
	return true, nil
}
