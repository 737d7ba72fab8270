package main

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/dstein/dstein/bnn"
	"github.com/dstein/dstein/dataset"
	"github.com/dstein/dstein/ensemble"
	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/report"
)

func newBNNCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bnn",
		Short: "Binarized neural networks: train ensembles with GF-SVGD and the paper's baselines, export their weights",
	}
	cmd.AddCommand(newBNNTrainCmd(e), newBNNExportCmd(e))
	return cmd
}

func newBNNTrainCmd(e *env) *cobra.Command {
	var cfg ensemble.Config
	var out, jsonPath, dataDir string
	var resume bool
	var mem memoryFlag
	cmd := &cobra.Command{
		Use:   "train --out-dir DIR",
		Short: "Train an ensemble of binarized networks and report its test accuracy",
		Long: `Train an ensemble of binarized networks on MNIST, Fashion-MNIST or CIFAR-10
and report the ensemble's test accuracy (softmax outputs averaged; weighted by
the boosting coefficients for benn) and each member's.

Methods: gfsvgd (the networks are GF-SVGD particles, the paper's appendix
algorithm), ste (independent networks trained with the straight-through
estimator; --ensemble 1 is a single BNN), bnnplus (the same with BNN+'s
SignSwish derivative and regulariser), bagging (STE networks on bootstrap
resamples) and benn (SAMME boosting of STE networks).

Architectures: mlp and cnn for 28×28 inputs, alexnet (adapted to 32×32) for
CIFAR-10. Every weight layer and every hidden activation is binary; the pixels
and the logits are real.

A checkpoint is written atomically to DIR after every epoch (of every member,
for the methods that train members one after another); --resume continues an
interrupted run from it and ends with the same result as an uninterrupted run.

Before it reads the images, the command estimates the memory of the run from
the data files' headers (or sizes) and the architecture: the data set, the
networks with Adam's moments, the passes' buffers, the method's and the
evaluation's arrays and the checkpoint being written; a run over
--max-memory is refused (exit code 3).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkBNNFlags(cmd, cfg); err != nil {
				return err
			}
			budget, err := mem.budget()
			if err != nil {
				return err
			}
			return runBNNTrain(e, cfg, out, jsonPath, dataDir, resume, budget)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Data, "data", "mnist", "data set: "+strings.Join(dataset.Names, ", "))
	fs.StringVar(&dataDir, "data-dir", "", "folder with the data files (default: the GoMNIST module for mnist, "+dataset.FashionDir+" for fashion; required for cifar10)")
	fs.StringVar(&cfg.Arch, "arch", "cnn", "architecture: "+strings.Join(bnn.Archs, ", "))
	fs.StringVar(&cfg.Method, "method", ensemble.DefaultMethod, "training method: "+strings.Join(ensemble.Methods, ", "))
	fs.IntVar(&cfg.Ensemble, "ensemble", 5, "number of networks")
	fs.IntVar(&cfg.Epochs, "epochs", 2, "passes over the training data per network")
	fs.IntVar(&cfg.Batch, "batch", 64, "minibatch size")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	fs.Float64Var(&cfg.LearningRate, "lr", ensemble.DefaultLearningRate, "Adam's initial step size (cosine decay to 1/100 of it)")
	fs.IntVar(&cfg.TrainLimit, "train-limit", 0, "use only the first N training examples (0: all)")
	fs.IntVar(&cfg.TestLimit, "test-limit", 0, "use only the first N test examples (0: all)")
	fs.StringVar(&cfg.Weights, "weights", "rank", "GF-SVGD particle weights: rank (the paper's γ = 1/H(μ)) or self (self-normalised ρ/p_c)")
	fs.StringVar(&cfg.Bandwidth, "bandwidth", "paper", "GF-SVGD bandwidth rule: paper (med²/(2 log(n+1))), svgd (med²/log(n+1)) or median (med²)")
	fs.Float64Var(&cfg.Temperature, "temperature", ensemble.DefaultTemperature, "GF-SVGD surrogate: temperature τ of the relaxation σ(x/τ) of sign (1 is the paper's σ)")
	fs.Float64Var(&cfg.TemperatureEnd, "temperature-end", ensemble.DefaultTemperatureEnd, "GF-SVGD surrogate: anneal the temperature geometrically to this value by the last step (0: no annealing)")
	fs.StringVar(&cfg.Init, "init", "glorot", "initial latent weights: glorot (U(−a, a), Glorot's a) or uniform (U(−1, 1))")
	fs.Float64Var(&cfg.SwishBeta, "swish-beta", 5, "BNN+: slope β of the SignSwish derivative")
	cfg.Regularizer = new(ensemble.DefaultRegularizer)
	fs.Float64Var(cfg.Regularizer, "regularizer", ensemble.DefaultRegularizer, "BNN+: weight λ of Σ(1 − |w|)² in the mean loss (0: none)")
	fs.StringVar(&out, "out-dir", "", "folder for the checkpoint and result.json (required; created if missing)")
	fs.BoolVar(&resume, "resume", false, "continue from the checkpoint in --out-dir")
	fs.StringVar(&jsonPath, "json", "", "also write the result as JSON to this file")
	mem.register(fs)
	return cmd
}

// checkBNNFlags refuses values that the library would replace by its
// defaults (0 means "default" there, never on the command line), and
// non-finite numbers.
func checkBNNFlags(cmd *cobra.Command, cfg ensemble.Config) error {
	fs := cmd.Flags()
	// A method's own flags, refused for the other methods (they were
	// recorded in the result and had no effect).
	spec := cfg.Spec()
	for _, g := range []struct {
		applies bool
		method  string
		flags   []string
	}{
		{spec.Joint, "gfsvgd", []string{"weights", "bandwidth", "temperature", "temperature-end"}},
		{spec.SignSwish, "bnnplus", []string{"swish-beta", "regularizer"}},
	} {
		for _, name := range g.flags {
			if fs.Changed(name) && !g.applies && spec.Name != "" {
				return usagef("--%s applies to --method %s, not to --method %s", name, g.method, spec.Name)
			}
		}
	}
	for name, v := range map[string]int{"ensemble": cfg.Ensemble, "epochs": cfg.Epochs, "batch": cfg.Batch} {
		if fs.Changed(name) && v < 1 {
			return usagef("--%s must be at least 1, got %d", name, v)
		}
	}
	for name, v := range map[string]int{"train-limit": cfg.TrainLimit, "test-limit": cfg.TestLimit} {
		if v < 0 {
			return usagef("--%s must be ≥ 0 (0: all), got %d", name, v)
		}
	}
	for name, v := range map[string]float64{"lr": cfg.LearningRate, "temperature": cfg.Temperature, "swish-beta": cfg.SwishBeta} {
		if fs.Changed(name) && (!(v > 0) || math.IsInf(v, 0)) {
			return usagef("--%s must be a finite number > 0, got %v", name, v)
		}
	}
	for name, v := range map[string]float64{"temperature-end": cfg.TemperatureEnd, "regularizer": *cfg.Regularizer} {
		if fs.Changed(name) && (!(v >= 0) || math.IsInf(v, 0)) {
			return usagef("--%s must be a finite number ≥ 0, got %v", name, v)
		}
	}
	return nil
}

// notRunFile refuses an output that is one of the files the run keeps in
// its folder dir: the checkpoint, result.json, the lock, the record of
// dstein's files, or a file that record lists. Written over, the trained
// networks would be lost, or the folder refused by every later run.
func notRunFile(f *safeio.File, dir string, own ...string) error {
	if f == nil || f.Target == "" || f.Path == "-" {
		return nil
	}
	di, err := os.Stat(dir)
	if err != nil {
		return err
	}
	pi, err := os.Stat(filepath.Dir(f.Target))
	if err != nil || !os.SameFile(di, pi) {
		return nil
	}
	name := filepath.Base(f.Target)
	recorded, err := safeio.Recorded(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	for _, o := range append(own, filepath.Join(dir, safeio.ManifestName)) {
		recorded = recorded || name == filepath.Base(o)
	}
	if recorded {
		return fmt.Errorf("--json %s is %s in --out-dir %s, one of the files this run keeps there (its checkpoint, result.json, lock and record of dstein's files); give --json a path outside the folder or another name", f.Path, filepath.Join(dir, name), dir)
	}
	return nil
}

func runBNNTrain(e *env, cfg ensemble.Config, out, jsonPath, dataDir string, resume bool, budget memlimit.Budget) error {
	if out == "" {
		return usagef("--out-dir DIR is required (the checkpoint and result.json go there)")
	}
	if !slices.Contains(dataset.Names, cfg.Data) {
		return usagef("unknown data set %q; want one of %s", cfg.Data, strings.Join(dataset.Names, ", "))
	}
	if !slices.Contains(bnn.Archs, cfg.Arch) {
		return usagef("unknown architecture %q; want one of %s", cfg.Arch, strings.Join(bnn.Archs, ", "))
	}
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	cfg = cfg.WithDefaults()
	// The estimate comes from the data files' headers and the
	// architecture, before anything large is read or built.
	data, err := dataset.Probe(cfg.Data, dataDir)
	if err != nil {
		return err
	}
	// A batch larger than the training set is refused from the headers,
	// before 60000 images are read for nothing.
	if nTrain := data.Train; cfg.TrainLimit == 0 || cfg.TrainLimit > nTrain {
		if cfg.Batch > nTrain {
			return usagef("--batch %d is more than the %d training examples of %s", cfg.Batch, nTrain, cfg.Data)
		}
	} else if cfg.Batch > cfg.TrainLimit {
		return usagef("--batch %d is more than the %d training examples that --train-limit keeps", cfg.Batch, cfg.TrainLimit)
	}
	need, err := ensemble.TrainMemory(cfg, data, resume)
	if err != nil {
		return err
	}
	if err := budget.Check(ensemble.Describe(cfg, data)+" ("+need.String()+")", need.Total()); err != nil {
		return err
	}
	if err := e.makeOutDir(out); err != nil {
		return err
	}
	lock, err := safeio.TryLock(filepath.Join(out, "train.lock"))
	var busy *safeio.Busy
	if errors.As(err, &busy) {
		return fmt.Errorf("another dstein is training in %s (it holds %s); wait for it to finish, or use another --out-dir", out, busy.Path)
	}
	if err != nil {
		return err
	}
	defer lock.Unlock()
	cp := filepath.Join(out, ensemble.CheckpointName)
	if !resume {
		if _, err := os.Lstat(cp); err == nil {
			return usagef("%s already holds a checkpoint: add --resume to continue that run, or choose another --out-dir", out)
		}
	}
	result := filepath.Join(out, "result.json")
	if err := safeio.Owned(result); err != nil {
		return err
	}
	plan := newPlan(e, cp)
	// The data files are inputs too: --json once replaced a labels file
	// (or the module cache's copy of MNIST) with the result.
	for _, f := range data.Files() {
		plan.Input(f)
	}
	outJSON := plan.Output(jsonPath, "--json")
	if err := plan.Check(); err != nil {
		return err
	}
	defer plan.Abort()
	if err := notRunFile(outJSON, out, cp, result, filepath.Join(out, "train.lock")); err != nil {
		return err
	}
	train, test, err := data.Load()
	if err != nil {
		return err
	}
	net, err := bnn.New(cfg.Arch, bnn.Shape{H: train.H, W: train.W, C: train.C}, train.Classes)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%s: %d training and %d test images of %d×%d×%d\n", cfg.Data, train.N, test.N, train.H, train.W, train.C)
	fmt.Fprint(e.stderr, net.Describe())
	var pb *progressbar.ProgressBar
	opt := ensemble.Options{Dir: out, Resume: resume, Log: func(s string) {
		if pb != nil {
			pb.Clear()
		}
		fmt.Fprintln(e.stderr, s)
	}}
	if e.terminal {
		opt.Progress = func(ev ensemble.Event) {
			if pb == nil || ev.Step == 1 {
				if pb != nil {
					pb.Finish()
				}
				pb = progressbar.NewOptions(ev.Steps, progressbar.OptionSetWriter(e.stderr), progressbar.OptionSetDescription(pbDesc(ev)),
					progressbar.OptionShowCount(), progressbar.OptionSetWidth(25), progressbar.OptionThrottle(200_000_000), progressbar.OptionClearOnFinish())
			}
			pb.Describe(fmt.Sprintf("%s  loss %.3f  accuracy %.3f", pbDesc(ev), ev.Loss, ev.Accuracy))
			pb.Set(ev.Step)
		}
	}
	res, err := ensemble.Train(e.ctx, cfg, train, test, opt)
	if pb != nil {
		pb.Finish()
	}
	if err != nil {
		if e.ctx.Err() != nil {
			if _, serr := os.Lstat(cp); serr == nil {
				return interrupted{fmt.Sprintf("interrupted; the last completed epoch is in %s: rerun with --resume to continue", cp)}
			}
			return interrupted{"interrupted before the first epoch completed; nothing written"}
		}
		return err
	}
	w := e.stdout
	fmt.Fprintf(w, "method     %s, %d × %s on %s, %d epoch(s), batch %d, seed %d\n", cfg.Method, cfg.Ensemble, cfg.Arch, cfg.Data, cfg.Epochs, cfg.Batch, cfg.Seed)
	fmt.Fprintf(w, "ensemble   test accuracy %.4f ± %.4f (binomial SE over %d test images; the spread between training seeds adds to it)\n", res.EnsembleAccuracy, res.EnsembleAccuracySE, res.TestImages)
	fmt.Fprintf(w, "members    %s\n", fmtAcc(res.MemberAccuracy))
	if len(res.PrefixAccuracy) > 1 {
		fmt.Fprintf(w, "first k    %s\n", fmtAcc(res.PrefixAccuracy))
	}
	if res.Alphas != nil {
		fmt.Fprintf(w, "boosting α %s\n", fmtAcc(res.Alphas))
	}
	if cfg.Spec().Joint && len(res.History) > 0 {
		fmt.Fprintf(w, "GF-SVGD    per epoch: repulsive/driving term, mean off-diagonal kernel, ESS of ρ/p_c (of %d)\n", cfg.Ensemble)
		for _, h := range res.History {
			fmt.Fprintf(w, "           epoch %d: %.3g, %.3g, %.2f\n", h.Epoch, h.Repulsion, h.KernelOffDiagonal, h.ImportanceESS)
		}
	}
	fmt.Fprintf(w, "weights    sha256 %s\n", res.WeightsSHA256)
	fmt.Fprintf(w, "time       %.1f s training, %.0f training examples/s over all networks\n", res.Seconds, res.ExamplesPerSecond)
	if err := e.ctx.Err(); err != nil {
		return interrupted{fmt.Sprintf("interrupted; the last completed epoch is in %s: rerun with --resume to continue", cp)}
	}
	if err := safeio.Replace(result, func(bw *bufio.Writer) error { return report.WriteJSON(bw, res) }); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s\n", result)
	if outJSON != nil {
		if err := outJSON.Write(func(bw *bufio.Writer) error { return report.WriteJSON(bw, res) }); err != nil {
			return err
		}
	}
	return commit(e, plan, func(format string, a ...any) { fmt.Fprintf(w, format, a...) })
}

func pbDesc(ev ensemble.Event) string {
	if ev.Member >= 0 {
		return fmt.Sprintf("member %d/%d epoch %d/%d", ev.Member+1, ev.Members, ev.Epoch+1, ev.Epochs)
	}
	return fmt.Sprintf("epoch %d/%d", ev.Epoch+1, ev.Epochs)
}

func fmtAcc(a []float64) string {
	s := make([]string, len(a))
	for i, v := range a {
		s[i] = fmt.Sprintf("%.4f", v)
	}
	return strings.Join(s, " ")
}
