package ensemble

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dstein/dstein/dataset"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/svgd"
)

// toyData makes a two-class problem on 6×6 images: class 1 images are
// brighter on the left half. It is learnable but not trivially so at 6×6 with
// noise.
func toyData(n int, seed uint64) *dataset.Set {
	r := rand.New(rand.NewPCG(seed, 1))
	s := &dataset.Set{Name: "toy", N: n, H: 6, W: 6, C: 1, Classes: 2, Pixels: make([]uint8, n*36), Labels: make([]uint8, n),
		Mean: []float64{0.5}, Std: []float64{0.25}}
	for i := range n {
		y := uint8(r.IntN(2))
		s.Labels[i] = y
		for p := range 36 {
			v := 128 + 40*r.NormFloat64()
			if (p%6 < 3) == (y == 1) {
				v += 30
			}
			s.Pixels[i*36+p] = uint8(min(255, max(0, v)))
		}
	}
	return s
}

func toyConfig(method string, n int) Config {
	return Config{Data: "toy", Arch: "mlp", Method: method, Ensemble: n, Epochs: 3, Batch: 16, Seed: 7, LearningRate: 0.01}
}

func TestMethodsLearn(t *testing.T) {
	train, test := toyData(640, 1), toyData(400, 2)
	for _, m := range Methods {
		res, err := Train(context.Background(), toyConfig(m, 3), train, test, Options{})
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		// Chance is 0.5; with 400 test examples its standard error is
		// 0.025, so 0.7 is eight standard errors above chance.
		if res.EnsembleAccuracy < 0.7 {
			t.Errorf("%s: ensemble accuracy %.3f, want ≥ 0.7 (chance 0.5)", m, res.EnsembleAccuracy)
		}
		if len(res.MemberAccuracy) != 3 || len(res.PrefixAccuracy) != 3 {
			t.Errorf("%s: %d member and %d prefix accuracies, want 3", m, len(res.MemberAccuracy), len(res.PrefixAccuracy))
		}
		if m == "benn" && len(res.Alphas) != 3 {
			t.Errorf("benn: %d coefficients, want 3", len(res.Alphas))
		}
		if m == "gfsvgd" {
			for _, h := range res.History {
				if !(h.Repulsion > 0) || !(h.ImportanceESS >= 1) || h.ImportanceESS > 3 || !(h.KernelOffDiagonal > 0) {
					t.Errorf("gfsvgd epoch %d diagnostics: repulsion %v, ESS %v, kernel %v", h.Epoch, h.Repulsion, h.ImportanceESS, h.KernelOffDiagonal)
				}
			}
		}
	}
}

// TestResume interrupts each method in the middle of an epoch, resumes from
// the checkpoint, and requires the same final weights and accuracy as an
// uninterrupted run.
func TestResume(t *testing.T) {
	train, test := toyData(320, 3), toyData(200, 4)
	for _, m := range []string{"gfsvgd", "bagging", "benn"} {
		cfg := toyConfig(m, 2)
		full := t.TempDir()
		want, err := Train(context.Background(), cfg, train, test, Options{Dir: full})
		if err != nil {
			t.Fatal(err)
		}
		wantState := readStates(t, full)
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		stopAt := 2 // the unit in which to stop, mid-way
		_, err = Train(ctx, cfg, train, test, Options{Dir: dir, Progress: func(ev Event) {
			unit := ev.Epoch
			if ev.Member >= 0 {
				unit = ev.Member*cfg.Epochs + ev.Epoch
			}
			if unit == stopAt && ev.Step == ev.Steps/2 {
				cancel()
			}
		}})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: interrupted run returned %v, want context.Canceled", m, err)
		}
		var logs []string
		got, err := Train(context.Background(), cfg, train, test, Options{Dir: dir, Resume: true, Log: func(s string) { logs = append(logs, s) }})
		if err != nil {
			t.Fatal(err)
		}
		if got.ResumedFrom != stopAt {
			t.Errorf("%s: resumed from unit %d, want %d (logs %q)", m, got.ResumedFrom, stopAt, logs)
		}
		if got.EnsembleAccuracy != want.EnsembleAccuracy || !reflect.DeepEqual(got.MemberAccuracy, want.MemberAccuracy) {
			t.Errorf("%s: resumed accuracy %v %v, uninterrupted %v %v", m, got.EnsembleAccuracy, got.MemberAccuracy, want.EnsembleAccuracy, want.MemberAccuracy)
		}
		if got.WeightsSHA256 != want.WeightsSHA256 || len(want.WeightsSHA256) != 64 {
			t.Errorf("%s: weight digests %s and %s", m, got.WeightsSHA256, want.WeightsSHA256)
		}
		if !reflect.DeepEqual(readStates(t, dir), wantState) {
			t.Errorf("%s: resumed run's final weights differ from the uninterrupted run's", m)
		}
	}
}

