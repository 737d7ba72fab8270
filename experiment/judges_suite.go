package experiment

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dstein/dstein/infer"
)

// suiteDefault is the suite's run of dstein's default preset
// (infer.DefaultMethod: parallel tempering with a pilot-sized ladder, 4
// chains): pt-auto.
var suiteDefault = suiteRunOf(infer.DefaultMethod)

// suiteRunOf returns the name of the suite's method that runs the named
// preset.
func suiteRunOf(preset string) string {
	for _, m := range suiteMethods() {
		if m.preset == preset {
			return m.name
		}
	}
	panic("the suite runs no method of preset " + preset) // TestSuiteMethodsRunTheirPresets fails first
}

// judgeDefault is the verdict of the suite's question, which sampler should
// be the default, from the verdict rows the suite writes (verdictRows):
// the candidates that meet both conditions (never worse than 1.5× Gibbs
// beyond the 95% interval; the mode masses of the two-mode targets with a
// field within 3 SE) and the one the rule chooses among them. With def
// set (the suite that runs dstein's default), it holds when the rule
// chooses def, partly holds when some candidate meets both conditions but
// the rule chooses another, and fails when none does; without def, it
// holds when some candidate meets both conditions. A run of fewer than
// minVerdictTrials trials is not judged: its intervals are too noisy to
// decide by.
func judgeDefault(def string) judge {
	return func(rows []Row, _ Mode) Verdict {
		var meets, all []string
		worst := map[string]Row{}
		choice := ""
		for _, r := range rows {
			switch r.Metric {
			case metricConditions:
				all = append(all, r.Method)
				if r.Mean == 1 {
					meets = append(meets, r.Method)
				}
			case metricWorst:
				worst[r.Method] = r
			case metricChoice:
				choice = r.Method
			}
		}
		if len(all) == 0 {
			return missing("the suite's verdict rows (" + metricConditions + "; results written before they were added: rebuild them from the journal)")
		}
		sort.Strings(meets)
		because := fmt.Sprintf("%d of %d candidates meet both conditions (never worse than 1.5× Gibbs beyond the 95%% interval, the two-mode targets' mode masses within 3 SE): %s",
			len(meets), len(all), listOrNone(meets))
		// The conditions rest on delta-method intervals, which with few
		// trials are themselves too noisy to decide by (the suite's table
		// says so too): such a run is reported, not judged.
		trials := 0
		for _, r := range rows {
			if r.Metric == metricConditions && (trials == 0 || r.Trials < trials) {
				trials = r.Trials
			}
		}
		if trials < minVerdictTrials {
			if choice != "" {
				because += fmt.Sprintf("; the rule would choose %s (worst ratio to the best method %.3g× ± %.2g)", choice, worst[choice].Mean, worst[choice].SE)
			}
			return Verdict{NotJudged, fmt.Sprintf("%s; %s: too few for the intervals the rule relies on (%d or more)", because, plural(trials, "trial"), minVerdictTrials)}
		}
		if choice == "" {
			return Verdict{Fails, because}
		}
		w := worst[choice]
		because += fmt.Sprintf("; the rule chooses %s (worst ratio to the best method %.3g× ± %.2g)", choice, w.Mean, w.SE)
		if def == "" {
			return Verdict{Holds, because}
		}
		switch {
		case choice == def:
			because += ", dstein's default"
		case containsString(meets, def):
			because += fmt.Sprintf("; dstein's default, %s, meets both conditions but is not chosen", def)
		case containsString(all, def):
			because += fmt.Sprintf("; dstein's default, %s, fails a condition", def)
		default:
			because += fmt.Sprintf("; dstein's default, %s, did not run", def)
		}
		return grade(choice == def, true, because)
	}
}

// judgePoints is the verdict of "n points that represent p better than n
// i.i.d. draws", from the suite's ratios to exact i.i.d. sampling at equal
// n: a method is better at a (target, statistic) when its ratio is below 1
// by more than 2 SE, worse when above 1 by more than 2 SE. It holds when
// some method is better at every pair where it ran, partly when some
// method is better at some, and fails when none is better anywhere.
func judgePoints(rows []Row, _ Mode) Verdict {
	type score struct {
		method               string
		better, worse, cells int
	}
	by := map[string]*score{}
	for _, r := range rows {
		if r.Method == suiteReference || !strings.HasPrefix(r.Metric, "ratio_to_iid:") {
			continue
		}
		s := by[r.Method]
		if s == nil {
			s = &score{method: r.Method}
			by[r.Method] = s
		}
		s.cells++
		switch {
		case r.Mean+2*r.SE < 1:
			s.better++
		case r.Mean-2*r.SE > 1:
			s.worse++
		}
	}
	if len(by) == 0 {
		return missing("ratios to exact i.i.d. sampling (ratio_to_iid rows)")
	}
	var ss []*score
	for _, s := range by {
		ss = append(ss, s)
	}
	sort.Slice(ss, func(a, b int) bool {
		if ss[a].better != ss[b].better {
			return ss[a].better > ss[b].better
		}
		if ss[a].worse != ss[b].worse {
			return ss[a].worse < ss[b].worse
		}
		return ss[a].method < ss[b].method
	})
	var parts []string
	for _, s := range ss[:min(3, len(ss))] {
		parts = append(parts, fmt.Sprintf("%s better at %d of %d (target, statistic) pairs, worse at %d", s.method, s.better, s.cells, s.worse))
	}
	best := ss[0]
	because := "below i.i.d. by more than 2 SE: " + strings.Join(parts, "; ")
	return grade(best.cells > 0 && best.better == best.cells, best.better > 0, because)
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
