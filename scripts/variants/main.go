// Command variants compares GF-SVGD variants with exact i.i.d. sampling and
// Gibbs on the 10×10 field Ising grid and the RBM d = 100, M = 25, on paired
// trials (the same trial seed for every method).
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/metrics"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gfsvgd"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/transform"
)

type variant struct {
	name  string
	kind  string // exact, gibbs, gfsvgd
	iters int    // GF-SVGD iterations or Gibbs sweeps
	tau   float64
	set   gfsvgd.Settings
}

func bw(scale float64) kernel.Bandwidth { return kernel.Bandwidth{Scale: scale} }

var all = []variant{
	{name: "exact", kind: "exact"},
	{name: "gibbs500", kind: "gibbs", iters: 500},
	{name: "default", kind: "gfsvgd", iters: 500},
	{name: "bw16", kind: "gfsvgd", iters: 500, set: gfsvgd.Settings{Bandwidth: bw(16)}},
	{name: "bw4", kind: "gfsvgd", iters: 500, set: gfsvgd.Settings{Bandwidth: bw(4)}},
	{name: "bw64", kind: "gfsvgd", iters: 500, set: gfsvgd.Settings{Bandwidth: bw(64)}},
	{name: "tau0.1", kind: "gfsvgd", iters: 500, tau: 0.1},
	{name: "tau0.1-bw16", kind: "gfsvgd", iters: 500, tau: 0.1, set: gfsvgd.Settings{Bandwidth: bw(16)}},
	{name: "beta0.2-anneal300", kind: "gfsvgd", iters: 500, set: gfsvgd.Settings{WeightPower: 0.2, WeightAnneal: 300}},
	{name: "beta0.2-anneal300-bw16", kind: "gfsvgd", iters: 500, set: gfsvgd.Settings{WeightPower: 0.2, WeightAnneal: 300, Bandwidth: bw(16)}},
	{name: "beta0.1", kind: "gfsvgd", iters: 500, set: gfsvgd.Settings{WeightPower: 0.1}},
	{name: "coord", kind: "gfsvgd", iters: 500, set: gfsvgd.Settings{Kernel: gfsvgd.Coordinatewise}},
	{name: "coord-200", kind: "gfsvgd", iters: 200, set: gfsvgd.Settings{Kernel: gfsvgd.Coordinatewise}},
	{name: "coord-beta0.2", kind: "gfsvgd", iters: 200, set: gfsvgd.Settings{Kernel: gfsvgd.Coordinatewise, WeightPower: 0.2, WeightAnneal: 150}},
	{name: "bw16+sweeps5", kind: "gfsvgd", iters: 500, set: gfsvgd.Settings{Bandwidth: bw(16), Sweeps: 5}},
	{name: "bw16+ssweeps5", kind: "gfsvgd", iters: 500, set: gfsvgd.Settings{Bandwidth: bw(16), Sweeps: 5, Stratified: true}},
	{name: "bw16-100+ssweeps5", kind: "gfsvgd", iters: 100, set: gfsvgd.Settings{Bandwidth: bw(16), Sweeps: 5, Stratified: true}},
	{name: "bw16-100+ssweeps20", kind: "gfsvgd", iters: 100, set: gfsvgd.Settings{Bandwidth: bw(16), Sweeps: 20, Stratified: true}},
	{name: "bw16-100+sweeps20", kind: "gfsvgd", iters: 100, set: gfsvgd.Settings{Bandwidth: bw(16), Sweeps: 20}},
	{name: "default-100", kind: "gfsvgd", iters: 100},
	{name: "bw16-100", kind: "gfsvgd", iters: 100, set: gfsvgd.Settings{Bandwidth: bw(16)}},
	{name: "bw4-100", kind: "gfsvgd", iters: 100, set: gfsvgd.Settings{Bandwidth: bw(4)}},
	{name: "default-100+ssweeps10", kind: "gfsvgd", iters: 100, set: gfsvgd.Settings{Sweeps: 10, Stratified: true}},
	{name: "default-100+sweeps10", kind: "gfsvgd", iters: 100, set: gfsvgd.Settings{Sweeps: 10}},
	{name: "bw16-100+ssweeps10", kind: "gfsvgd", iters: 100, set: gfsvgd.Settings{Bandwidth: bw(16), Sweeps: 10, Stratified: true}},
	{name: "ssweeps10-only", kind: "gfsvgd", iters: 0, set: gfsvgd.Settings{Sweeps: 10, Stratified: true}},
	{name: "sweeps10-only", kind: "gfsvgd", iters: 0, set: gfsvgd.Settings{Sweeps: 10}},
	{name: "bw16-200", kind: "gfsvgd", iters: 200, set: gfsvgd.Settings{Bandwidth: bw(16)}},
	{name: "bw32-100", kind: "gfsvgd", iters: 100, set: gfsvgd.Settings{Bandwidth: bw(32)}},
	{name: "bw16-lr0.2-100", kind: "gfsvgd", iters: 100, set: gfsvgd.Settings{Bandwidth: bw(16), LearningRate: 0.2}},
	{name: "bw16-50", kind: "gfsvgd", iters: 50, set: gfsvgd.Settings{Bandwidth: bw(16)}},
	{name: "default-50", kind: "gfsvgd", iters: 50},
	{name: "default-200", kind: "gfsvgd", iters: 200},
	{name: "beta0.3-100", kind: "gfsvgd", iters: 100, set: gfsvgd.Settings{WeightPower: 0.3}},
	{name: "default-50+ssweeps5", kind: "gfsvgd", iters: 50, set: gfsvgd.Settings{Sweeps: 5, Stratified: true}},
	{name: "default-100+ssweeps30", kind: "gfsvgd", iters: 100, set: gfsvgd.Settings{Sweeps: 30, Stratified: true}},
	{name: "ssweeps30-only", kind: "gfsvgd", iters: 0, set: gfsvgd.Settings{Sweeps: 30, Stratified: true}},
	{name: "sweeps30-only", kind: "gfsvgd", iters: 0, set: gfsvgd.Settings{Sweeps: 30}},
	{name: "ssweeps20-only", kind: "gfsvgd", iters: 0, set: gfsvgd.Settings{Sweeps: 20, Stratified: true}},
	{name: "sweeps20-only", kind: "gfsvgd", iters: 0, set: gfsvgd.Settings{Sweeps: 20}},
	{name: "ssweeps5-only", kind: "gfsvgd", iters: 0, set: gfsvgd.Settings{Sweeps: 5, Stratified: true}},
	{name: "ssweeps100-only", kind: "gfsvgd", iters: 0, set: gfsvgd.Settings{Sweeps: 100, Stratified: true}},
}

