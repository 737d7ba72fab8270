// Command dsteinpeer is dstein's side of the peer comparison in
// benchmarks/peers: it builds one GF-SVGD problem on an RBM target, writes
// it (and the direction dstein computes for it) to a .npz file that the
// numpy and PyTorch peers read, and times dstein's computation of the
// direction.
//
// The problem is an RBM with d visible and M hidden ±1 units drawn by
// rbm.Random(d, M, 0.2236, 1, seed) (W entries N(0, 0.05), biases N(0, 1):
// the model of BENCHMARKS.md), the even partition of N(0, 1) (Γ(x) = sign x),
// the relaxed surrogate at temperature τ, and n particles drawn from N(0, 1)
// with rng.NewKey(seed).For(rng.Init), the first stage's initial draw.
//
// One iteration's direction is what gfsvgd.Sampler.Step feeds its optimizer
// with dstein's defaults (self-normalised weights, RBF kernel, h =
// med²/log(n+1) over the distinct pairs):
//
//  1. for each particle, the surrogate's log-density and score ∇log ρ(x_j)
//     and the log weight log ρ(x_j) − log p0(x_j) − log p*(Γ(x_j)), as the
//     sampler's evalAll computes them: chunks of particles on the cores,
//     each chunk's relaxation in one batch of its rows (two matrix
//     products), Γ of its particles, log p* of its states in one batch,
//     then each particle's log weight;
//  2. the weights w_j = (ρ/p_c)(x_j) / Σ_l (ρ/p_c)(x_l) (svgd.Weights);
//  3. the kernel and the direction Δx_i = Σ_j w_j [k(x_j, x_i) ∇log ρ(x_j) +
//     ∇_{x_j} k(x_j, x_i)] (svgd.Direction.Compute).
//
// "full" times steps 1–3 from the particles, "direction" step 3 alone.
//
// Usage:
//
//	dsteinpeer -n 20 -d 10 -seed 1 -out small.npz -check-sampler
//	dsteinpeer -n 1000 -d 100 -seed 1 -out p.npz -repeats 20
//
// It prints one JSON object on standard output.
package main

import (
	"archive/zip"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gfsvgd"
	"github.com/dstein/dstein/svgd"
	"github.com/dstein/dstein/transform"
)

// The RBM of BENCHMARKS.md: W entries with variance 0.05, biases N(0, 1).
const (
	wStd    = 0.2236
	biasStd = 1.0
)

// problem is one GF-SVGD iteration's input and dstein's workspace for it.
type problem struct {
	n, d, m int
	tau     float64
	model   *rbm.RBM
	tr      *transform.Transform
	rho     *transform.RelaxedSurrogate
	x       []float64 // n×d particles
	z       []int     // n×d states Γ(x)
	score   []float64 // n×d ∇log ρ(x_j)
	logw    []float64 // log ρ/p_c
	w       []float64 // normalised weights
	dst     []float64 // n×d direction
	dir     *svgd.Direction[float64]
	bw      kernel.Bandwidth
	h, ess  float64
	batch   transform.SurrogateBatch // the relaxation of all particles at once
	lpb     model.LogProbBatcher     // log p* of all states at once
	lr, lp  []float64                // their outputs
}

func newProblem(n, d, m int, tau float64, seed uint64) (*problem, error) {
	mod, err := rbm.Random(d, m, wStd, biasStd, seed)
	if err != nil {
		return nil, err
	}
	tr, err := transform.ForModel(nil, mod)
	if err != nil {
		return nil, err
	}
	rho, err := transform.NewRelaxed(tr, mod, tau)
	if err != nil {
		return nil, err
	}
	p := &problem{n: n, d: d, m: m, tau: rho.Temperature(), model: mod, tr: tr, rho: rho,
		x:     sampler.InitialParticles(nil, n, d, 0, 1, rng.NewKey(seed).For(rng.Init).Rand()),
		z:     make([]int, n*d),
		score: make([]float64, n*d),
		logw:  make([]float64, n),
		w:     make([]float64, n),
		dst:   make([]float64, n*d),
		dir:   svgd.New[float64](n, d, svgd.RBF),
		bw:    kernel.Bandwidth{}.Resolved(), // gfsvgd's default: svgd rule, distinct pairs, scale 1
	}
	p.batch, p.lpb = rho.NewBatch(n), mod.NewLogProbBatch(n)
	p.lr, p.lp = make([]float64, n), make([]float64, n)
	return p, nil
}

