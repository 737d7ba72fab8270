package report

import (
	"bufio"
	"bytes"
	"slices"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
)

// FuzzReadSamplesCSV feeds arbitrary text to the samples reader for a model
// with three variables of different state sets: it must return samples or
// an error, never panic; every state it returns must be a valid index; and
// samples it accepts, written back by WriteSamplesCSV, must read back the
// same.
func FuzzReadSamplesCSV(f *testing.F) {
	m, err := categorical.New([]categorical.Variable{
		{States: []float64{-1, 1}, Probs: []float64{0.5, 0.5}},
		{States: []float64{0.1, 0.2, 0.3}, Probs: []float64{0.2, 0.3, 0.5}},
		{States: []float64{3}, Probs: []float64{1}},
	})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"z0,z1,z2\n1,0.1,3\n-1,0.3,3\n",
		"z0,z1,z2\r\n1.0,0.2,3e0\r\n",
		"\ufeffz0,z1,z2\n\n1,0.1,3\n",
		"z0,z1\n1,0.1\n",
		"z0,z1,z2\n1,NaN,3\n",
		"z0,z1,z2\n\"1\",0.1,3\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadSamplesCSV(bytes.NewReader(data), m)
		if err != nil {
			return
		}
		if s.D != 3 || len(s.Z) != s.N*3 || s.N < 1 {
			t.Fatalf("samples %d×%d with %d states", s.N, s.D, len(s.Z))
		}
		for k, v := range s.Z {
			if v < 0 || v >= len(m.States(k%3)) {
				t.Fatalf("state %d of variable %d", v, k%3)
			}
		}
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		if err := WriteSamplesCSV(w, model.Model(m), s); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		back, err := ReadSamplesCSV(&buf, m)
		if err != nil || !slices.Equal(back.Z, s.Z) {
			t.Fatalf("round trip failed: %v", err)
		}
	})
}