type problem struct {
	name  string
	m     model.Model
	t     *transform.Transform
	truth exact.Truth
	ref   *metrics.Reference
}

func isingGrid(seed uint64) (model.Model, error) {
	g := rng.New(seed, rng.StreamModel)
	f := make([]float64, 100)
	for i := range f {
		f[i] = -0.2 + 0.4*g.Float64()
	}
	return ising.Grid(10, 10, false, 0.1, f)
}

func newProblem(name string, refN int) (*problem, error) {
	var m model.Model
	var err error
	switch name {
	case "ising":
		m, err = isingGrid(1)
	case "rbm":
		m, err = rbm.Random(100, 25, math.Sqrt(0.05), 1, 1)
	default:
		err = fmt.Errorf("unknown model %q", name)
	}
	if err != nil {
		return nil, err
	}
	truth, err := exact.For(m)
	if err != nil {
		return nil, err
	}
	t, err := transform.ForModel(nil, m)
	if err != nil {
		return nil, err
	}
	d := m.Dim()
	refS := make([]int, refN*d)
	truth.Sample(refS, rng.New(1, rng.Trial(rng.StreamSample, 1<<20)))
	ref := metrics.NewReference(&sampler.Samples{N: refN, D: d, Z: refS})
	return &problem{name: name, m: m, t: t, truth: truth, ref: ref}, nil
}

// runOnce returns the samples of one run and its wall time.
func runOnce(p *problem, v variant, n int, seed uint64) (*sampler.Samples, float64, float64, error) {
	start := time.Now()
	d := p.m.Dim()
	switch v.kind {
	case "exact":
		s := sampler.NewSamples(n, d)
		p.truth.Sample(s.Z, rng.New(seed, rng.StreamSample))
		return s, time.Since(start).Seconds(), 0, nil
	case "gibbs":
		g, err := gibbs.New(p.m, p.t, n, gibbs.Settings{}, seed)
		if err != nil {
			return nil, 0, 0, err
		}
		out := sampler.Run(context.Background(), g, sampler.RunOptions{Iters: v.iters})
		if out.Err != nil {
			return nil, 0, 0, out.Err
		}
		return g.Samples(), time.Since(start).Seconds(), 0, nil
	}
	rho, err := transform.ByName("relaxed", p.m, p.t, v.tau)
	if err != nil {
		return nil, 0, 0, err
	}
	s, err := gfsvgd.New(p.m, p.t, rho, n, v.set, rng.New(seed, rng.StreamInit))
	if err != nil {
		return nil, 0, 0, err
	}
	out := sampler.Run(context.Background(), s, sampler.RunOptions{Iters: v.iters})
	if out.Err != nil {
		return nil, 0, 0, out.Err
	}
	res, err := s.Result()
	if err != nil {
		return nil, 0, 0, err
	}
	return res.Samples, time.Since(start).Seconds(), res.WeightESS, nil
}

