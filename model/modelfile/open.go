package modelfile

import (
	"context"
	"fmt"
	"strings"

	"github.com/dstein/dstein/internal/memlimit"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/uai"
)

// Loaded is a model read from a file, with the evidence of a UAI network
// clamped: Model is over the free variables, File over every variable of
// the file.
type Loaded struct {
	Model, File model.Model
	// Free[i] is the file's index of Model's variable i; nil without
	// evidence.
	Free []int
	// Evidence holds the observed state of each evidence variable.
	Evidence map[int]int
}

// IsUAI reports whether path names a UAI network (by its .uai suffix).
func IsUAI(path string) bool { return strings.HasSuffix(strings.ToLower(path), ".uai") }

// Open reads a JSON model file or a UAI network (by its .uai suffix) and,
// for a UAI network, clamps the evidence file when one is given.
func Open(path, evidence string) (*Loaded, error) {
	return OpenLimit(context.Background(), path, evidence, memlimit.Budget{Limit: MaxFileBytes * 8})
}

// OpenLimit is Open within a memory budget; it stops with ctx's error when
// ctx is canceled.
func OpenLimit(ctx context.Context, path, evidence string, b memlimit.Budget) (*Loaded, error) {
	if !IsUAI(path) {
		if evidence != "" {
			return nil, fmt.Errorf("evidence goes with a UAI network (.uai); %s is a JSON model file", path)
		}
		m, err := LoadLimit(ctx, path, b)
		if err != nil {
			return nil, err
		}
		return &Loaded{Model: m, File: m}, nil
	}
	g, err := uai.ReadFileLimit(ctx, path, fileLimit(b))
	if err != nil {
		return nil, err
	}
	l := &Loaded{Model: g, File: g}
	if evidence == "" {
		return l, nil
	}
	ev, err := uai.ReadEvidenceFileLimit(evidence, fileLimit(b))
	if err != nil {
		return nil, err
	}
	if len(ev) == 0 {
		return l, nil
	}
	free, idx, err := g.Clamp(ev)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", evidence, err)
	}
	l.Model, l.Free, l.Evidence = free, idx, ev
	return l, nil
}

// ExpandStates maps n rows of states of the free variables (row-major) to
// rows over every variable of the file, evidence variables at their
// observed states.
func (l *Loaded) ExpandStates(z []int, n int) []int {
	if l.Free == nil {
		return z
	}
	d, df := l.File.Dim(), l.Model.Dim()
	out := make([]int, n*d)
	for i := range n {
		row := out[i*d : (i+1)*d]
		for v, st := range l.Evidence {
			row[v] = st
		}
		for j, v := range z[i*df : (i+1)*df] {
			row[l.Free[j]] = v
		}
	}
	return out
}

// ExpandMarginals maps marginals of the free variables to marginals of
// every variable of the file, evidence variables as point masses.
func (l *Loaded) ExpandMarginals(marg [][]float64) [][]float64 {
	if l.Free == nil {
		return marg
	}
	out := make([][]float64, l.File.Dim())
	for v, st := range l.Evidence {
		out[v] = make([]float64, len(l.File.States(v)))
		out[v][st] = 1
	}
	for j, p := range marg {
		out[l.Free[j]] = p
	}
	return out
}
