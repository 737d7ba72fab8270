package experiment

import (
	"math"
	"strings"
	"testing"
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