func readStates(t *testing.T, dir string) checkpoint {
	t.Helper()
	cp, err := readCheckpoint(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	cp.History, cp.Seconds = nil, 0 // timings differ
	return cp
}

func TestResumeRefusesOtherSettings(t *testing.T) {
	train, test := toyData(160, 3), toyData(100, 4)
	dir := t.TempDir()
	cfg := toyConfig("ste", 1)
	cfg.Epochs = 1
	if _, err := Train(context.Background(), cfg, train, test, Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	seed := cfg.Seed
	cfg.Seed++
	_, err := Train(context.Background(), cfg, train, test, Options{Dir: dir, Resume: true})
	if err == nil {
		t.Fatal("resuming with another seed was accepted")
	}
	// The message names the setting that differs, and no other.
	if want := fmt.Sprintf("(--seed %d in the checkpoint, %d now)", seed, seed+1); !strings.Contains(err.Error(), want) {
		t.Errorf("%v; want it to say %q", err, want)
	}
}

// A run without a regulariser resumes: gob leaves out a pointer to 0, and
// the resumed run once saw "Regularizer <nil> in the checkpoint,
// 0xc000… now". A run with another regulariser is refused by value.
func TestResumeWithoutRegularizer(t *testing.T) {
	train, test := toyData(160, 3), toyData(100, 4)
	dir := t.TempDir()
	cfg := toyConfig("bnnplus", 1)
	cfg.Epochs = 2
	cfg.Regularizer = new(0.0)
	ctx, cancel := context.WithCancel(context.Background())
	epochs := 0
	opt := Options{Dir: dir, Log: func(s string) {
		if strings.Contains(s, "epoch 1/2") {
			epochs++
			cancel()
		}
	}}
	if _, err := Train(ctx, cfg, train, test, opt); err == nil && epochs == 0 {
		t.Fatal("the first epoch never ended")
	}
	if _, err := Train(context.Background(), cfg, train, test, Options{Dir: dir, Resume: true}); err != nil {
		t.Fatalf("resuming a run without a regulariser: %v", err)
	}
	// bnn export reads the settings through the same decodedConfig (its
	// loader wants a real data set, which the toy data are not).
	cfg.Regularizer = new(1e-3)
	_, err := Train(context.Background(), cfg, train, test, Options{Dir: dir, Resume: true})
	if err == nil || !strings.Contains(err.Error(), "(--regularizer 0 in the checkpoint, 0.001 now)") {
		t.Errorf("another regulariser: %v; want it refused, naming both values", err)
	}
}

// TestCoresDoNotChangeResults trains GF-SVGD with 1 and 2 cores (the
// network-level test in package bnn covers products large enough to run in
// parallel blocks).
func TestCoresDoNotChangeResults(t *testing.T) {
	train, test := toyData(320, 5), toyData(100, 6)
	cfg := toyConfig("gfsvgd", 3)
	cfg.Epochs = 1
	run := func(procs int) checkpoint {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		dir := t.TempDir()
		if _, err := Train(context.Background(), cfg, train, test, Options{Dir: dir}); err != nil {
			t.Fatal(err)
		}
		return readStates(t, dir)
	}
	one := run(1)
	for _, procs := range []int{2, 16} {
		if !reflect.DeepEqual(one, run(procs)) {
			t.Fatalf("GF-SVGD weights differ between GOMAXPROCS 1 and %d", procs)
		}
	}
}

// TestRankWeights checks the weights GF-SVGD uses for each Config.Weights
// against the paper's formulas: rank weights γ_j = 1/H(μ_j), H(t) =
// #{l : μ_l ≥ t}/n, and self-normalised ratios, each normalised, with their
// effective sample sizes.
func TestRankWeights(t *testing.T) {
	logMu := []float64{0.5, -2, 3, 0.5}
	g := make([]float64, 4)
	gess := svgd.Weights(g, logMu, Config{Weights: "rank"}.WithDefaults().weighting(), 1, nil)
	// H(μ) = 3/4, 4/4, 1/4, 3/4 → γ = 4/3, 1, 4, 4/3, normalised.
	want := []float64{4.0 / 3, 1, 4, 4.0 / 3}
	var s, s2 float64
	for _, w := range want {
		s += w
		s2 += w * w
	}
	for i := range g {
		if math.Abs(g[i]-want[i]/s) > 1e-12 {
			t.Fatalf("rank weights %v, want %v/%v", g, want, s)
		}
	}
	if math.Abs(gess-s*s/s2) > 1e-12 {
		t.Errorf("rank ESS %v, want %v", gess, s*s/s2)
	}
	if (Config{}).WithDefaults().weighting() != svgd.Rank {
		t.Error("the default weights are not the rank weights")
	}
	// Self-normalised ratios exp(logMu)/Σ, and the importance ESS.
	var z, z2 float64
	for _, l := range logMu {
		z += math.Exp(l)
		z2 += math.Exp(2 * l)
	}
	if ess := svgd.ESS(logMu); math.Abs(ess-z*z/z2) > 1e-9 {
		t.Errorf("importance ESS %v, want %v", ess, z*z/z2)
	}
	self := Config{Weights: "self"}.weighting()
	svgd.Weights(g, logMu, self, 1, nil)
	for i, l := range logMu {
		if math.Abs(g[i]-math.Exp(l)/z) > 1e-12 {
			t.Fatalf("self-normalised weights %v", g)
		}
	}
	// Huge log ratios stay finite.
	for _, kind := range []svgd.Weighting{svgd.SelfNormalized, svgd.Rank} {
		svgd.Weights(g[:3], []float64{1e5, 1e5 - 1, -1e5}, kind, 1, nil)
		for _, v := range g[:3] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%v weights %v", kind, g[:3])
			}
		}
	}
}