type stat struct{ mse, mmd, sec, ess []float64 }

// ratio returns ΣA/ΣB over paired trials and its delta-method SE.
func ratio(a, b []float64) (float64, float64) {
	var sa, sb float64
	for t := range a {
		sa += a[t]
		sb += b[t]
	}
	r := sa / sb
	T := float64(len(a))
	var v float64
	for t := range a {
		e := a[t] - r*b[t]
		v += e * e
	}
	if len(a) > 1 {
		v /= T - 1
	}
	return r, math.Sqrt(v/T) / (sb / T)
}

func mean(a []float64) float64 {
	var s float64
	for _, v := range a {
		s += v
	}
	return s / float64(len(a))
}

func main() {
	models := flag.String("models", "ising,rbm", "models")
	nsF := flag.String("ns", "20,50,100,200", "sample sizes")
	trials := flag.Int("trials", 5, "paired trials")
	names := flag.String("variants", "default,bw16", "variants (exact and gibbs500 are always run)")
	refN := flag.Int("ref", 20000, "reference size")
	raw := flag.String("raw", "", "append per-trial rows to this TSV")
	flag.Parse()
	var ns []int
	for _, f := range strings.Split(*nsF, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		ns = append(ns, n)
	}
	byName := map[string]variant{}
	for _, v := range all {
		byName[v.name] = v
	}
	vs := []variant{byName["exact"], byName["gibbs500"]}
	for _, name := range strings.Split(*names, ",") {
		v, ok := byName[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown variant %q\n", name)
			os.Exit(2)
		}
		vs = append(vs, v)
	}
	var rawF *os.File
	if *raw != "" {
		var err error
		if rawF, err = os.OpenFile(*raw, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer rawF.Close()
	}
	for _, mn := range strings.Split(*models, ",") {
		p, err := newProblem(mn, *refN)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		means := p.truth.Result().Means
		for _, n := range ns {
			st := make([]stat, len(vs))
			for tr := range *trials {
				seed := uint64(1000 + tr)
				for k, v := range vs {
					s, sec, ess, err := runOnce(p, v, n, seed)
					if err != nil {
						fmt.Fprintf(os.Stderr, "%s %s n=%d trial %d: %v\n", mn, v.name, n, tr, err)
						os.Exit(1)
					}
					mse := metrics.MSE(sampler.Means(p.m, sampler.Marginals(p.m, s)), means)
					mmd := p.ref.MMD2(s)
					st[k].mse = append(st[k].mse, mse)
					st[k].mmd = append(st[k].mmd, mmd)
					st[k].sec = append(st[k].sec, sec)
					st[k].ess = append(st[k].ess, ess)
					if rawF != nil {
						fmt.Fprintf(rawF, "%s\t%s\t%d\t%d\t%g\t%g\t%g\t%g\n", mn, v.name, n, tr, mse, mmd, sec, ess)
					}
				}
			}
			fmt.Printf("## %s n=%d trials=%d (exact: MSE %.3g, MMD² %.3g; gibbs500 %.3fs)\n", mn, n, *trials, mean(st[0].mse), mean(st[0].mmd), mean(st[1].sec))
			for k, v := range vs {
				rm, sm := ratio(st[k].mse, st[0].mse)
				rd, sd := ratio(st[k].mmd, st[0].mmd)
				fmt.Printf("%-26s MSE %.3g (×%.2f ± %.2f)  MMD² %.3g (×%.2f ± %.2f)  time %.3fs (×%.2f gibbs500)  ESS %.1f\n",
					v.name, mean(st[k].mse), rm, sm, mean(st[k].mmd), rd, sd, mean(st[k].sec), mean(st[k].sec)/mean(st[1].sec), mean(st[k].ess))
			}
		}
	}
}
