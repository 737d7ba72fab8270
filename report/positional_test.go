package report

import (
	"strings"
	"testing"

	"github.com/dstein/dstein/model/factorgraph"
)

// A network's named variables are read from a header of their names or,
// as tools that know no names write it, z0, z1, … by position; not when a
// variable is named like another's position (z1 first, then a), where
// the header must name them.
func TestPositionalHeader(t *testing.T) {
	named := func(names ...string) *factorgraph.Graph {
		g, err := factorgraph.New([]int{2, 2}, []factorgraph.Factor{{Scope: []int{0, 1}, LogTable: []float64{0, 0.5, 0.2, 0}}})
		if err != nil {
			t.Fatal(err)
		}
		ng, err := g.Named(names, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ng
	}
	for _, c := range []struct {
		g    *factorgraph.Graph
		csv  string
		want string // "" for read
	}{
		{named("rain", "wet"), "rain,wet\n0,1\n1,1\n", ""},
		{named("rain", "wet"), "z0,z1\n0,1\n1,1\n", ""},
		{named("rain", "wet"), "z1,z0\n0,1\n1,1\n", `header "z1", want rain`},
		{named("rain", "wet"), "wet,rain\n0,1\n", `header "wet", want rain`},
		{named("z1", "a"), "z0,z1\n0,1\n", `header "z0", want z1`},
		{named("z0", "a"), "z0,z1\n0,1\n", ""},
	} {
		s, err := ReadSamplesCSV(strings.NewReader(c.csv), c.g)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.csv, err)
		case c.want == "" && (s.N != len(strings.Split(c.csv, "\n"))-2 || s.Z[1] != 1):
			t.Errorf("%q: read %+v", c.csv, s)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: %v; want an error saying %q", c.csv, err, c.want)
		}
	}
}

// A NumPy array given where a samples CSV is read is named as such, not
// reported as a CSV of the wrong width.
func TestSamplesCSVRefusesNpy(t *testing.T) {
	g, err := factorgraph.New([]int{2}, []factorgraph.Factor{{Scope: []int{0}, LogTable: []float64{0, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ReadSamplesCSV(strings.NewReader("\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1), }\n"), g)
	if err == nil || !strings.Contains(err.Error(), "this is a NumPy .npy array; this command reads a samples CSV file") {
		t.Errorf("%v", err)
	}
}