// TestDirectionMatchesFormula takes one GF-SVGD step of three networks and
// compares the direction the ensemble applies to their binary weights with
// the paper's formula evaluated by brute force in float64 from the same
// particles, scores and log ratios:
//
//	Δw_i = Σ_j γ_j k(w_j, w_i) [s_j + (2/h)(w_i − w_j)],
//	k(a, b) = exp(−‖a − b‖²/h), h = med²/(2 log(n + 1)),
//
// with γ normalised. svgd computes in float64 and rounds once to float32, so
// each coordinate must lie within 2^−24 of the formula's value, relatively,
// plus 1e−12 of the sum of its terms' magnitudes (float64 rounding, mostly
// of the distances from norms and inner products). It then checks that the
// first Adam step moved each weight by lr·sign(Δw).
func TestDirectionMatchesFormula(t *testing.T) {
	train, test := toyData(160, 8), toyData(50, 9)
	for _, weights := range []string{"rank", "self"} {
		cfg := toyConfig("gfsvgd", 3)
		cfg.Weights = weights
		tr, err := newTrainer(cfg, train, test, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
		g := tr.m.(*gfsvgd)
		n, d := g.n, g.d
		x := func(i, k int) float64 { return float64(g.x[i*d+k]) }
		// Weights.
		w := make([]float64, n)
		var tot float64
		for j, lj := range g.logMu {
			if weights == "rank" {
				c := 0
				for _, l := range g.logMu {
					if l >= lj {
						c++
					}
				}
				w[j] = float64(n) / float64(c)
			} else {
				w[j] = math.Exp(lj - slices.Max(g.logMu))
			}
			tot += w[j]
		}
		for j := range w {
			w[j] /= tot
		}
		// Bandwidth from the median squared distance of the three pairs.
		sq := make([]float64, n*n)
		var pairs []float64
		for i := range n {
			for j := range i {
				var s float64
				for k := range d {
					e := x(i, k) - x(j, k)
					s += e * e
				}
				sq[i*n+j], sq[j*n+i] = s, s
				pairs = append(pairs, s)
			}
		}
		slices.Sort(pairs)
		h := pairs[1] / (2 * math.Log(float64(n)+1))
		if math.Abs(g.h-h) > 1e-9*h {
			t.Fatalf("%s: bandwidth %v, formula %v", weights, g.h, h)
		}
		var kmin float64 = 1
		for _, v := range sq {
			kmin = min(kmin, math.Exp(-v/h))
		}
		if kmin < 1e-3 {
			t.Fatalf("%s: smallest kernel value %v: the particles barely interact, a weak test", weights, kmin)
		}
		worst := 0.0
		lr := tr.lr(0, cfg.Epochs*tr.steps)
		moved := 0
		for i := range n {
			wi := tr.nets[i].BinaryVector(nil)
			for k := range d {
				var ref, mag float64
				for j := range n {
					c := w[j] * math.Exp(-sq[j*n+i]/h)
					sj := float64(g.s[j*d+k])
					rep := 2 / h * (x(i, k) - x(j, k))
					ref += c * (sj + rep)
					mag += c * (math.Abs(sj) + 2/h*(math.Abs(x(i, k))+math.Abs(x(j, k))))
				}
				got := float64(g.dst[i*d+k])
				tol := 0x1p-24*math.Abs(ref) + 1e-12*mag
				if e := math.Abs(got - ref); e > tol {
					t.Fatalf("%s: particle %d weight %d: direction %v, formula %v (error %.3g > %.3g)", weights, i, k, got, ref, e, tol)
				} else if ref != 0 {
					worst = max(worst, e/math.Abs(ref))
				}
				// Adam's first step is lr·Δ/(|Δ| + ε) ≈ lr·sign(Δ).
				old := x(i, k)
				if math.Abs(ref) > 1e-4 && math.Abs(old) < 1-2*lr {
					if e := math.Abs(float64(wi[k]) - (old + lr*ref/(math.Abs(ref)+1e-8))); e > 1e-6*lr+1e-7 {
						t.Fatalf("%s: particle %d weight %d moved from %v to %v, want a step of %v along %v", weights, i, k, old, wi[k], lr, ref)
					}
					moved++
				}
			}
		}
		if moved < n*d/2 {
			t.Errorf("%s: only %d of %d weight moves checked", weights, moved, n*d)
		}
		t.Logf("%s: %d weights, largest relative error %.3g, smallest kernel value %.3g", weights, n*d, worst, kmin)
	}
}

// TestCancelStopsAtStepBoundary cancels a run between two steps of its
// second epoch: training must stop there, return the context's error, and
// leave the checkpoint of the first epoch exactly as an uninterrupted run
// wrote it.
func TestCancelStopsAtStepBoundary(t *testing.T) {
	train, test := toyData(320, 3), toyData(200, 4)
	for _, m := range []string{"gfsvgd", "ste"} {
		cfg := toyConfig(m, 2)
		unit := func(ev Event) int {
			if ev.Member >= 0 {
				return ev.Member*cfg.Epochs + ev.Epoch
			}
			return ev.Epoch
		}
		// The checkpoint an uninterrupted run holds after its first unit.
		ref := t.TempDir()
		var first checkpoint
		if _, err := Train(context.Background(), cfg, train, test, Options{Dir: ref, Progress: func(ev Event) {
			if unit(ev) == 0 && ev.Step == ev.Steps {
				first = readStates(t, ref)
			}
		}}); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		var events []Event
		_, err := Train(ctx, cfg, train, test, Options{Dir: dir, Progress: func(ev Event) {
			events = append(events, ev)
			if unit(ev) == 1 && ev.Step == 5 {
				cancel()
			}
		}})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: canceled run returned %v", m, err)
		}
		last := events[len(events)-1]
		if unit(last) != 1 || last.Step != 5 || len(events) != last.Steps+5 {
			t.Errorf("%s: %d steps, the last %+v; want the run to stop after step 5 of the second epoch", m, len(events), last)
		}
		raw, err := readCheckpoint(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		if raw.Units != 1 || len(raw.History) != 1 {
			t.Errorf("%s: checkpoint after %d units with %d epoch logs, want 1", m, raw.Units, len(raw.History))
		}
		if !reflect.DeepEqual(readStates(t, dir), first) {
			t.Errorf("%s: the checkpoint of the canceled run differs from the first epoch's", m)
		}
	}
	// Canceled before the first step: nothing written.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	if _, err := Train(ctx, toyConfig("ste", 1), train, test, Options{Dir: dir}); !errors.Is(err, context.Canceled) {
		t.Fatalf("run canceled before it started returned %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, CheckpointName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run canceled before it started left a checkpoint (%v)", err)
	}
}

