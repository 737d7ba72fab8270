package uai

import (
	"bufio"
	"fmt"
	"github.com/dstein/dstein/internal/safeio"
	"io"
	"math"
	"strconv"
)

// WriteMAR writes marginals in the competition's MAR result format: a line
// "MAR", then one line with the number of variables and, for each variable
// in order, its number of states followed by the probability of each state.
// Numbers are written in the shortest form that reads back exactly. There
// must be at least one variable; every variable needs at least one state and every probability must be finite
// and ≥ 0; the sums are not checked.
func WriteMAR(w io.Writer, marginals [][]float64) error {
	if len(marginals) == 0 {
		return fmt.Errorf("no marginals to write")
	}
	for i, p := range marginals {
		if len(p) == 0 {
			return fmt.Errorf("marginal of variable %d has no states", i)
		}
		for s, x := range p {
			if !(x >= 0) || math.IsInf(x, 1) {
				return fmt.Errorf("marginal of variable %d: probability of state %d is %v; want a finite number ≥ 0", i, s, x)
			}
		}
	}
	bw := bufio.NewWriter(w)
	b := make([]byte, 0, 64)
	b = append(b, "MAR\n"...)
	b = strconv.AppendInt(b, int64(len(marginals)), 10)
	for _, p := range marginals {
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(len(p)), 10)
		for _, x := range p {
			b = append(b, ' ')
			b = strconv.AppendFloat(b, x+0, 'g', -1, 64)
		}
		if _, err := bw.Write(b); err != nil {
			return err
		}
		b = b[:0]
	}
	b = append(b, '\n')
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}

// ReadMAR reads marginals in the MAR result format: the number of
// variables, then for each variable its number of states and the
// probability of each state, with any whitespace between the numbers. It
// accepts:
//
//   - an optional first line "MAR" (the task name that result files start
//     with);
//   - several solutions separated by "-BEGIN-" lines, as anytime solvers
//     write them; the last one counts, as in the competitions;
//   - the older layout in which the solution starts with the number of
//     evidence sets, which must then be 1 ("MAR", "1", then the solution).
//
// A solution in the current layout is tried first; the older one only when
// that fails and the solution starts with 1. The two cannot both fit the
// same numbers. Probabilities must be finite and ≥ 0; their sums are not
// checked.
func ReadMAR(r io.Reader) ([][]float64, error) {
	s := newScanner(r)
	toks, err := s.all()
	if err != nil {
		return nil, err
	}
	if len(toks) > 0 && toks[0].text == "MAR" {
		toks = toks[1:]
	}
	last := s.last
	for k := len(toks) - 1; k >= 0; k-- {
		if toks[k].text == "-BEGIN-" {
			last = toks[k].line
			toks = toks[k+1:]
			break
		}
	}
	if len(toks) == 0 {
		return nil, errorf(last, "the file ends early; want the number of variables")
	}
	m, trailing, err := marSolution(toks, last)
	if err == nil {
		return m, nil
	}
	if toks[0].text == "1" {
		m2, _, err2 := marSolution(toks[1:], last)
		if err2 == nil {
			return m2, nil
		}
		// Numbers left over after a complete solution in the current
		// layout suggest the older one, if it gets through at least one
		// variable; then report what is wrong with it.
		if trailing && len(m2) > 0 {
			err = err2
		}
	}
	return nil, err
}

// marSolution parses one solution that must use every token. On failure
// it returns the marginals of the variables it got through, and trailing
// reports whether it failed only because tokens were left over.
func marSolution(toks []token, end int) ([][]float64, bool, error) {
	k := 0
	want := func(what string) (token, error) {
		if k == len(toks) {
			line := end
			if k > 0 {
				line = toks[k-1].line
			}
			return token{}, errorf(line, "the file ends early; want %s", what)
		}
		k++
		return toks[k-1], nil
	}
	integer := func(what string, lo int) (int, error) {
		t, err := want(what)
		if err != nil {
			return 0, err
		}
		v, ok, err := parseInt(t.text)
		if ok && err != nil {
			// A whole number, out of range: as the model's reader says.
			return 0, errorf(t.line, "%s is %s, too large", what, t.text)
		}
		if !ok || v < lo {
			return 0, errorf(t.line, "want %s (an integer ≥ %d), got %q", what, lo, t.text)
		}
		return v, nil
	}
	n, err := integer("the number of variables", 1)
	if err != nil {
		return nil, false, err
	}
	var out [][]float64
	for i := range n {
		c, err := integer(fmt.Sprintf("the number of states of variable %d", i), 1)
		if err != nil {
			return out, false, err
		}
		if c > len(toks)-k {
			return out, false, errorf(toks[k-1].line, "variable %d has %d states, but only %d numbers follow", i, c, len(toks)-k)
		}
		p := make([]float64, c)
		for s := range c {
			t, _ := want("")
			x, err := prob(t.text)
			if err != nil {
				return out, false, errorf(t.line, "probability of state %d of variable %d is %v", s, i, err)
			}
			p[s] = x
		}
		out = append(out, p)
	}
	if k < len(toks) {
		return out, true, errorf(toks[k].line, "unexpected %q after the marginals of all %d variables", toks[k].text, n)
	}
	return out, false, nil
}

// ReadMARFile reads marginals from the named file (see ReadMAR); errors
// start with the path.
func ReadMARFile(path string) ([][]float64, error) {
	f, err := safeio.Open(path, "MAR file", MaxFileBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := ReadMAR(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
