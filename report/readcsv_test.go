package report

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

func testModels(t *testing.T) map[string]model.Model {
	t.Helper()
	cat, err := categorical.New([]categorical.Variable{
		{States: []float64{-1, -0.5, 0, 0.5, 1}, Probs: []float64{0.1, 0.2, 0.3, 0.1, 0.3}},
		{States: []float64{0.1, 1e-7, 2.5e21}, Probs: []float64{0.2, 0.3, 0.5}},
		{States: []float64{3}, Probs: []float64{1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	is, err := ising.Grid(3, 4, false, 0.2, nil)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]model.Model{"categorical": cat, "ising": is}
}

// randomSamples draws n uniform state indices for m.
func randomSamples(m model.Model, n int, seed uint64) *sampler.Samples {
	r := rng.Key{Seed: seed, Stream: 99}.Rand()
	s := sampler.NewSamples(n, m.Dim())
	for i := range n {
		for l := range s.Row(i) {
			s.Row(i)[l] = r.IntN(len(m.States(l)))
		}
	}
	return s
}

func TestSamplesCSVRoundTrip(t *testing.T) {
	for name, m := range testModels(t) {
		s := randomSamples(m, 57, 3)
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		if err := WriteSamplesCSV(w, m, s); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		got, err := ReadSamplesCSV(bytes.NewReader(buf.Bytes()), m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.N != s.N || got.D != s.D || !slices.Equal(got.Z, s.Z) {
			t.Errorf("%s: read back %d×%d samples that differ from the %d×%d written", name, got.N, got.D, s.N, s.D)
		}
	}
	// Through a file, as the CLI does.
	m := testModels(t)["ising"]
	s := randomSamples(m, 10, 4)
	p := filepath.Join(t.TempDir(), "s.csv")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	WriteSamplesCSV(w, m, s)
	w.Flush()
	f.Close()
	got, err := LoadSamplesCSV(context.Background(), p, m, 0)
	if err != nil || !slices.Equal(got.Z, s.Z) {
		t.Errorf("LoadSamplesCSV: %v", err)
	}
}

// Numbers written differently from WriteSamplesCSV still match their state.
func TestReadSamplesCSVTolerant(t *testing.T) {
	m := testModels(t)["categorical"]
	in := "\ufeffz0, z1 ,z2\r\n1.0,0.10,3\n\n-.5,1E-7,3.00\n\"0\",2.5e+21, 3 \n-0,25e20,3e0\n"
	s, err := ReadSamplesCSV(strings.NewReader(in), m)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{4, 0, 0, 1, 1, 0, 2, 2, 0, 2, 2, 0}
	if s.N != 4 || s.D != 3 || !slices.Equal(s.Z, want) {
		t.Errorf("read %d×%d %v; want 4×3 %v", s.N, s.D, s.Z, want)
	}
}

func TestReadSamplesCSVErrors(t *testing.T) {
	m := testModels(t)["categorical"] // z0 ∈ {-1, -0.5, 0, 0.5, 1}, z1 ∈ {0.1, 1e-07, 2.5e+21}, z2 = 3
	cases := []struct{ name, in, want string }{
		{"empty", "", "the samples file is empty"},
		{"blank", "\n\n", "the samples file is empty"},
		{"header only", "z0,z1,z2\n", "no data rows"},
		{"header width", "z0,z1\n1,0.1\n", "line 1: the header has 2 columns, the model has 3 variables"},
		{"header name", "z0,z2,z1\n", `line 1, column 2: header "z2", want z1`},
		{"no header", "1,0.1,3\n", `line 1, column 1: header "1", want z0`},
		{"short row", "z0,z1,z2\n1,0.1,3\n1,0.1\n", "line 3: 2 columns, want 3"},
		{"long row", "z0,z1,z2\n\n1,0.1,3,4\n", "line 3: 4 columns, want 3"},
		{"unknown state", "z0,z1,z2\n1,0.1,3\n0.25,0.1,3\n", "line 3, column 1 (z0): 0.25 is not a state of the model (states: -1, -0.5, 0, 0.5, 1)"},
		{"non-numeric", "z0,z1,z2\n1,abc,3\n", `line 2, column 2 (z1): "abc" is not a number`},
		{"nan", "z0,z1,z2\n1,0.1,NaN\n", `line 2, column 3 (z2): "NaN" is not a finite number`},
		{"inf", "z0,z1,z2\n-Inf,0.1,3\n", `line 2, column 1 (z0): "-Inf" is not a finite number`},
		{"overflow", "z0,z1,z2\n1e400,0.1,3\n", `"1e400" is not a finite number`},
		{"empty cell", "z0,z1,z2\n1,,3\n", "line 2, column 2 (z1): empty cell"},
		{"bad quote", "z0,z1,z2\n1,0\"1,3\n", "line 2, byte 4: bare \" in non-quoted"},
	}
	for _, c := range cases {
		_, err := ReadSamplesCSV(strings.NewReader(c.in), m)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %q; want one line containing %q", c.name, err, c.want)
		}
	}
	// The file's name leads the message.
	p := filepath.Join(t.TempDir(), "bad.csv")
	os.WriteFile(p, []byte("z0,z1,z2\n1,0.1,4\n"), 0o644)
	ctx := context.Background()
	if _, err := LoadSamplesCSV(ctx, p, m, 0); err == nil || !strings.HasPrefix(err.Error(), p+": line 2, column 3 (z2): 4 is not a state") {
		t.Errorf("LoadSamplesCSV: %v", err)
	}
	if _, err := LoadSamplesCSV(ctx, filepath.Join(t.TempDir(), "none.csv"), m, 0); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing file: %v", err)
	}
	// A row limit stops the reader.
	os.WriteFile(p, []byte("z0,z1,z2\n1,0.1,3\n1,0.1,3\n1,0.1,3\n"), 0o644)
	var tm *TooManyRows
	if _, err := LoadSamplesCSV(ctx, p, m, 2); !errors.As(err, &tm) {
		t.Errorf("3 rows with a limit of 2: %v", err)
	}
}

// TestReadSamplesCSVRefusesHugeLines: a line far longer than d variables
// need is refused as it is read (the CSV reader would hold it whole with
// its fields, about 25 times its size), on the header or on a row, and
// it names the line.
func TestReadSamplesCSVRefusesHugeLines(t *testing.T) {
	m, err := ising.New(2, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("1,", MaxLineBytes(2))
	for _, c := range []struct {
		name, in string
		line     int
	}{
		{"header", "z0," + long + "\n1,1\n", 1},
		{"row", "z0,z1\n1,1\n" + long + "\n", 3},
	} {
		_, err := ReadSamplesCSV(strings.NewReader(c.in), m)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("line %d is longer than %d bytes", c.line, MaxLineBytes(2))) {
			t.Errorf("%s: error %v; want one naming line %d as too long", c.name, err, c.line)
		}
	}
	// A quoted field that runs over many short lines is one record.
	quoted := "z0,z1\n\"" + strings.Repeat("1\n", MaxLineBytes(2)/2+1) + "\",1\n"
	_, err = ReadSamplesCSV(strings.NewReader(quoted), m)
	if err == nil || !strings.Contains(err.Error(), "line 2 is longer than") {
		t.Errorf("a quoted field over many lines: error %v; want line 2 refused as too long", err)
	}
	// A line just within the limit is read (here: too many columns).
	if _, err := ReadSamplesCSV(strings.NewReader("z0,z1\n"+strings.Repeat("1,", MaxLineBytes(2)/2-1)+"1\n"), m); err == nil || strings.Contains(err.Error(), "longer than") {
		t.Errorf("a line within the limit: error %v; want a column count error", err)
	}
}

// TestReadSamplesCSVStateNames: a model with named states takes a cell
// that is a state's name as well as one that is its value, and an unknown
// cell's error lists both.
func TestReadSamplesCSVStateNames(t *testing.T) {
	p, err := potts.New(2, 3, []potts.Edge{{I: 0, J: 1, Coupling: 0.5}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := p.WithStateNames([]string{"lo", "mid", "hi"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadSamplesCSV(strings.NewReader("z0,z1\nlo,2\nhi, mid\n"), m)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 2, 2, 1}; !slices.Equal(s.Z, want) {
		t.Errorf("read %v; want %v", s.Z, want)
	}
	_, err = ReadSamplesCSV(strings.NewReader("z0,z1\nlo,top\n"), m)
	if err == nil || !strings.Contains(err.Error(), `"top" is neither a state's value nor its name (states: 0, 1, 2; names: lo, mid, hi)`) {
		t.Errorf("an unknown name: %v", err)
	}
	// Names that read as numbers are not taken: "1" is the value 1.
	num, err := p.WithStateNames([]string{"1", "2", "3"})
	if err != nil {
		t.Fatal(err)
	}
	s, err = ReadSamplesCSV(strings.NewReader("z0,z1\n1,2\n0,1\n"), num)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 2, 0, 1}; !slices.Equal(s.Z, want) {
		t.Errorf("numeric names: read %v; want the values' states %v", s.Z, want)
	}
	if _, err := ReadSamplesCSV(strings.NewReader("z0,z1\n3,1\n"), num); err == nil || !strings.Contains(err.Error(), "3 is not a state") {
		t.Errorf("numeric names, a cell that is only a name: %v", err)
	}
}
