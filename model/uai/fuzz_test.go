package uai

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/factorgraph"
)

// allocated returns the bytes that f allocates (garbage included).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// textAllocBound is the most that reading n bytes of evidence or marginals
// may allocate, garbage included: each token costs its place in a slice of
// tokens (24 bytes, and the slice's growth) and its text, for a token of 2
// bytes with its space; about 115 bytes a byte of input was the most
// measured (MAR files of one-state variables), so 256, plus 1 MiB for
// fixed costs (the 64 KiB reader buffer, an error).
func textAllocBound(n int) uint64 { return 256*uint64(n) + 1<<20 }

// networkAllocBound is the most that reading a network of n bytes may
// allocate: textAllocBound, plus what the graph holds for each state of a
// variable (about a byte, 16.6 MiB measured for factorgraph.MaxStates),
// which a cardinality of a few digits makes up to 65,536 of: twice
// MaxStates bytes. Counts read from the file (variables, factors, scopes,
// tables) must not size an allocation beyond the tokens that follow them.
func networkAllocBound(n int) uint64 { return textAllocBound(n) + 2*factorgraph.MaxStates }

// hugeCounts are seeds that put huge or odd numbers where counts, indices
// and values go.
var hugeCounts = []string{"1000000000000", "9223372036854775807", "18446744073709551616", "-0", "-1", "1e308", "1e999", "0x10", strings.Repeat("9", 1000)}

// FuzzRead feeds Read arbitrary bytes: it must not panic, allocate more
// than networkAllocBound, errors must be one line, and a network it accepts
// must be a valid graph whose log-probabilities and relaxation are never
// NaN.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.uai")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		"MARKOV\n1\n1\n1\n1 0\n1 1\n",
		"BAYES\n2\n2 2\n2\n1 0\n2 0 1\n2 0.4 0.6\n4 1 0 0 1\n",
		"MARKOV 2 2 2 1 0 1 2.5",
		"MARKOV\n2\n2 2\n1\n2 0 1\n4 1e-400 0 .5 5.\n",
		"MARKOV\n2\n2 2\n2\n1 0\n2 0 1\n2 0 1\n4 1 1 0 0\n",
		"MARKOV\n1\n2\n1\n1 0\n2 nan 1\n",
		"MARKOV\n1\n2\n1\n1 0\n3 1 1 1\n",
		"c comment\nMARKOV\n1\n3\n1\n1 0\n3 0 0 1\n",
		"MARKOV\n3\n2 3 1\n1\n3 2 1 0\n6 1 2 3 4 5 6 7",
		"\ufeffMARKOV\n1\n2\n1\n1 0\n2 1 1\n",
		"\ufeffc comment\nMARKOV 1 2 1 1 0 2 1 1",
		"MARKOV 1 2 1 1 0 2 1e308 1e-400",
		"MARKOV 1 2 1 1 0 2 1e999 -0",
		"MARKOV 1 2 1 1 0 2 0." + strings.Repeat("0", 1000) + "1 " + strings.Repeat("7", 1000),
		"MARKOV 1 2 1 1 0 2 " + strings.Repeat("7", 1100) + " 1",
		"MARKOV 2 65536 65536 1 2 0 1 4294967296",
		"MARKOV 16 " + strings.Repeat("65536 ", 16) + "0", // 2^20 states from 100 bytes
	} {
		f.Add([]byte(s))
	}
	// Huge numbers in each count: variables, a cardinality, factors, a
	// scope's size, a scope's variable, a table's size.
	for _, n := range hugeCounts {
		for _, s := range []string{
			"MARKOV " + n + " 2",
			"MARKOV 1 " + n + " 1 1 0 2 1 1",
			"MARKOV 1 2 " + n + " 1 0 2 1 1",
			"MARKOV 1 2 1 " + n + " 0 2 1 1",
			"MARKOV 1 2 1 1 " + n + " 2 1 1",
			"MARKOV 1 2 1 1 0 " + n + " 1 1",
		} {
			f.Add([]byte(s))
		}
	}
	// The text formats have no nesting; the nearest thing is a long run of
	// one character: tokens of 10 and 100 brackets, and one of 100,000,
	// beyond the longest token read (maxToken).
	for _, depth := range []int{10, 100, 100000} {
		f.Add([]byte("MARKOV 1 2 1 1 0 2 1 " + strings.Repeat("[", depth)))
		f.Add([]byte(strings.Repeat("[", depth) + strings.Repeat("]", depth)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var g *factorgraph.Graph
		var err error
		if n := allocated(func() { g, err = Read(bytes.NewReader(data)) }); n > networkAllocBound(len(data)) {
			t.Fatalf("Read of %d bytes allocated %d bytes; want at most %d", len(data), n, networkAllocBound(len(data)))
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		checkGraph(t, g)
	})
}

func checkGraph(t *testing.T, g *factorgraph.Graph) {
	t.Helper()
	if _, err := factorgraph.New(g.Cards(), g.Factors()); err != nil {
		t.Fatalf("Read returned a graph that New rejects: %v", err)
	}
	d := g.Dim()
	if d < 1 || len(g.Cards()) != d {
		t.Fatalf("graph has %d variables and %d cardinalities", d, len(g.Cards()))
	}
	// A configuration of possible states, and the uniform membership over
	// possible states: neither may give NaN or +Inf.
	z := make([]int, d)
	off := model.Offsets(g)
	// The relaxation is probed only on small graphs: it would dominate
	// the fuzzing time (a few bytes of cardinalities make millions of
	// states).
	relax := off[d] <= 1<<16
	var m []float64
	if relax {
		m = make([]float64, off[d])
	}
	for i, k := range g.Cards() {
		if k < 1 || len(g.States(i)) != k {
			t.Fatalf("variable %d: cardinality %d, %d states", i, k, len(g.States(i)))
		}
		n := 0
		for s := range k {
			if g.Possible(i, s) {
				if n == 0 {
					z[i] = s
				}
				n++
			}
		}
		if n == 0 {
			t.Fatalf("variable %d has no possible state", i)
		}
		for s := range k {
			if relax && g.Possible(i, s) {
				m[off[i]+s] = 1 / float64(n)
			}
		}
	}
	lp := g.LogProb(z)
	if math.IsNaN(lp) || math.IsInf(lp, 1) {
		t.Fatalf("LogProb(%v) = %v", z, lp)
	}
	for i := range d {
		for _, x := range g.LogConditional(nil, z, i) {
			if math.IsNaN(x) || math.IsInf(x, 1) {
				t.Fatalf("LogConditional(%v, %d) holds %v", z, i, x)
			}
		}
	}
	if !relax {
		return
	}
	grad := make([]float64, len(m))
	r := g.RelaxedLogProb(grad, m)
	// Arc consistency guarantees every factor a non-zero entry over
	// possible states, so the relaxation at interior points is finite.
	if math.IsNaN(r) || math.IsInf(r, 0) {
		t.Fatalf("relaxed log-probability at uniform memberships = %v", r)
	}
	for k, x := range grad {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Fatalf("relaxed gradient entry %d = %v", k, x)
		}
	}
}