// TestCheckpointNotThroughLinks refuses to resume from a symbolic link or a
// directory in the checkpoint's place, and from a checkpoint of the earlier
// format.
func TestCheckpointNotThroughLinks(t *testing.T) {
	train, test := toyData(160, 3), toyData(100, 4)
	cfg := toyConfig("ste", 1)
	cfg.Epochs = 1
	real := t.TempDir()
	if _, err := Train(context.Background(), cfg, train, test, Options{Dir: real}); err != nil {
		t.Fatal(err)
	}
	resume := func(dir string) error {
		_, err := Train(context.Background(), cfg, train, test, Options{Dir: dir, Resume: true})
		return err
	}
	if err := resume(real); err != nil {
		t.Fatalf("resuming a finished run: %v", err)
	}
	link := t.TempDir()
	if err := os.Symlink(filepath.Join(real, CheckpointName), filepath.Join(link, CheckpointName)); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := resume(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("resuming through a link: %v", err)
	}
	other := t.TempDir()
	if err := os.Mkdir(filepath.Join(other, CheckpointName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := resume(other); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("resuming from a directory: %v", err)
	}
	// A checkpoint of the unnumbered earlier format.
	cp, err := readCheckpoint(real, 0)
	if err != nil {
		t.Fatal(err)
	}
	cp.Version = 0
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&cp); err != nil {
		t.Fatal(err)
	}
	old := t.TempDir()
	if err := os.WriteFile(filepath.Join(old, CheckpointName), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := resume(old); err == nil || !strings.Contains(err.Error(), "another version") {
		t.Errorf("resuming an old-format checkpoint: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	bad := []Config{
		{Method: "adaboost"},
		{Ensemble: -1},
		{Batch: 1},
		{LearningRate: math.NaN()},
		{Weights: "uniform"},
		{Bandwidth: "fixed"},
		{Temperature: -1},
	}
	for _, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v was accepted", c)
		}
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("defaults rejected: %v", err)
	}
}

