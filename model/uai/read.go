package uai

import (
	"context"
	"errors"
	"fmt"
	"github.com/dstein/dstein/internal/safeio"
	"io"
	"math"
	"strings"

	"github.com/dstein/dstein/model/factorgraph"
)

// Read reads a network in the UAI format, MARKOV or BAYES, and returns it
// as a factor graph with one factor per function table, in file order, its
// entries converted to logarithms (0 becomes −Inf). A BAYES file's
// conditional probability tables become factors as they stand: the scope
// lists the parents and then the child, which is the table's fastest index.
//
// Errors name the line of the problem (see Error), except when the network
// is well formed but its zeros rule out every state of a variable (see
// factorgraph.New).
func Read(r io.Reader) (*factorgraph.Graph, error) {
	s := newScanner(r)
	t, err := s.want("MARKOV or BAYES")
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(t.text, "MARKOV") && !strings.EqualFold(t.text, "BAYES") {
		return nil, errorf(t.line, "want MARKOV or BAYES, got %q", t.text)
	}
	n, _, err := s.count(1, "the number of variables")
	if err != nil {
		return nil, err
	}
	var card []int
	total := 0
	for i := range n {
		k, t, err := s.count(1, "the cardinality of variable %d", i)
		if err != nil {
			return nil, err
		}
		if k > factorgraph.MaxCardinality {
			return nil, errorf(t.line, "variable %d has %d states; at most %d are supported", i, k, factorgraph.MaxCardinality)
		}
		if total += k; total > factorgraph.MaxStates {
			return nil, errorf(t.line, "the variables have more than %d states in all, more than this reader supports", factorgraph.MaxStates)
		}
		card = append(card, k)
	}
	nf, _, err := s.count(0, "the number of factors")
	if err != nil {
		return nil, err
	}
	var factors []factorgraph.Factor
	seen := make([]int, n) // seen[v] == f+1 when factor f names v
	for f := range nf {
		r, t, err := s.count(0, "the number of variables in the scope of factor %d", f)
		if err != nil {
			return nil, err
		}
		if r > n {
			return nil, errorf(t.line, "scope of factor %d has %d variables; the network has %d", f, r, n)
		}
		scope := make([]int, r)
		for j := range r {
			v, t, err := s.count(0, "variable %d of the scope of factor %d", j, f)
			if err != nil {
				return nil, err
			}
			if v >= n {
				return nil, errorf(t.line, "scope of factor %d names variable %d; the network has %d variables", f, v, n)
			}
			if seen[v] == f+1 {
				return nil, errorf(t.line, "scope of factor %d names variable %d twice", f, v)
			}
			seen[v] = f + 1
			scope[j] = v
		}
		factors = append(factors, factorgraph.Factor{Scope: scope})
	}
	for f := range factors {
		fc := &factors[f]
		size := 1
		for _, v := range fc.Scope {
			if size > math.MaxInt32/card[v] {
				size = -1
				break
			}
			size *= card[v]
		}
		m, t, err := s.count(0, "the number of entries of the table of factor %d", f)
		if err != nil {
			return nil, err
		}
		if size < 0 {
			return nil, errorf(t.line, "table of factor %d would have more than %d entries", f, math.MaxInt32)
		}
		if m != size {
			return nil, errorf(t.line, "table of factor %d has %d entries, want %d", f, m, size)
		}
		countLine := t.line
		table := make([]float64, 0, min(size, 1<<16))
		someNonZero := false
		for a := range size {
			t, err := s.next()
			if err == io.EOF {
				return nil, errorf(s.last, "the file ends early; want entry %d of the table of factor %d (%d entries)", a, f, size)
			}
			if err != nil {
				return nil, err
			}
			x, err := logValue(t.text)
			if err != nil {
				return nil, errorf(t.line, "entry %d of the table of factor %d is %v", a, f, err)
			}
			someNonZero = someNonZero || !math.IsInf(x, -1)
			table = append(table, x)
		}
		if !someNonZero {
			return nil, errorf(countLine, "table of factor %d is zero everywhere, so every configuration has probability zero", f)
		}
		fc.LogTable = table
	}
	if t, err := s.next(); err == nil {
		return nil, errorf(t.line, "unexpected %q after the last table", t.text)
	} else if err != io.EOF {
		return nil, err
	}
	return factorgraph.New(card, factors)
}

