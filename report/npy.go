package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/dstein/dstein/internal/npy"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
)

// SidecarFormat is the value of "format", the first key of every JSON
// sidecar that dstein writes beside an .npy array. A sidecar's file starts
// with SidecarPrefix, which is how dstein recognises, before replacing a
// file, that the file is a sidecar it wrote.
const SidecarFormat = "dstein.npy-sidecar"

// SidecarPrefix is how every sidecar file begins (WriteJSON's layout).
const SidecarPrefix = "{\n  \"format\": \"" + SidecarFormat + "\","

// SidecarVersion is the version of the sidecar's keys.
// Version 2 added lp__.
const SidecarVersion = 2

// Sidecar describes an .npy array of samples: what its axes are and what
// its values mean. Every key is always present.
type Sidecar struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Array is the file name of the array (without its directory).
	Array string `json:"array"`
	// Dtype is the array's NumPy type string ("<f8"), Shape its shape and
	// Dims the name of each axis: ["chain", "draw", "variable"],
	// ["replicate", "particle", "variable"] or ["sample", "variable"]
	// (["point", "variable"] for compressed points).
	Dtype string   `json:"dtype"`
	Shape []int    `json:"shape"`
	Dims  []string `json:"dims"`
	// Content says what the rows are: "draws", "replicates", "samples"
	// or "points".
	Content string `json:"content"`
	// Model is the model file the samples are of.
	Model string `json:"model"`
	// Variables name the last axis: z0, z1, … as in the samples CSV.
	Variables []string `json:"variables"`
	// States are each variable's state values; the array holds values
	// from them.
	States [][]float64 `json:"states"`
	// LogP is each sample's log p* (Stan's and ArviZ's lp__), shaped as
	// the array without its variable axis ([chain][draw] for draws), null
	// for a value that is not finite; null when not written (compressed
	// points).
	LogP any `json:"lp__"`
}

// samplesShape returns the shape, axis names and content of a samples
// array with the grouping g.
func samplesShape(s *sampler.Samples, g Groups, points bool) ([]int, []string, string) {
	switch {
	case points:
		return []int{s.N, s.D}, []string{"point", "variable"}, "points"
	case g.Length > 0 && g.Group == "chain":
		return []int{s.N / g.Length, g.Length, s.D}, []string{"chain", "draw", "variable"}, "draws"
	case g.Length > 0:
		return []int{s.N / g.Length, g.Length, s.D}, []string{g.Group, g.Member, "variable"}, "replicates"
	}
	return []int{s.N, s.D}, []string{"sample", "variable"}, "samples"
}

// WriteSamplesNPY writes the samples as an .npy array of float64 state
// values: shape (groups, length, d) when g groups the rows (chains of
// draws, replicates of particles), else (n, d); points marks compressed
// points, written (n, d) whatever g says.
func WriteSamplesNPY(w *bufio.Writer, m model.Model, s *sampler.Samples, g Groups, points bool) error {
	shape, _, _ := samplesShape(s, g, points)
	if g.Length > 0 && !points && s.N%g.Length != 0 {
		return fmt.Errorf("%d samples do not form groups of %d", s.N, g.Length)
	}
	aw, err := npy.NewWriter[float64](w, shape)
	if err != nil {
		return err
	}
	row := make([]float64, s.D)
	for r := range s.N {
		for i, st := range s.Row(r) {
			row[i] = m.States(i)[st]
		}
		if err := aw.Append(row...); err != nil {
			return err
		}
	}
	return aw.Close()
}

// SamplesSidecar describes the array that WriteSamplesNPY writes with the
// same arguments, in the file named array, from the model file modelPath;
// lp, when not nil, holds each row's log p* (LogProbs).
func SamplesSidecar(m model.Model, s *sampler.Samples, g Groups, points bool, array, modelPath string, lp []float64) *Sidecar {
	shape, dims, content := samplesShape(s, g, points)
	sc := &Sidecar{Format: SidecarFormat, Version: SidecarVersion, Array: array, Dtype: npy.Descr[float64](),
		Shape: shape, Dims: dims, Content: content, Model: modelPath,
		Variables: make([]string, s.D), States: make([][]float64, s.D)}
	if lp != nil && len(lp) == s.N {
		if len(shape) == 3 {
			rows := make([]jsonFloats, shape[0])
			for c := range rows {
				rows[c] = lp[c*shape[1] : (c+1)*shape[1]]
			}
			sc.LogP = rows
		} else {
			sc.LogP = jsonFloats(lp)
		}
	}
	for i := range s.D {
		sc.Variables[i] = model.VariableName(m, i)
		sc.States[i] = m.States(i)
	}
	return sc
}

// WriteSidecar writes a sidecar as indented JSON, "<" and ">" as they are
// (the dtype "<f8").
func WriteSidecar(w *bufio.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// jsonFloats marshals as a JSON array of numbers in the shortest form that
// reads back exactly, with null for a value that is not finite (JSON has
// no infinities).
type jsonFloats []float64

func (f jsonFloats) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+20*len(f))
	b = append(b, '[')
	for k, v := range f {
		if k > 0 {
			b = append(b, ',')
		}
		if math.IsInf(v, 0) || math.IsNaN(v) {
			b = append(b, "null"...)
			continue
		}
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	return append(b, ']'), nil
}
