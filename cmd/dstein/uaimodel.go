package main

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/dstein/dstein/internal/atomicfile"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/modelfile"
	"github.com/dstein/dstein/model/uai"
	"github.com/dstein/dstein/sampler"
)

// loadedModel is a model read from a file, with the evidence of a UAI
// network clamped: m is over the free variables, file over every variable
// of the file.
type loadedModel struct {
	m, file model.Model
	free    []int       // free[i] is the file's index of m's variable i; nil without evidence
	ev      map[int]int // observed state of each evidence variable
}

func isUAI(path string) bool { return strings.HasSuffix(strings.ToLower(path), ".uai") }

// loadModel reads a JSON model file or a UAI network (by its .uai suffix)
// and, for a UAI network, clamps the evidence file when one is given.
func loadModel(path, evidence string) (*loadedModel, error) {
	if !isUAI(path) {
		if evidence != "" {
			return nil, usagef("--evidence goes with a UAI network (.uai); %s is a JSON model file", path)
		}
		m, err := modelfile.Load(path)
		if err != nil {
			return nil, err
		}
		return &loadedModel{m: m, file: m}, nil
	}
	g, err := uai.ReadFile(path)
	if err != nil {
		return nil, err
	}
	l := &loadedModel{m: g, file: g}
	if evidence == "" {
		return l, nil
	}
	ev, err := uai.ReadEvidenceFile(evidence)
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
	l.m, l.free, l.ev = free, idx, ev
	return l, nil
}

// expandSamples maps samples of the free variables to samples of every
// variable of the file, evidence variables at their observed states.
func (l *loadedModel) expandSamples(s *sampler.Samples) *sampler.Samples {
	if l.free == nil {
		return s
	}
	d := l.file.Dim()
	out := sampler.NewSamples(s.N, d)
	for i := range s.N {
		row := out.Row(i)
		for v, st := range l.ev {
			row[v] = st
		}
		for j, v := range s.Row(i) {
			row[l.free[j]] = v
		}
	}
	return out
}

// expandMarginals maps marginals of the free variables to marginals of every
// variable of the file, evidence variables as point masses.
func (l *loadedModel) expandMarginals(marg [][]float64) [][]float64 {
	if l.free == nil {
		return marg
	}
	out := make([][]float64, l.file.Dim())
	for v, st := range l.ev {
		out[v] = make([]float64, len(l.file.States(v)))
		out[v][st] = 1
	}
	for j, p := range marg {
		out[l.free[j]] = p
	}
	return out
}

// saveMAR writes marginals in the UAI competition's MAR format, atomically.
func saveMAR(path string, marg [][]float64) error {
	return atomicfile.Write(path, func(w *bufio.Writer) error { return uai.WriteMAR(w, marg) })
}