// MaxFileBytes is the size limit of ReadFile, ReadEvidenceFile and
// ReadMARFile.
const MaxFileBytes = 1 << 30

// ReadFile reads a network from the named file (see Read); errors start
// with the path.
func ReadFile(path string) (*factorgraph.Graph, error) {
	return ReadFileLimit(context.Background(), path, MaxFileBytes)
}

// ReadFileLimit reads a network from a regular file of at most max bytes,
// stopping with ctx's error when ctx is canceled.
func ReadFileLimit(ctx context.Context, path string, max int64) (*factorgraph.Graph, error) {
	f, err := safeio.Open(path, "UAI network", max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	g, err := Read(safeio.WithContext(ctx, f))
	if err != nil {
		var tl *safeio.TooLarge
		if errors.As(err, &tl) || ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// ReadEvidence reads an evidence file: a map from variable to observed
// state. It accepts both layouts in use:
//
//   - a count followed by that many variable–value pairs (UAI 2014 and
//     later), e.g. "3 29 1 36 1 219 1";
//   - the older layout with the number of evidence sets first, which must
//     be 1, then a count and its pairs, e.g. "1 3 29 1 36 1 219 1".
//
// The first has an odd number of integers and the second an even number,
// which tells them apart. An empty file, "0" and "1 0" mean no evidence.
// Tokens may be spread over lines freely. Variables and states are checked
// against the network by factorgraph.Graph.Clamp, not here; a variable
// observed twice is an error.
func ReadEvidence(r io.Reader) (map[int]int, error) {
	s := newScanner(r)
	toks, err := s.all()
	if err != nil {
		return nil, err
	}
	ev := map[int]int{}
	if len(toks) == 0 {
		return ev, nil
	}
	vals := make([]int, len(toks))
	for i, t := range toks {
		v, ok, err := parseInt(t.text)
		if !ok {
			return nil, errorf(t.line, "want an integer ≥ 0, got %q", t.text)
		}
		if err != nil {
			return nil, errorf(t.line, "%s is too large", t.text)
		}
		vals[i] = v
	}
	start := 0
	if len(toks)%2 == 0 {
		if vals[0] != 1 {
			return nil, errorf(toks[0].line, "evidence starts with %d and has %d numbers; want a count and that many variable–value pairs (an odd number of numbers), or 1 (one evidence set) followed by those", vals[0], len(toks))
		}
		start = 1
	}
	if c, pairs := vals[start], (len(toks)-start-1)/2; c != pairs {
		return nil, errorf(toks[start].line, "evidence count is %d, but %d variable–value pairs follow", c, pairs)
	}
	for k := start + 1; k < len(toks); k += 2 {
		v, x := vals[k], vals[k+1]
		if _, dup := ev[v]; dup {
			return nil, errorf(toks[k].line, "variable %d is observed twice", v)
		}
		ev[v] = x
	}
	return ev, nil
}

// ReadEvidenceFile reads evidence from the named file (see ReadEvidence);
// errors start with the path.
func ReadEvidenceFile(path string) (map[int]int, error) {
	return ReadEvidenceFileLimit(path, MaxFileBytes)
}

// ReadEvidenceFileLimit reads evidence from a regular file of at most max
// bytes.
func ReadEvidenceFileLimit(path string, max int64) (map[int]int, error) {
	f, err := safeio.Open(path, "evidence file", max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ev, err := ReadEvidence(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ev, nil
}
