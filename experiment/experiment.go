package experiment

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/dstein/dstein/experiment/journal"
	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/report"
	"github.com/dstein/dstein/sampler"
)

// Experiment is one figure of the paper.
type Experiment struct {
	// Name is the command-line name, Title a one-line description.
	Name, Title string
	// Trials is the default number of trials of a full run; quick and tiny
	// runs use fewer.
	Trials      int
	QuickTrials int
	// Settings, when the experiment has options of its own, is a struct
	// of them holding their defaults (see OptionValue for its tags); a
	// run's Config.Settings is a value of the same type.
	Settings any
	// Legacy gives, for an option added after journals were published,
	// the value it had in journals that do not record it when that is not
	// its default (the suite's estimates: frequencies before round three,
	// Rao–Blackwellised since).
	Legacy map[string]float64
	// Setting names the swept quantity (the x of the table).
	Setting string
	// UsesUAI experiments accept a directory of UAI networks
	// (Config.UAIDir).
	UsesUAI bool
	// MethodNames, when not nil, lists the methods a run may be limited
	// to (Config.Methods, --methods); experiments without it run all of
	// theirs.
	MethodNames func() []string
	// UsesVariants experiments compare the GF-SVGD variants that
	// Config.Variants names.
	UsesVariants bool
	// Unsharded experiments (one long trial) refuse Config.Shard.
	Unsharded bool
	body      func(r *runner) (*Result, error)
}

var registry = map[string]*Experiment{}

func register(e *Experiment) { registry[e.Name] = e }

// Names lists the experiments in alphabetical order.
func Names() []string {
	var out []string
	for k := range registry {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// NamesWhere lists, in name order, the experiments for which has is
// true (those that take --variants, say).
func NamesWhere(has func(*Experiment) bool) []string {
	var out []string
	for _, n := range Names() {
		if has(registry[n]) {
			out = append(out, n)
		}
	}
	return out
}

// Get returns the named experiment.
func Get(name string) (*Experiment, error) {
	e, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown experiment %q; want one of %s", name, strings.Join(Names(), ", "))
	}
	return e, nil
}

// Run runs the experiment (resuming from DIR/NAME.trials.csv when it
// exists), writes DIR/NAME.csv, DIR/NAME.png and DIR/NAME.svg, and returns
// the summary. Before any work it checks that none of those files exists
// unless dstein wrote it (safeio.Owned), that the journal can be resumed,
// and that no other run holds it; it writes them only after every trial is
// done, and nothing at all when ctx is canceled (the journal keeps the
// finished trials).
func (e *Experiment) Run(ctx context.Context, cfg Config) (res *Result, err error) {
	created, err := safeio.MakeDir(cfg.Out)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			safeio.RemoveEmpty(created)
		}
	}()
	cfg, j, err := e.prepare(cfg)
	if err != nil {
		return nil, err
	}
	defer j.Close(false)
	r := &runner{ctx: ctx, cfg: cfg, name: e.Name, trials: cfg.trials, j: j, setting: e.Setting, presets: map[string]string{},
		requested: map[journal.Key]bool{}, methods: map[string]bool{}}
	res, err = e.body(r)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	r.flushLoaded()
	if other := j.OtherMethods(r.methods); len(other) > 0 {
		r.logf("%s: %s holds trials of %s, which this run does not use; they are kept and left out of the tables", e.Name, j.Path(), strings.Join(other, ", "))
	}
	res.Name, res.Loaded = e.Name, r.loaded
	// Every output in one batch, with the journal's deferred writes: a
	// signal stops it before its first rename, or lets it finish.
	files := e.OutputsFor(cfg.Out, !cfg.NoSVG)
	var b safeio.Batch
	defer b.Abort()
	if err := j.Finish(&b); err != nil {
		return nil, err
	}
	if err := addCSV(&b, files[0], e.Name, res.Rows); err != nil {
		return nil, err
	}
	if r.fig != nil {
		add := r.fig.AddTo
		if cfg.NoSVG {
			add = r.fig.AddPNG
		}
		if err := add(&b, filepath.Join(cfg.Out, e.Name)); err != nil {
			return nil, err
		}
	}
	if cfg.Text {
		txt := filepath.Join(cfg.Out, e.Name+".txt")
		if err := b.Replace(txt, func(w *bufio.Writer) error {
			fmt.Fprintf(w, "%s: %s\n\n", e.Name, e.Title)
			PrintTable(w, res)
			return nil
		}); err != nil {
			return nil, err
		}
		files = append(files, txt)
	}
	for _, x := range cfg.extra {
		if err := b.Rewrite(x.path, x.fill); err != nil {
			return nil, err
		}
	}
	if err := b.Commit(ctx); err != nil {
		return nil, err
	}
	if err := j.PackNow(); err != nil {
		return nil, err
	}
	res.Files = append(files, res.Files...)
	return res, nil
}

