package experiment

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Status is how a result answers its claim.
type Status int

const (
	// NotJudged results have no verdict function: dstein's own questions
	// whose answer EXPERIMENTS.md gives in prose, and results too small
	// to decide.
	NotJudged Status = iota
	Holds
	Partly
	Fails
)

func (s Status) String() string {
	switch s {
	case Holds:
		return "holds"
	case Partly:
		return "partly holds"
	case Fails:
		return "fails"
	}
	return "not judged"
}

// MarshalText writes the status as its String.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a status that MarshalText wrote.
func (s *Status) UnmarshalText(b []byte) error {
	for _, c := range []Status{NotJudged, Holds, Partly, Fails} {
		if string(b) == c.String() {
			*s = c
			return nil
		}
	}
	return fmt.Errorf("verdict status %q; want holds, partly holds, fails or not judged", b)
}

// Verdict is what a result's rows say about its claim, with the numbers
// that decide it.
type Verdict struct {
	Status  Status `json:"status"`
	Because string `json:"because"`
}

func (v Verdict) String() string {
	if v.Because == "" {
		return v.Status.String()
	}
	return v.Status.String() + ": " + v.Because
}

// Sentence says the verdict as a sentence about the claim.
func (v Verdict) Sentence() string {
	if v.Status == NotJudged {
		return "Not judged: " + v.Because + "."
	}
	return "The claim " + v.Status.String() + ": " + v.Because + "."
}

// VerdictScale says at what scale a verdict of a run in mode m judges its
// claim, for the label of a verdict: empty for a full run.
func (m Mode) VerdictScale() string {
	switch m {
	case Tiny:
		return "at --tiny's scale (a check that the experiment runs, not a test of the claim)"
	case Quick:
		return "at --quick's scale (fewer trials and smaller settings than the paper's; the full run may judge otherwise)"
	}
	return ""
}

// A judge computes a result's verdict from its summary rows (NAME.csv) in
// the mode of the run.
type judge func(rows []Row, mode Mode) Verdict

// Judge returns the verdict of the result whose rows are rows.
func (p Reproduction) Judge(rows []Row, mode Mode) Verdict {
	if p.judge == nil {
		return Verdict{Because: "dstein's own question, answered in EXPERIMENTS.md's prose and the printed table"}
	}
	// The judges compare means beyond their standard errors: rows of one
	// trial have none (an experiment --trials 1 printed "the claim fails"
	// where its numbers said otherwise). DISCS judges single runs by their
	// ESS and the BNN experiment by its test set's binomial error.
	if !p.singleRun() && len(rows) > 0 && !slices.ContainsFunc(rows, func(r Row) bool { return r.Trials >= 2 }) {
		return Verdict{Because: "one trial: no standard errors to judge the claim by (run with --trials 2 or more)"}
	}
	return p.judge(rows, mode)
}

// singleRun says whether the result's judge decides from one run: DISCS
// (its ESS) and the BNN experiment (the test set's binomial error).
func (p Reproduction) singleRun() bool {
	return p.Name == "discs" || p.Name == "bnn"
}

// ReadRows reads an experiment's summary CSV (NAME.csv: experiment,
// method, preset, setting, x, metric, mean, se, trials).
func ReadRows(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readRows(f, path)
}

func readRows(r io.Reader, path string) ([]Row, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	want := []string{"experiment", "method", "preset", "setting", "x", "metric", "mean", "se", "trials"}
	if strings.Join(head, ",") != strings.Join(want, ",") {
		return nil, fmt.Errorf("%s: header %q; want %q", path, strings.Join(head, ","), strings.Join(want, ","))
	}
	var rows []Row
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		num := func(i int) float64 {
			if err != nil {
				return 0
			}
			var v float64
			if v, err = strconv.ParseFloat(rec[i], 64); err != nil {
				err = fmt.Errorf("%s line %d: %s %q is not a number", path, line, want[i], rec[i])
			}
			return v
		}
		row := Row{Method: rec[1], Preset: rec[2], Setting: rec[3], X: num(4), Metric: rec[5], Mean: num(6), SE: num(7), Trials: int(num(8))}
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
}

// byX is one method's metric by x.
type byX map[float64]Row

