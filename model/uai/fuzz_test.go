package uai

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/factorgraph"
)

// FuzzRead feeds Read arbitrary bytes: it must not panic, errors must be one
// line, and a network it accepts must be a valid graph whose log-probabilities
// and relaxation are never NaN.
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
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Read(bytes.NewReader(data))
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
	m := make([]float64, off[d])
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
			if g.Possible(i, s) {
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
	if len(m) > 1<<16 {
		return // valid but large: the relaxation would dominate the fuzzing time
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

// FuzzEvidence and FuzzMAR check the other readers for panics and one-line
// errors.
func FuzzEvidence(f *testing.F) {
	for _, s := range []string{"", "0", "1 0", "3 29 1 36 1 219 1", "1\n2 0 1 2 0", "2 3 1 3 0", "1 x 1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := ReadEvidence(bytes.NewReader(data))
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
	for _, s := range []string{"MAR\n3 2 0.25 0.75 3 0.1 0 0.9 1 1\n", "MAR\n1\n1 1 1", "MAR 1 2 0.5 0.5 -BEGIN- 1 1 1", "1 2 nan 1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadMAR(bytes.NewReader(data))
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