// Outputs returns the files that Run writes in dir: NAME.csv, NAME.png
// and NAME.svg (the trial journal aside; NAME.txt too with Config.Text).
func (e *Experiment) Outputs(dir string) []string { return e.OutputsFor(dir, true) }

// OutputsFor is Outputs, without NAME.svg when svg is false
// (Config.NoSVG).
func (e *Experiment) OutputsFor(dir string, svg bool) []string {
	out := []string{filepath.Join(dir, e.Name+".csv"), filepath.Join(dir, e.Name+".png")}
	if svg {
		out = append(out, filepath.Join(dir, e.Name+".svg"))
	}
	return out
}

// Check does what Run does before its work, and nothing else: it checks
// the options, the UAI networks, the output files and the journal, takes
// the journal's lock and releases it. A command that runs several
// experiments checks them all first.
func (e *Experiment) Check(cfg Config) error {
	created, err := safeio.MakeDir(cfg.Out)
	if err != nil {
		return err
	}
	defer safeio.RemoveEmpty(created)
	_, j, err := e.prepare(cfg)
	if err != nil {
		return err
	}
	j.Close(false)
	return nil
}

// TrialsFor returns the number of trials a run makes in mode: trials
// when it is positive (--trials), else the mode's.
func (e *Experiment) TrialsFor(mode Mode, trials int) int {
	if trials > 0 {
		return trials
	}
	switch mode {
	case Full:
		return e.Trials
	case Quick:
		return e.QuickTrials
	}
	return 2
}