// Do evaluates the chunk of particles [lo, hi) as gfsvgd's evalTask: the
// surrogate's rows, Γ, log p*'s rows, then the log weights (the RBM gives
// every state positive probability, so its special cases for −Inf do not
// arise).
func (p *problem) Do(lo, hi int) {
	d := p.d
	p.batch.LogProbScoresRows(lo, hi, p.lr, p.score, p.x)
	for j := lo; j < hi; j++ {
		p.tr.Gamma(p.z[j*d:(j+1)*d], p.x[j*d:(j+1)*d])
	}
	p.lpb.LogProbRows(lo, hi, p.lp, p.z)
	for j := lo; j < hi; j++ {
		p.logw[j] = (p.lr[j] - p.tr.LogBase(p.x[j*d:(j+1)*d])) - p.lp[j]
	}
}

// full computes one iteration's direction from the particles.
func (p *problem) full() {
	parallel.For(p.n, parallel.GrainWork(p.n, p.batch.RowWork()+p.lpb.RowWork()+8*float64(p.d)), p)
	p.ess = svgd.Weights(p.w, p.logw, svgd.SelfNormalized, 1, nil)
	p.direction()
}

// direction computes the kernel and the direction from the scores and
// weights of the last full.
func (p *problem) direction() {
	p.h = p.dir.Compute(p.dst, p.x, p.score, p.w, p.bw)
}

// checkSampler runs one Step of dstein's GF-SVGD sampler (its defaults,
// but plain steps x ← x + 1·Δx) from the same particles and returns
// max|(x' − x) − Δx| / max|Δx|. Rounding of x + Δx alone makes this about
// 1e-16·(max|x| + max|Δx|)/max|Δx|.
func (p *problem) checkSampler() (float64, error) {
	z := slices.Clone(p.z) // Γ(x), from the last full
	s, err := gfsvgd.New(&sampler.Problem{Model: p.model, Transform: p.tr, N: p.n, X: p.x, Z: z, Key: rng.NewKey(0)},
		gfsvgd.Settings{Optimizer: gfsvgd.Plain, LearningRate: 1, Temperature: p.tau})
	if err != nil {
		return 0, err
	}
	if err := s.Step(context.Background()); err != nil {
		return 0, err
	}
	if bw := s.Last().Bandwidth; bw != p.h {
		return 0, fmt.Errorf("the sampler's bandwidth is %v, dsteinpeer's %v", bw, p.h)
	}
	var diff, scale float64
	for k, v := range s.Positions() {
		diff = math.Max(diff, math.Abs((v-p.x[k])-p.dst[k]))
		scale = math.Max(scale, math.Abs(p.dst[k]))
	}
	return diff / scale, nil
}

// timeIt returns the milliseconds of each of repeats calls of f after
// warmup calls.
func timeIt(f func(), warmup, repeats int) []float64 {
	for range warmup {
		f()
	}
	ms := make([]float64, repeats)
	for r := range ms {
		t0 := time.Now()
		f()
		ms[r] = float64(time.Since(t0).Nanoseconds()) / 1e6
	}
	return ms
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	m := len(s)
	return (s[(m-1)/2] + s[m/2]) / 2
}

