package experiment

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/dstein/dstein/infer"
)

// TestChooseVerdictTies checks the verdict rule: the smallest worst ratio
// leads, candidates whose worst ratio's interval overlaps the leader's are
// tied, and the smallest geometric mean among the tied wins; a candidate
// whose interval lies above the leader's cannot win however good its
// geometric mean.
func TestChooseVerdictTies(t *testing.T) {
	mk := func(name string, worst, lo, hi, geo float64) verdict {
		return verdict{method: name, worst: ratio{worst, lo, hi, true}, ran: 4, logSum: 4 * math.Log(geo)}
	}
	vs := []verdict{
		mk("a", 189, 175, 203, 0.9),
		mk("b", 197, 183, 211, 0.5),
		mk("c", 199, 185, 214, 0.7),
		mk("d", 250, 220, 280, 0.1), // apart: not tied
	}
	choice, tied := chooseVerdict(vs)
	if choice.method != "b" {
		t.Errorf("choice %s; want b (tied with a and c, smallest geometric mean)", choice.method)
	}
	if len(tied) != 3 {
		t.Errorf("%d tied; want 3 (a, b, c)", len(tied))
	}
	choice, tied = chooseVerdict(vs[3:])
	if choice.method != "d" || len(tied) != 1 {
		t.Errorf("a lone candidate: choice %s, %d tied", choice.method, len(tied))
	}
	lines := verdictLines(vs)
	last := lines[len(lines)-1]
	if !strings.Contains(last, "choice: b") || !strings.Contains(last, "3 candidates") {
		t.Errorf("verdict line %q; want the choice b among 3 tied candidates", last)
	}
	if g := vs[1].geoMean(); math.Abs(g-0.5) > 1e-12 {
		t.Errorf("geometric mean %v; want 0.5", g)
	}
}

// TestSuiteMethodsRunTheirPresets: a suite method that names a preset runs
// that preset's stages (methods, settings, initial draw) with the suite's
// iterations, and its chains; dstein's default is one of them. A change
// of a preset that the suite does not follow fails here.
func TestSuiteMethodsRunTheirPresets(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range suiteMethods() {
		if m.preset == "" {
			continue
		}
		seen[m.preset] = true
		want, err := infer.Preset(m.preset)
		if err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		got := m.build(SuiteBudget)
		if len(got.Stages) != len(want.Stages) {
			t.Errorf("%s: %d stages, preset %s has %d", m.name, len(got.Stages), m.preset, len(want.Stages))
			continue
		}
		for i := range want.Stages {
			want.Stages[i].Iters = got.Stages[i].Iters
		}
		want.Name, want.Description, got.Name, got.Description = "", "", "", ""
		a, _ := json.Marshal(got.Resolved())
		b, _ := json.Marshal(want.Resolved())
		if string(a) != string(b) {
			t.Errorf("%s runs\n%s\nbut preset %s is\n%s", m.name, a, m.preset, b)
		}
		cd, chains := infer.PresetChains(m.preset)
		switch {
		case chains && cd.Chains != m.chains:
			t.Errorf("%s runs %d chains, preset %s %d", m.name, m.chains, m.preset, cd.Chains)
		case !chains && m.chains != 0:
			t.Errorf("%s runs chains, preset %s keeps final states", m.name, m.preset)
		case chains && cd.Compress.On() != (m.herdThin > 0):
			t.Errorf("%s herds: %v, preset %s compresses: %v", m.name, m.herdThin > 0, m.preset, cd.Compress.On())
		case chains && m.herdThin > 0 && m.herdThin != cd.Thin:
			t.Errorf("%s thins its chains by %d, preset %s by %d", m.name, m.herdThin, m.preset, cd.Thin)
		}
	}
	if !seen[infer.DefaultMethod] || suiteDefault != "pt-auto" {
		t.Errorf("the suite's run of the default preset is %q; the published verdict names pt-auto", suiteDefault)
	}
}
