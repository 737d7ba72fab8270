package main

import (
	"math"
	"strings"
	"testing"

	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/model/ising"
)

// A variable whose conditional is the same in every draw is marked exact
// only when the draws moved (some quantity varies: log p* alone is
// constant on a uniform target, as here); with stuck chains (an infinite
// R̂) the same row says that some chains did not move. (The helper's
// frustrated model under pas printed "exact" for 0.1713 against 0.1756.)
func TestExactLabelNeedsMovingChains(t *testing.T) {
	m, err := ising.New(2, []ising.Edge{{I: 0, J: 1, Coupling: 0.5}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rhat float64
		want string
	}{
		{1.001, "exact (same conditional in every draw)"},
		{math.Inf(1), "same conditional in every draw (some chains did not move"},
	} {
		dg := &infer.Diagnostics{Estimates: infer.RaoBlackwell.String(), Quantities: []infer.Quantity{
			{Name: "log_p", Mean: 0.3, Rhat: infer.Float(c.rhat)}, // constant, as on a uniform target
			{Name: "z0", Mean: 0.2, Rhat: 1},
			{Name: "z1", Mean: 0.1, SD: 0.3, MCSE: 0.01, Rhat: 1},
		}}
		var b strings.Builder
		printDiagnostics(&b, m, dg, 10)
		line := ""
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(l, "z0 ") {
				line = l
			}
		}
		if !strings.Contains(line, c.want) || (c.rhat > 2 && strings.Contains(line, "exact (")) {
			t.Errorf("R̂ of log p* %v: z0's row %q; want %q", c.rhat, line, c.want)
		}
	}
}