func main() {
	n := flag.Int("n", 20, "number of particles")
	d := flag.Int("d", 10, "visible units (dimension)")
	m := flag.Int("m", 25, "hidden units")
	tau := flag.Float64("tau", transform.DefaultTemperature, "temperature τ of the relaxed surrogate")
	seed := flag.Uint64("seed", 1, "seed of the RBM (rng.Model stream) and of the particles (rng.Init)")
	out := flag.String("out", "", "write the problem and dstein's direction to this .npz file")
	repeats := flag.Int("repeats", 0, "timed repetitions of each measurement (0: no timing)")
	warmup := flag.Int("warmup", 2, "untimed repetitions before each measurement")
	check := flag.Bool("check-sampler", false, "compare the direction with one step of dstein's gfsvgd sampler")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed repetitions to this file")
	flag.Parse()

	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "dsteinpeer:", err)
		os.Exit(1)
	}
	if *n < 2 || *d < 1 || *m < 0 || *repeats < 0 || *warmup < 0 {
		fail(fmt.Errorf("need -n ≥ 2, -d ≥ 1, -m ≥ 0, -repeats ≥ 0, -warmup ≥ 0"))
	}
	p, err := newProblem(*n, *d, *m, *tau, *seed)
	if err != nil {
		fail(err)
	}
	p.full()
	res := map[string]any{"impl": "dstein", "n": *n, "d": *d, "m": *m, "tau": p.tau, "seed": *seed,
		"h": p.h, "weight_ess": p.ess, "gomaxprocs": runtime.GOMAXPROCS(0), "go": runtime.Version()}
	if *check {
		rel, err := p.checkSampler()
		if err != nil {
			fail(err)
		}
		res["sampler_rel_diff"] = rel
		if !(rel <= 1e-12) {
			fail(fmt.Errorf("the direction differs from the sampler's step by %.3g (relative) > 1e-12", rel))
		}
	}
	if *out != "" {
		if err := p.writeNPZ(*out); err != nil {
			fail(err)
		}
		res["file"] = *out
	}
	if *repeats > 0 {
		if *cpuprofile != "" {
			f, err := os.Create(*cpuprofile)
			if err != nil {
				fail(err)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				fail(err)
			}
			defer func() {
				pprof.StopCPUProfile()
				if err := f.Close(); err != nil {
					fail(err)
				}
			}()
		}
		full := timeIt(p.full, *warmup, *repeats)
		dir := timeIt(p.direction, *warmup, *repeats)
		res["full_ms"], res["direction_ms"] = median(full), median(dir)
		res["full_all_ms"], res["direction_all_ms"] = full, dir
	}
	b, err := json.Marshal(res)
	if err != nil {
		fail(err)
	}
	fmt.Println(string(b))
}

// writeNPZ writes the problem (W d×M, b, c, tau, X n×d, and n, d, M, seed
// as float64 scalars) and dstein's results (direction n×d, score n×d,
// logw, weights, h) as an uncompressed .npz archive of .npy arrays.
func (p *problem) writeNPZ(path string) error {
	W := make([]float64, p.d*p.m)
	for i := range p.d {
		for k := range p.m {
			W[i*p.m+k] = p.model.Weight(i, k)
		}
	}
	type array struct {
		name  string
		shape []int
		data  []float64
	}
	arrays := []array{
		{"W", []int{p.d, p.m}, W},
		{"b", []int{p.d}, p.model.VisibleBias()},
		{"c", []int{p.m}, p.model.HiddenBias()},
		{"tau", nil, []float64{p.tau}},
		{"X", []int{p.n, p.d}, p.x},
		{"direction", []int{p.n, p.d}, p.dst},
		{"score", []int{p.n, p.d}, p.score},
		{"logw", []int{p.n}, p.logw},
		{"weights", []int{p.n}, p.w},
		{"h", nil, []float64{p.h}},
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	for _, a := range arrays {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: a.name + ".npy", Method: zip.Store})
		if err != nil {
			f.Close()
			return err
		}
		if _, err := w.Write(npyHeader(a.shape)); err != nil {
			f.Close()
			return err
		}
		if err := binary.Write(w, binary.LittleEndian, a.data); err != nil {
			f.Close()
			return err
		}
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// npyHeader returns the header of a little-endian float64 C-order .npy
// array (format 1.0), padded so that the data start at a multiple of 64.
func npyHeader(shape []int) []byte {
	dims := make([]string, len(shape))
	for i, s := range shape {
		dims[i] = fmt.Sprint(s)
	}
	tuple := "(" + strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	tuple += ")"
	dict := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': %s, }", tuple)
	const prefix = 10 // magic (6), version (2), header length (2)
	pad := 64 - (prefix+len(dict)+1)%64
	if pad == 64 {
		pad = 0
	}
	dict += strings.Repeat(" ", pad) + "\n"
	h := append([]byte("\x93NUMPY\x01\x00"), byte(len(dict)), byte(len(dict)>>8))
	return append(h, dict...)
}
