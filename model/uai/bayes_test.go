package uai

import (
	"strings"
	"testing"
)

// TestCheckBayes reads BAYES files whose tables are, and are not,
// conditional distributions of their last variable.
func TestCheckBayes(t *testing.T) {
	g, err := ReadFile("testdata/bayes.uai")
	if err != nil {
		t.Fatal(err)
	}
	if w := CheckBayes(g); w != "" {
		t.Errorf("a Bayesian network: %q; want no warning", w)
	}
	const head = "BAYES\n3\n2 2 3\n3\n1 0\n1 1\n3 0 1 2\n2\n0.3 0.7\n2\n0.6 0.4\n12\n"
	for _, c := range []struct {
		name, rows string
		want       []string // "" for no warning
	}{
		// RowTolerance is 1e-4: six digits pass, a row off by 2e-4 does not.
		{"six digits", "0.333333 0.333333 0.333333\n0.5 0.5 0\n0.2 0.2 0.6\n1 0 0\n", nil},
		{"within the tolerance", "0.10005 0.2 0.7\n0.5 0.5 0\n0.2 0.2 0.6\n1 0 0\n", nil},
		{"just past it", "0.1002 0.2 0.7\n0.5 0.5 0\n0.2 0.2 0.6\n1 0 0\n",
			[]string{"row 0 of table 2 (z2 given its parents) sums to 1.0002", "not 1 (within 0.0001)"}},
		{"three rows", "0.1 0.2 0.6\n0.5 0.5 0\n0.2 0.2 0.5\n2 0 0\n",
			[]string{"row 0 of table 2", "sums to 0.9", "row 2 of table 2", "and 1 more row,", "log Z is not the log-probability of the evidence"}},
	} {
		g, err := Read(strings.NewReader(head + c.rows))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		w := CheckBayes(g)
		if c.want == nil && w != "" {
			t.Errorf("%s: %q; want no warning", c.name, w)
		}
		for _, s := range c.want {
			if !strings.Contains(w, s) {
				t.Errorf("%s: %q; want it to say %q", c.name, w, s)
			}
		}
	}
	// A table over (z0, z1) for z1 and none for z2's own: z1 the child of
	// two tables, z2 of none.
	g, err = Read(strings.NewReader("BAYES\n3\n2 2 2\n3\n1 0\n1 1\n2 0 1\n2\n0.3 0.7\n2\n0.6 0.4\n4\n0.5 0.5 0.1 0.9\n"))
	if err != nil {
		t.Fatal(err)
	}
	w := CheckBayes(g)
	for _, s := range []string{"1 variable is the child (the last variable of the scope) of no table: z2", "1 variable is the child of more than one table: z1 (2 tables)"} {
		if !strings.Contains(w, s) {
			t.Errorf("%q; want it to say %q", w, s)
		}
	}
	if strings.Contains(w, "sums to") {
		t.Errorf("%q: every row sums to 1", w)
	}
}
