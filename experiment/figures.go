// What the figures of the experiments say about themselves: titles with
// the model, the sizes, the trials in the data and the seed.

package experiment

import (
	"fmt"
	"strings"

	"github.com/dstein/dstein/report"
)

// figureTitle is a figure's title: the parts (model, swept setting,
// budget), then the number of trials in the rows, the seed and, for quick
// and tiny runs, the mode, so that a figure read alone says what it shows.
func figureTitle(r *runner, rows []Row, parts ...string) string {
	parts = append(parts, trialsNote(rows, r.trials), fmt.Sprintf("seed %d", r.cfg.Seed))
	if r.cfg.Mode != Full {
		parts = append(parts, r.cfg.Mode.String()+" run")
	}
	return strings.Join(parts, "; ")
}

// trialsNote says how many trials the rows hold: "200 trials", or
// "10–60 trials per point" when methods or settings differ (the trials
// of a summary row, not the number asked for: a capped method or a
// resumed journal can hold fewer). Without rows it is the runner's count.
func trialsNote(rows []Row, trials int) string {
	lo, hi := 0, 0
	for _, r := range rows {
		if r.Trials <= 0 {
			continue
		}
		if lo == 0 || r.Trials < lo {
			lo = r.Trials
		}
		hi = max(hi, r.Trials)
	}
	switch {
	case hi == 0:
		lo, hi = trials, trials
	case lo != hi:
		return fmt.Sprintf("%d–%d trials per point", lo, hi)
	}
	if hi == 1 {
		return "1 trial"
	}
	return fmt.Sprintf("%d trials", hi)
}

// rangeNote names the values of a setting: "n = 20", "n = 10, 20" or
// "n = 10–500 (6 values)".
func rangeNote(name string, xs []float64) string {
	if len(xs) == 0 {
		return ""
	}
	return name + " = " + listNote(xs)
}

// listNote writes a few values ("10, 20") or their range ("10–500 (6
// values)").
func listNote(xs []float64) string {
	if len(xs) <= 3 {
		var s []string
		for _, x := range xs {
			s = append(s, report.FormatValue(x))
		}
		return strings.Join(s, ", ")
	}
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return fmt.Sprintf("%s–%s (%d values)", report.FormatValue(lo), report.FormatValue(hi), len(xs))
}

// intsF converts settings to float64 for rangeNote.
func intsF(v []int) []float64 {
	out := make([]float64, len(v))
	for k, x := range v {
		out[k] = float64(x)
	}
	return out
}

// metricPanels are three panels of a sampling experiment for one metric:
// against the swept setting, against the mean wall time of a run and
// against its mean number of model evaluations (one point per setting),
// all with ±SE bars over trials on log scales.
//
// Means at or below slopeFloor are zero to rounding (a stratified sweep
// can give the exact means of a symmetric model): they are left out of
// the log axis, and the panel's title counts them.
func metricPanels(rows []Row, names []string, labels map[string]string, metric, what, xlabel, short string) []report.Panel {
	return []report.Panel{
		{Title: what + " against " + xlabel + " (mean ± SE over trials)", XLabel: xlabel, YLabel: what, LogX: true, LogY: true, XTicksAtData: true, Dodge: true,
			YFloor: slopeFloor, Series: series(rows, metric, names, labels)},
		{Title: what + " against wall time (one point per " + short + ")", XLabel: "mean seconds per run", YLabel: what, LogX: true, LogY: true,
			YFloor: slopeFloor, Series: costSeries(rows, metric, "seconds", names, labels)},
		{Title: what + " against model evaluations (one point per " + short + ")", XLabel: "mean model evaluations per run", YLabel: what, LogX: true, LogY: true,
			YFloor: slopeFloor, Series: costSeries(rows, metric, "evaluations", names, labels)},
	}
}

// costPanels are the cost panels of a sampling experiment: wall time, the
// effective sample size per second and the effective sample size against
// the swept setting.
func costPanels(rows []Row, names []string, labels map[string]string, xlabel string) []report.Panel {
	return []report.Panel{
		{Title: "wall time per run (mean ± SE over trials)", XLabel: xlabel, YLabel: "seconds per run", LogX: true, LogY: true, XTicksAtData: true, Dodge: true,
			Series: series(rows, "seconds", names, labels)},
		{Title: "effective sample size per second (mean ± SE over trials)", XLabel: xlabel, YLabel: "eff_n per second", LogX: true, LogY: true, XTicksAtData: true, Dodge: true,
			Series: series(rows, "ess_per_s", names, labels)},
		{Title: "effective sample size eff_n (mean ± SE over trials)", XLabel: xlabel, YLabel: "eff_n", LogX: true, LogY: true, XTicksAtData: true, Dodge: true,
			Series: series(rows, "eff_n", names, labels)},
	}
}

// lastWord is the last word of an axis label ("n" of "sample size n").
func lastWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return s
	}
	return f[len(f)-1]
}