// prepare completes cfg and opens the journal (see Run).
func (e *Experiment) prepare(cfg Config) (Config, *journal.Journal, error) {
	opts, err := e.encode(cfg.Settings)
	if err != nil {
		return cfg, nil, err
	}
	if cfg.settings, err = e.decode(opts); err != nil {
		return cfg, nil, err
	}
	cfg.options = opts
	cfg.defaults = e.defaultOptions()
	for k, old := range e.Legacy {
		cfg.defaults[k] = old
	}
	if len(cfg.Variants) > 0 && !e.UsesVariants {
		return cfg, nil, fmt.Errorf("experiment %s compares no GF-SVGD variants (--variants applies to %s)", e.Name, strings.Join(NamesWhere(func(e *Experiment) bool { return e.UsesVariants }), ", "))
	}
	if err := e.CheckMethods(cfg.Methods); err != nil {
		return cfg, nil, err
	}
	// A run on a GPU fails here, before any work, where there is none
	// (a merge's offline run computes nothing and needs none).
	if !cfg.offline {
		if err := sampler.CheckDevice(deviceOf(cfg.settings)); err != nil {
			return cfg, nil, err
		}
	}
	if cfg.UAIDir != "" {
		if !e.UsesUAI {
			return cfg, nil, fmt.Errorf("experiment %s takes no UAI networks (--uai)", e.Name)
		}
		in, err := uaiInputs(cfg.UAIDir)
		if err != nil {
			return cfg, nil, err
		}
		cfg.inputs = in
	}
	trials := e.TrialsFor(cfg.Mode, cfg.Trials)
	if err := cfg.Shard.Validate(); err != nil {
		return cfg, nil, err
	}
	if cfg.Shard.K > trials {
		// Trial t is shard t mod N + 1's: this one would hold none, and
		// merge would find no journal of it.
		return cfg, nil, fmt.Errorf("shard %d/%d holds no trial: %s runs %d trials, so at most %d shards hold any", cfg.Shard.K, cfg.Shard.N, e.Name, trials, trials)
	}
	if e.Unsharded && cfg.Shard.N > 0 {
		return cfg, nil, fmt.Errorf("experiment %s is one trial and is not sharded: run it whole", e.Name)
	}
	cfg.trials = trials
	if info, err := os.Stat(cfg.Out); err != nil || !info.IsDir() {
		if err == nil {
			err = fmt.Errorf("not a directory")
		}
		return cfg, nil, fmt.Errorf("output directory %s: %w", cfg.Out, err)
	}
	outputs := e.OutputsFor(cfg.Out, !cfg.NoSVG)
	if cfg.Text {
		outputs = append(outputs, filepath.Join(cfg.Out, e.Name+".txt"))
	}
	for _, f := range outputs {
		if err := safeio.Owned(f); err != nil {
			return cfg, nil, err
		}
	}
	j, err := journal.Open(journal.Spec{Dir: cfg.dir(), Name: e.Name, Defaults: cfg.defaults, SelectOnly: e.selectOnly(),
		Restart: cfg.Restart, Pack: cfg.Pack, Budget: cfg.Budget, Log: cfg.Log,
		Want: journal.Settings{Seed: cfg.Seed, Mode: cfg.Mode.String(), Options: cfg.options, Version: cfg.Version,
			Inputs: cfg.inputs, Trials: cfg.trials, Shard: cfg.Shard.String(), Selected: cfg.Methods}})
	if err != nil {
		return cfg, nil, err
	}
	return cfg, j, nil
}

// PrintTable writes the summary as an aligned table, one block per metric
// (only the metrics in res.Show when it is set; the CSV has them all).
func PrintTable(w io.Writer, res *Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	show := map[string]bool{}
	for _, m := range res.Show {
		show[m] = true
	}
	metric := ""
	for _, r := range res.Rows {
		if len(show) > 0 && !show[r.Metric] {
			continue
		}
		if r.Metric != metric {
			if metric != "" {
				fmt.Fprintln(tw, "\t\t\t\t\t")
			}
			metric = r.Metric
			fmt.Fprintf(tw, "%s\tmethod\t%s\tmean\tSE\ttrials\t\n", r.Metric, r.Setting)
		}
		se := sig(r.SE)
		if r.Trials < 2 {
			se = "—" // one trial measures no spread (the CSV's se is 0)
		}
		fmt.Fprintf(tw, "\t%s\t%s\t%s\t%s\t%d\t\n", r.Method, report.FormatValue(r.X), sig(r.Mean), se, r.Trials)
	}
	tw.Flush()
	for _, n := range res.Notes {
		fmt.Fprintln(w, n)
	}
}

func sig(v float64) string {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%.4g", v)
}

// series builds plot series of the mean with ±SE bars for one metric, in
// the metric's own units (a panel with LogY draws them on a log scale and
// cuts bars that reach 0), one per method in the given order; a method's
// style index is its place in methods, so that it looks the same in every
// panel.
func series(rows []Row, metric string, methods []string, labels map[string]string) []report.Series {
	var out []report.Series
	for k, m := range methods {
		s := report.Series{Name: labels[m], ColorIndex: k}
		if s.Name == "" {
			s.Name = m
		}
		for _, r := range rows {
			if r.Metric != metric || r.Method != m {
				continue
			}
			s.X = append(s.X, r.X)
			s.Y = append(s.Y, r.Mean)
			s.Lo = append(s.Lo, r.Mean-r.SE)
			s.Hi = append(s.Hi, r.Mean+r.SE)
		}
		if len(s.X) > 0 {
			out = append(out, s)
		}
	}
	return out
}
