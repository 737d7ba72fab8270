package report

import (
	"bufio"
	"bytes"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/sampler"
)

// allocated returns the bytes that f allocates (garbage included).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// csvAllocBound is the most that reading n bytes of samples may allocate,
// garbage included: encoding/csv keeps one record's text and fields (a few
// times the line), each cell of two bytes becomes a state (8 bytes, and
// the growth of the slice of states: 24), and an error quotes at most a
// cell and ten states: 64 bytes a byte of input leaves room, plus 1 MiB for
// fixed costs (the reader's buffers, the index of the model's states).
func csvAllocBound(n int) uint64 { return 64*uint64(n) + 1<<20 }

// FuzzReadSamplesCSV feeds arbitrary text to the samples reader for a model
// with three variables of different state sets: it must return samples or
// a one-line error, never panic or allocate more than csvAllocBound; every
// state it returns must be a valid index; and samples it accepts, written
// back by WriteSamplesCSV, must read back the same.
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
		"\ufeffchain,draw,z0,z1,z2\n0,0,1,0.1,3\n",
		"\ufeff\ufeffz0,z1,z2\n1,0.1,3\n",
		"z0,z1,z2\n1,0.1,3\n1,0.1\n",
		"z0,z1,z2\n1.0" + strings.Repeat("0", 1000) + ",0.1" + strings.Repeat("0", 1000) + "1,3\n",
		"z0," + strings.Repeat("z1,", 10000) + "z2\n",
	} {
		f.Add([]byte(s))
	}
	for _, n := range []string{"1e308", "-1e308", "1e999", "-0", "9223372036854775807", "18446744073709551616", "1000000000000", "0x1p-2", "NaN", "Inf", strings.Repeat("9", 1000)} {
		f.Add([]byte("z0,z1,z2\n" + n + ",0.1,3\n"))
		f.Add([]byte("z0,z1,z2\n1,0.1," + n + "\n"))
	}
	// CSV does not nest; the nearest things are a cell of 10, 100 or
	// 100,000 brackets and a quoted cell of as many escaped quotes.
	for _, depth := range []int{10, 100, 100000} {
		f.Add([]byte("z0,z1,z2\n" + strings.Repeat("[", depth) + ",0.1,3\n"))
		f.Add([]byte("z0,z1,z2\n\"" + strings.Repeat(`""`, depth) + "\",0.1,3\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s *sampler.Samples
		var err error
		if n := allocated(func() { s, err = ReadSamplesCSV(bytes.NewReader(data), m) }); n > csvAllocBound(len(data)) {
			t.Fatalf("ReadSamplesCSV of %d bytes allocated %d bytes; want at most %d", len(data), n, csvAllocBound(len(data)))
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
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