// TestCheckpointChecksum: a byte changed anywhere in a checkpoint's
// message is found by its trailer's SHA-256 before training resumes or the
// networks are exported (gob decoded such files into other weights); the
// trailer itself is checked too; a checkpoint without a trailer (written
// before it) still reads.
func TestCheckpointChecksum(t *testing.T) {
	train, test := toyData(160, 3), toyData(100, 4)
	cfg := toyConfig("gfsvgd", 2)
	dir := t.TempDir()
	if _, err := Train(context.Background(), cfg, train, test, Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, CheckpointName)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(good[len(good)-trailerLen:len(good)-sha256.Size]) != checksumMagic {
		t.Fatalf("the checkpoint ends with %q; want the trailer", good[len(good)-trailerLen:])
	}
	n := len(good) - trailerLen
	for _, at := range []int{n / 10, n / 2, n * 9 / 10, n - 1, len(good) - 1} {
		bad := slices.Clone(good)
		bad[at] ^= 0x40
		if err := os.WriteFile(path, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		want := "checksum does not match"
		if _, err := readCheckpoint(dir, 0); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("byte %d of %d changed: readCheckpoint %v; want %q", at, len(good), err, want)
		}
		if _, err := LoadTrainedWithin(path, memlimit.Budget{}, "reading", 0); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("byte %d of %d changed: LoadTrainedWithin %v; want %q", at, len(good), err, want)
		}
		if _, err := Train(context.Background(), cfg, train, test, Options{Dir: dir, Resume: true}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("byte %d of %d changed: resume %v; want %q", at, len(good), err, want)
		}
	}
	// Without the trailer: the message alone, as before.
	if err := os.WriteFile(path, good[:n], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readCheckpoint(dir, 0); err != nil {
		t.Errorf("a checkpoint without a trailer: %v", err)
	}
	var h trainedHeader // export's first reading (the toy data set has no geometry to export with)
	if err := decodeCheckpoint(path, int64(n), &h); err != nil || h.Units != cfg.Epochs {
		t.Errorf("a checkpoint without a trailer: %v, %d units", err, h.Units)
	}
}

// A Ctrl-C while a unit's end evaluates the test set stops it between
// evaluation batches: the step returns the context's error and records
// nothing, and the unit's steps are done again on the next run. Before,
// the evaluation of a large network ran to its end (seconds) and the
// process was ended by the watchdog.
func TestEvaluationStopsWhenCanceled(t *testing.T) {
	train, test := toyData(160, 8), toyData(50, 9)
	for _, method := range []string{"gfsvgd", "ste"} {
		tr, err := newTrainer(toyConfig(method, 2), train, test, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for range tr.steps - 1 {
			if err := tr.Step(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		// The unit's last step trains, then evaluates under a canceled
		// context.
		if err := tr.Step(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: the last step of a unit under a canceled context: %v; want context.Canceled", method, err)
		}
		if tr.cp.Units != 0 || len(tr.cp.History) != 0 {
			t.Errorf("%s: a canceled evaluation recorded %d units", method, tr.cp.Units)
		}
	}
}

// A regulariser of 0 is none, not the default (--regularizer 0 once
// trained with 1e-6 and recorded it).
func TestRegularizerZeroKept(t *testing.T) {
	if r := (Config{Regularizer: new(0.0)}).WithDefaults().Regularizer; r == nil || *r != 0 {
		t.Errorf("explicit 0 became %v", r)
	}
	if r := (Config{}).WithDefaults().Regularizer; r == nil || *r != DefaultRegularizer {
		t.Errorf("unset became %v; want the default %v", r, DefaultRegularizer)
	}
}
