package ensemble

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/dstein/dstein/bnn"
	"github.com/dstein/dstein/dataset"
	"github.com/dstein/dstein/optim"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
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
	// (when Weights is "rank"; 0 otherwise).
	ImportanceESS float64 `json:"importance_ess,omitempty"`
	RankESS       float64 `json:"rank_ess,omitempty"`
	// Seconds is the training time of the epoch; EvalSeconds the time spent
	// on test accuracy (and boosting weights) after it.
	Seconds     float64 `json:"seconds"`
	EvalSeconds float64 `json:"eval_seconds"`
}

// Result is the outcome of a training run.
type Result struct {
	Config           Config  `json:"config"`
	NumBinary        int     `json:"binary_weights_per_network"`
	EnsembleAccuracy float64 `json:"ensemble_test_accuracy"`
	// TestImages is the number of test images the accuracies were
	// measured on, and EnsembleAccuracySE the binomial standard error
	// √(a(1 − a)/TestImages) of the ensemble's accuracy a from the draw of
	// the test set: the least error bar of one run (the spread between
	// training seeds adds to it; for GF-SVGD's single networks it was
	// about twice as large, 0.45 points against 0.22, on the CNN).
	TestImages         int     `json:"test_images"`
	EnsembleAccuracySE float64 `json:"ensemble_test_accuracy_se"`
	// InputMean and InputStd standardised each channel of the inputs
	// (pixel/255): the training set's, which a user of the exported
	// networks applies to new images.
	InputMean      []float64  `json:"input_mean"`
	InputStd       []float64  `json:"input_std"`
	MemberAccuracy []float64  `json:"member_test_accuracy"`
	PrefixAccuracy []float64  `json:"prefix_test_accuracy"` // ensemble of the first k members
	Alphas         []float64  `json:"benn_alphas,omitempty"`
	History        []EpochLog `json:"history"`
	Seconds        float64    `json:"train_seconds"`
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

// method is one training method's part of the stepper. A unit is one epoch
// of all particles (GF-SVGD) or of one member (the sequential methods).
type method interface {
	// begin prepares unit u: example orders and random streams.
	begin(u int) error
	// step does step s of the current unit and returns the mean loss and
	// accuracy of the binarized network(s) on its minibatch.
	step(s int) (loss, acc float64, err error)
	// end does the work after the unit's last step (test accuracy,
	// boosting weights) and completes its log.
	end(log *EpochLog) error
	// describe is the log line of a finished unit.
	describe(log EpochLog) string
}

// trainer is the stepper of a run: each Step is one optimisation step of the
// current unit, and the Step that completes a unit also evaluates, records
// the unit and writes the checkpoint.
type trainer struct {
	ctx         context.Context // the current step's
	cfg         Config
	opt         Options
	key         rng.Key
	train, test *dataset.Set
	nTrain      int
	steps       int // per unit
	nets        []*bnn.Net
	// adams[k][i] is Adam's state of parameter i of network k.
	adams [][]*optim.Adam[float32]
	cp    checkpoint
	m     method

	// The position: unit being trained, steps of it done.
	unit, done int
	start      time.Time // of the unit
	lossSum    float64
	accSum     float64
	ev         Event // of the last step

	// Minibatch buffers.
	x   []float32
	y   []uint8
	idx []int
	dl  []float32

	testProbs [][]float64
}

// Train runs the configured method on the data and returns the result. The
// context cancels between steps: a canceled run returns the context's error
// and keeps the checkpoint of its last finished epoch.
func Train(ctx context.Context, cfg Config, train, test *dataset.Set, opt Options) (*Result, error) {
	t, err := newTrainer(cfg, train, test, opt)
	if err != nil {
		return nil, err
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
	t.unit = t.cp.Units
	out := sampler.Run(ctx, t, sampler.RunOptions{Iters: t.remaining(), AfterStep: func(int) error {
		if opt.Progress != nil {
			opt.Progress(t.ev)
		}
		return nil
	}})
	if out.Status != sampler.Completed {
		return nil, out.Err
	}
	t.ctx = ctx
	res, err := t.result()
	if err != nil {
		return nil, err
	}
	res.ResumedFrom = resumed
	return res, nil
}

// newTrainer builds the networks at their initial weights and the method.
func newTrainer(cfg Config, train, test *dataset.Set, opt Options) (*trainer, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &trainer{cfg: cfg, opt: opt, key: rng.NewKey(cfg.Seed), train: train, test: test}
	t.nTrain = train.N
	if cfg.TrainLimit > 0 && cfg.TrainLimit < t.nTrain {
		t.nTrain = cfg.TrainLimit
	}
	t.steps = t.nTrain / cfg.Batch
	if t.steps < 1 {
		return nil, fmt.Errorf("%d training examples is fewer than one batch of %d", t.nTrain, cfg.Batch)
	}
	in := bnn.Shape{H: train.H, W: train.W, C: train.C}
	for k := range cfg.Ensemble {
		n, err := bnn.New(cfg.Arch, in, train.Classes)
		if err != nil {
			return nil, err
		}
		ir := t.key.ForIndex(rng.Init, k).Rand()
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
		var a []*optim.Adam[float32]
		for _, p := range n.Params() {
			a = append(a, optim.NewAdam[float32](len(p.W), optim.DefaultBeta1, optim.DefaultBeta2, optim.DefaultEpsilon))
		}
		t.adams = append(t.adams, a)
	}
	t.cp = checkpoint{Version: checkpointVersion, Config: cfg, InputMean: slices.Clone(train.Mean), InputStd: slices.Clone(train.Std)}
	if cfg.Spec().Boosted {
		t.cp.SampleWeights = make([]float64, t.nTrain)
		for i := range t.cp.SampleWeights {
			t.cp.SampleWeights[i] = 1 / float64(t.nTrain)
		}
	}
	t.x = make([]float32, cfg.Batch*train.Size())
	t.y = make([]uint8, cfg.Batch)
	t.idx = make([]int, cfg.Batch)
	t.dl = make([]float32, cfg.Batch*train.Classes)
	if cfg.Spec().Joint {
		t.m = newGFSVGD(t)
	} else {
		t.m = newSequential(t)
	}
	return t, nil
}

// Step does one optimisation step of the current unit; the step that
// completes the unit also evaluates it, records it and writes the
// checkpoint. A step is not interrupted: ctx is checked between steps by
// the run loop.
func (t *trainer) Step(ctx context.Context) error {
	t.ctx = ctx // for the evaluation at a unit's end
	if t.unit >= t.totalUnits() {
		return errors.New("ensemble: training is already complete")
	}
	if t.done == 0 {
		t.start = time.Now()
		t.lossSum, t.accSum = 0, 0
		if err := t.m.begin(t.unit); err != nil {
			return err
		}
	}
	loss, acc, err := t.m.step(t.done)
	if err != nil {
		return err
	}
	t.done++
	t.lossSum += loss
	t.accSum += acc
	member, ep := t.position(t.unit)
	t.ev = Event{Member: member, Members: t.cfg.Ensemble, Epoch: ep, Epochs: t.cfg.Epochs, Step: t.done, Steps: t.steps,
		Loss: t.lossSum / float64(t.done), Accuracy: t.accSum / float64(t.done)}
	if t.done < t.steps {
		return nil
	}
	return t.endUnit()
}

// endUnit evaluates and records the finished unit and writes the
// checkpoint.
func (t *trainer) endUnit() error {
	trainSec := time.Since(t.start).Seconds()
	member, ep := t.position(t.unit)
	st := float64(t.steps)
	log := EpochLog{Member: member, Epoch: ep + 1, TrainLoss: t.lossSum / st, TrainAccuracy: t.accSum / st, Seconds: trainSec}
	if err := t.m.end(&log); err != nil {
		return err
	}
	log.EvalSeconds = time.Since(t.start).Seconds() - trainSec
	t.cp.History = append(t.cp.History, log)
	t.cp.Seconds += log.Seconds
	t.cp.Units = t.unit + 1
	t.logf("%s", t.m.describe(log))
	t.unit++
	t.done = 0
	return t.save()
}

// position returns the member (−1 for GF-SVGD) and its epoch of unit u.
func (t *trainer) position(u int) (member, epoch int) {
	if t.cfg.sequential() {
		return u / t.cfg.Epochs, u % t.cfg.Epochs
	}
	return -1, u
}

// remaining returns the steps left from the current unit's start.
func (t *trainer) remaining() int { return (t.totalUnits() - t.unit) * t.steps }

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

// adamStep moves every parameter of network k along its direction dirs[i]
// (the gradient of the objective, or GF-SVGD's update for the binary
// weights): ascent with Adam at step size lr, bias-corrected for step s
// (1-based), binary latent weights then clipped to [−1, 1].
func (t *trainer) adamStep(k int, dirs [][]float32, lr float64, s int) {
	c1, c2 := t.adams[k][0].Corrections(s)
	for i, p := range t.nets[k].Params() {
		t.adams[k][i].Update(p.W, dirs[i], 0, len(p.W), lr, c1, c2)
		if p.Binary {
			for j, w := range p.W {
				p.W[j] = min(1, max(-1, w))
			}
		}
	}
}

// paramGrads returns the gradient arrays of a network's parameters.
func paramGrads(n *bnn.Net) [][]float32 {
	var g [][]float32
	for _, p := range n.Params() {
		g = append(g, p.G)
	}
	return g
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