// FuzzEvidence and FuzzMAR check the other readers for panics, one-line
// errors and allocations beyond textAllocBound.
func FuzzEvidence(f *testing.F) {
	for _, s := range []string{"", "0", "1 0", "3 29 1 36 1 219 1", "1\n2 0 1 2 0", "2 3 1 3 0", "1 x 1", "\ufeff1 0 1", "\ufeffc x\n1 2 3"} {
		f.Add([]byte(s))
	}
	for _, n := range hugeCounts {
		for _, s := range []string{n + " 0 1", "1 " + n + " 1", "1 0 " + n, "1 " + n + " 0 1", "1 1 " + n + " 1"} {
			f.Add([]byte(s))
		}
	}
	for _, depth := range []int{10, 100, 100000} {
		f.Add([]byte("1 0 " + strings.Repeat("[", depth)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var ev map[int]int
		var err error
		if n := allocated(func() { ev, err = ReadEvidence(bytes.NewReader(data)) }); n > textAllocBound(len(data)) {
			t.Fatalf("ReadEvidence of %d bytes allocated %d bytes; want at most %d", len(data), n, textAllocBound(len(data)))
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		for v, s := range ev {
			if v < 0 || s < 0 {
				t.Fatalf("evidence %d = %d", v, s)
			}
		}
	})
}

func FuzzMAR(f *testing.F) {
	for _, s := range []string{"MAR\n3 2 0.25 0.75 3 0.1 0 0.9 1 1\n", "MAR\n1\n1 1 1", "MAR 1 2 0.5 0.5 -BEGIN- 1 1 1", "1 2 nan 1", "\ufeffMAR 1 1 1", "\ufeffc x\nMAR 1 1 1"} {
		f.Add([]byte(s))
	}
	for _, n := range hugeCounts {
		for _, s := range []string{"MAR " + n + " 1 1", "MAR 1 " + n + " 1", "MAR 1 1 " + n, "MAR 1 2 0.5 " + n, "MAR 1 1 1 " + n + " 1 1 1"} {
			f.Add([]byte(s))
		}
	}
	for _, depth := range []int{10, 100, 100000} {
		f.Add([]byte("MAR 1 1 " + strings.Repeat("[", depth)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m [][]float64
		var err error
		if n := allocated(func() { m, err = ReadMAR(bytes.NewReader(data)) }); n > textAllocBound(len(data)) {
			t.Fatalf("ReadMAR of %d bytes allocated %d bytes; want at most %d", len(data), n, textAllocBound(len(data)))
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := WriteMAR(&buf, m); err != nil {
			t.Fatalf("WriteMAR of what ReadMAR returned: %v", err)
		}
		back, err := ReadMAR(&buf)
		if err != nil || len(back) != len(m) {
			t.Fatalf("round trip: %v, %v", back, err)
		}
		for i := range m {
			for s := range m[i] {
				if back[i][s] != m[i][s] {
					t.Fatalf("round trip changed %v to %v", m, back)
				}
			}
		}
	})
}
