package report

import (
	"bufio"
	"bytes"
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
		sc := SamplesSidecar(m, s, c.g, c.points, "s.npy", "m.json")
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