// pick is one series' metric by x (a series is a Row's Method).
func pick(rows []Row, series, metric string) byX {
	s := byX{}
	for _, r := range rows {
		if r.Method == series && r.Metric == metric {
			s[r.X] = r
		}
	}
	return s
}

func (s byX) xs() []float64 {
	out := make([]float64, 0, len(s))
	for x := range s {
		out = append(out, x)
	}
	sort.Float64s(out)
	return out
}

// below reports whether a's mean is below b's beyond their noise: by more
// than two standard errors of the difference, as if the two means were
// independent (the methods of one trial share its seed, which makes the
// difference less noisy: the rule is conservative). A row of one trial has
// no standard error (its CSV's 0 is none measured, not an exact value), so
// nothing is below it or it beyond noise.
func below(a, b Row) bool {
	if a.Trials < 2 || b.Trials < 2 {
		return false
	}
	return b.Mean-a.Mean > 2*math.Hypot(a.SE, b.SE)
}

// logSlope is the least-squares slope of log mean against log x over the
// byX' positive points (NaN with fewer than two).
func logSlope(s byX) float64 {
	var xs, ys []float64
	for _, x := range s.xs() {
		if x > 0 && s[x].Mean > 0 {
			xs, ys = append(xs, math.Log(x)), append(ys, math.Log(s[x].Mean))
		}
	}
	if len(xs) < 2 {
		return math.NaN()
	}
	return lsSlope(xs, ys)
}

// lsSlope is the least-squares slope of ys against xs (at least two
// points).
func lsSlope(xs, ys []float64) float64 {
	var mx, my float64
	for k := range xs {
		mx += xs[k]
		my += ys[k]
	}
	mx /= float64(len(xs))
	my /= float64(len(xs))
	var sxy, sxx float64
	for k := range xs {
		sxy += (xs[k] - mx) * (ys[k] - my)
		sxx += (xs[k] - mx) * (xs[k] - mx)
	}
	return sxy / sxx
}

// grade is the verdict of a claim met everywhere it was tested (all),
// somewhere (some) or nowhere.
func grade(all, some bool, because string) Verdict {
	switch {
	case all:
		return Verdict{Holds, because}
	case some:
		return Verdict{Partly, because}
	}
	return Verdict{Fails, because}
}

// missing is the verdict of rows that lack what a judge needs (a run of
// another experiment's output, or of a mode without those methods).
func missing(what string) Verdict {
	return Verdict{Because: "the results lack " + what}
}

// gfVariants are the GF-SVGD presets of the sampling experiments: the
// paper's settings first.
var gfVariants = []string{"gfsvgd-paper", "gfsvgd-transport"}

// beatsAll counts the x where method's metric is below every baseline's,
// of the x where all have it.
func beatsAll(rows []Row, method, metric string, baselines ...string) (wins, of int) {
	others := make([]byX, len(baselines))
	for k, b := range baselines {
		others[k] = pick(rows, b, metric)
	}
	t := against(pick(rows, method, metric), nil, others...)
	return t.allBelow, t.of
}

// tally is how one series compares with others, x by x, beyond noise
// (below: by more than 2 SE of the difference).
type tally struct {
	of       int // the x where every series has a row
	allAbove int // s above every other
	allBelow int // s below every other
	anyBelow int // s below at least one other
}

// against compares s with others at each x of s where all of them have a
// row and skip (when not nil) does not leave x out.
func against(s byX, skip func(x float64) bool, others ...byX) tally {
	var t tally
	for _, x := range s.xs() {
		if skip != nil && skip(x) {
			continue
		}
		rs := make([]Row, 0, len(others))
		for _, o := range others {
			if r, ok := o[x]; ok {
				rs = append(rs, r)
			}
		}
		if len(rs) < len(others) {
			continue
		}
		t.of++
		above, allBelow, anyBelow := true, true, false
		for _, r := range rs {
			above = above && below(r, s[x])
			b := below(s[x], r)
			allBelow = allBelow && b
			anyBelow = anyBelow || b
		}
		if above {
			t.allAbove++
		}
		if allBelow {
			t.allBelow++
		}
		if anyBelow {
			t.anyBelow++
		}
	}
	return t
}

// plural writes n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
