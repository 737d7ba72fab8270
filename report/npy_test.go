package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/dstein/dstein/internal/npy"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/sampler"
)

// Samples in groups become a (groups, length, d) array of state values in
// row order; points a (n, d) one; the sidecar describes the same shape and
// starts with SidecarPrefix, by which dstein recognises its own sidecars.
func TestSamplesNPY(t *testing.T) {
	m, err := categorical.New([]categorical.Variable{{States: []float64{-1, 0.5, 2}, Probs: []float64{0.2, 0.3, 0.5}}, {States: []float64{0, 1}, Probs: []float64{0.5, 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	s := &sampler.Samples{N: 4, D: 2, Z: []int{0, 1, 2, 0, 1, 1, 2, 1}}
	want := []float64{-1, 1, 2, 0, 0.5, 1, 2, 1}
	for _, c := range []struct {
		g      Groups
		points bool
		shape  []int
		dims   []string
	}{
		{Groups{Group: "chain", Member: "draw", Length: 2}, false, []int{2, 2, 2}, []string{"chain", "draw", "variable"}},
		{Groups{Group: "replicate", Member: "particle", Length: 4}, false, []int{1, 4, 2}, []string{"replicate", "particle", "variable"}},
		{Groups{}, false, []int{4, 2}, []string{"sample", "variable"}},
		{Groups{Group: "chain", Member: "draw", Length: 2}, true, []int{4, 2}, []string{"point", "variable"}},
	} {
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		if err := WriteSamplesNPY(w, m, s, c.g, c.points); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		info, v, err := npy.Read[float64](&buf, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(info.Shape, c.shape) || !reflect.DeepEqual(v, want) {
			t.Errorf("%+v: shape %v values %v; want %v %v", c.g, info.Shape, v, c.shape, want)
		}
		sc := SamplesSidecar(m, s, c.g, c.points, "s.npy", "m.json", nil)
		if !reflect.DeepEqual(sc.Shape, c.shape) || !reflect.DeepEqual(sc.Dims, c.dims) || sc.Dtype != "<f8" ||
			!reflect.DeepEqual(sc.Variables, []string{"z0", "z1"}) || !reflect.DeepEqual(sc.States, [][]float64{{-1, 0.5, 2}, {0, 1}}) {
			t.Errorf("%+v: sidecar %+v", c.g, sc)
		}
		var js bytes.Buffer
		jw := bufio.NewWriter(&js)
		WriteSidecar(jw, sc)
		jw.Flush()
		if !strings.HasPrefix(js.String(), SidecarPrefix) || !strings.Contains(js.String(), `"dtype": "<f8"`) {
			t.Errorf("sidecar JSON starts %q", js.String()[:80])
		}
	}
	var buf bytes.Buffer
	if err := WriteSamplesNPY(bufio.NewWriter(&buf), m, s, Groups{Group: "chain", Member: "draw", Length: 3}, false); err == nil {
		t.Error("4 samples written as chains of 3")
	}
}

// The log p* values go in the sidecar shaped as the array without its
// variable axis, read back exactly, with null where a value is not finite
// (JSON has no infinities); and in the CSV as the column lp__ after the
// group columns, which ReadSamplesCSV skips.
func TestLogPColumnAndSidecar(t *testing.T) {
	m, err := categorical.New([]categorical.Variable{{States: []float64{-1, 0.5, 2}, Probs: []float64{0.2, 0.3, 0.5}}, {States: []float64{0, 1}, Probs: []float64{0.5, 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	s := &sampler.Samples{N: 4, D: 2, Z: []int{0, 1, 2, 0, 1, 1, 2, 1}}
	lp := LogProbs(m, s)
	for r := range s.N {
		if lp[r] != m.LogProb(s.Row(r)) || math.IsNaN(lp[r]) {
			t.Fatalf("LogProbs[%d] = %v, want %v", r, lp[r], m.LogProb(s.Row(r)))
		}
	}
	g := Groups{Group: "chain", Member: "draw", Length: 2}
	odd := append([]float64(nil), lp...)
	odd[3] = math.Inf(-1)
	sc := SamplesSidecar(m, s, g, false, "s.npy", "m.json", odd)
	var js bytes.Buffer
	jw := bufio.NewWriter(&js)
	if err := WriteSidecar(jw, sc); err != nil {
		t.Fatal(err)
	}
	jw.Flush()
	var back struct {
		Version int          `json:"version"`
		LogP    [][]*float64 `json:"lp__"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("sidecar does not read back: %v\n%s", err, js.String())
	}
	if back.Version != 2 || len(back.LogP) != 2 || len(back.LogP[0]) != 2 || *back.LogP[0][0] != lp[0] || *back.LogP[1][0] != lp[2] || back.LogP[1][1] != nil {
		t.Errorf("sidecar lp__ %s; want [[%v %v] [%v null]] at version 2", js.String(), lp[0], lp[1], lp[2])
	}
	if sc := SamplesSidecar(m, s, Groups{}, false, "s.npy", "m.json", lp); len(sc.LogP.(jsonFloats)) != 4 {
		t.Errorf("ungrouped sidecar lp__ %v; want 4 values", sc.LogP)
	}
	var csv bytes.Buffer
	w := bufio.NewWriter(&csv)
	if err := WriteGroupedSamplesCSV(w, m, s, g, lp); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	lines := strings.Split(csv.String(), "\n")
	if lines[0] != "chain,draw,lp__,z0,z1" || !strings.HasPrefix(lines[1], "1,1,"+FormatValue(lp[0])+",") {
		t.Errorf("CSV starts %q, %q", lines[0], lines[1])
	}
	got, err := ReadSamplesCSV(strings.NewReader(csv.String()), m)
	if err != nil || !reflect.DeepEqual(got.Z, s.Z) {
		t.Errorf("CSV with lp__ reads back %v (%v); want %v", got, err, s.Z)
	}
	if err := WriteGroupedSamplesCSV(bufio.NewWriter(&csv), m, s, g, lp[:3]); err == nil {
		t.Error("3 log p* values written for 4 samples")
	}
}
