package infer

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/rng"
)

// equalities builds n binary variables with a field on each and the
// tables z_i = z_{i+1} for i < links: one block while the chain's joint
// states fit model.MaxBlockStates, else a block per table, not covering.
func equalities(t *testing.T, n, links int) *factorgraph.Graph {
	t.Helper()
	var fs []factorgraph.Factor
	for i := range n {
		fs = append(fs, factorgraph.Factor{Scope: []int{i}, LogTable: []float64{0, 0.4}})
	}
	for i := range links {
		fs = append(fs, factorgraph.Factor{Scope: []int{i, i + 1}, LogTable: []float64{0, math.Inf(-1), math.Inf(-1), 0}})
	}
	card := make([]int, n)
	for i := range card {
		card[i] = 2
	}
	g, err := factorgraph.New(card, fs)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestZeroEntriesWarning: a run on a network with zero entries warns that
// the chains may miss configurations unless its sampler updated the
// tables' variables jointly and the blocks cover every such table (Gibbs
// and parallel tempering's site kernel on a short chain of equalities);
// a sampler of single-site moves is told about gibbs and pt, and a chain
// too long for one block keeps the warning for Gibbs too.
func TestZeroEntriesWarning(t *testing.T) {
	short, long := equalities(t, 4, 3), equalities(t, 12, 11)
	for _, c := range []struct {
		g      *factorgraph.Graph
		method string
		want   string // "" for no warning
	}{
		{short, "gibbs", ""},
		{short, "pt", ""},
		{short, "dmala", "which update such tables' variables jointly"},
		{long, "gibbs", "too large to update jointly"},
	} {
		_, p, _, err := errorBarPipeline(c.method)
		if err != nil {
			t.Fatal(err)
		}
		spec := chains(50, 50)(p)
		spec.Key = rng.NewKey(1)
		out, err := Run(context.Background(), c.g, spec)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, w := range out.Diagnostics.Warnings {
			if strings.Contains(w, "zero entries") {
				got = w
			}
		}
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s on %d variables: zero-entries warning %q; want one containing %q", c.method, c.g.Dim(), got, c.want)
		}
	}
}

// TestEveryDrawImpossibleIsAnError: on a model with no state of positive
// probability (three binary variables, each pair told to differ: no single
// table is zero everywhere and no state is ruled out alone), a run whose
// draws are all impossible is an error, not a summary; a run on a possible
// network whose chains start anywhere is not.
func TestEveryDrawImpossibleIsAnError(t *testing.T) {
	differ := []float64{math.Inf(-1), 0, 0, math.Inf(-1)}
	g, err := factorgraph.New([]int{2, 2, 2}, []factorgraph.Factor{
		{Scope: []int{0, 1}, LogTable: differ}, {Scope: []int{1, 2}, LogTable: differ}, {Scope: []int{0, 2}, LogTable: differ}})
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"gibbs", "pt"} {
		_, p, _, err := errorBarPipeline(method)
		if err != nil {
			t.Fatal(err)
		}
		spec := chains(50, 50)(p)
		spec.Key = rng.NewKey(1)
		_, err = Run(context.Background(), g, spec)
		if err == nil || !strings.Contains(err.Error(), "every one of the 200 draws is in a state of probability zero") {
			t.Errorf("%s: %v; want the impossible draws refused", method, err)
		}
		spec.Key = rng.NewKey(2)
		if _, err := Run(context.Background(), equalities(t, 4, 3), spec); err != nil {
			t.Errorf("%s on a possible network: %v", method, err)
		}
	}
}
