package uai

import (
	"context"
	"errors"
	"fmt"
	"github.com/dstein/dstein/internal/safeio"
	"io"
	"math"
	"os"
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
func Read(r io.Reader) (*factorgraph.Graph, error) { return ReadCheck(r, nil) }

// Header is what a network file says before its tables: the variables'
// cardinalities and the factors' scopes, which fix the graph's shape and
// so its memory.
type Header struct {
	Shape factorgraph.Shape
	// Bayes is whether the file says BAYES (its tables are conditional
	// distributions: see CheckBayes) rather than MARKOV.
	Bayes bool
	cards *words
}

// Card returns the number of states of variable i.
func (h *Header) Card(i int) int { return h.cards.at(i) }

// ReadBytes estimates the memory that reading a network of this shape
// takes at its peak, when the graph is built: the graph (Shape.Bytes) and
// what building it allocates besides (Shape.BuildBytes), with the reader's
// 64 KiB buffer. The tables are read into the graph's own; the reader's
// list of the scopes (4 bytes a variable, a factor and a scope entry) is
// garbage by then, and every word of the file becomes a short-lived string
// that the collector frees as it goes. The live heap's peak measured with
// runtime/metrics (UAI chains of 2·10⁵–3·10⁵ binary and ternary variables,
// a chain of triplets, a 400×400 grid) was 0.93–0.97 of the estimate, the
// graph left after reading 0.99–1.0 of Shape.Bytes.
func ReadBytes(s factorgraph.Shape) float64 { return s.Bytes() + s.BuildBytes() + 64<<10 }

// ReadCheck is Read that calls check, when it is not nil, with the
// network's header as soon as the scopes are read, before the tables (the
// bulk of a file) are read or any of the graph is allocated; an error from
// check stops the read and is returned as it is. Up to then the reader
// holds 4-byte words, in chunks that are never copied: 8 bytes a variable
// (its cardinality, and a mark while the scopes are read), 4 a factor and
// a scope entry; and it reads the counts without copying them, so that
// nothing else piles up for the collector. check is not called for a
// network with a table over the reader's limit (that table's count is an
// error).
func ReadCheck(r io.Reader, check func(*Header) error) (*factorgraph.Graph, error) {
	return readCheck(r, check, 0)
}

// readCheck is ReadCheck for a reader of fileBytes bytes (0: unknown). A
// table is allocated whole when the file's size bounds it (an entry takes
// at least two bytes, a digit and a separator), else grown as its entries
// are read: growing a table of 4 million entries by appends held the old
// and the new array at once, 1.7 times the table, which the memory
// estimate (the graph's tables) did not count.
func readCheck(r io.Reader, check func(*Header) error, fileBytes int64) (*factorgraph.Graph, error) {
	s := newScanner(r)
	t, err := s.want("MARKOV or BAYES")
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(t.text, "MARKOV") && !strings.EqualFold(t.text, "BAYES") {
		return nil, errorf(t.line, "want MARKOV or BAYES, got %q", t.text)
	}
	bayes := strings.EqualFold(t.text, "BAYES")
	n, _, err := s.count(1, "the number of variables")
	if err != nil {
		return nil, err
	}
	// Up to the check, the cardinalities and the scopes are kept in
	// 4-byte words (counts and variables are below 2^31) and in chunks:
	// no list is copied as it grows, so that the memory held before the
	// check is what they take.
	var cards words
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
		cards.add(int32(k))
	}
	nf, _, err := s.count(0, "the number of factors")
	if err != nil {
		return nil, err
	}
	// The scopes, as the file lists them: each scope's size, then its
	// variables.
	var scopes words
	seen := make([]int32, n) // seen[v] == f+1 when factor f names v
	for f := range nf {
		r, t, err := s.count(0, "the number of variables in the scope of factor %d", f)
		if err != nil {
			return nil, err
		}
		if r > n {
			return nil, errorf(t.line, "scope of factor %d has %d variables; the network has %d", f, r, n)
		}
		scopes.add(int32(r))
		for j := range r {
			v, t, err := s.count(0, "variable %d of the scope of factor %d", j, f)
			if err != nil {
				return nil, err
			}
			if v >= n {
				return nil, errorf(t.line, "scope of factor %d names variable %d; the network has %d variables", f, v, n)
			}
			if seen[v] == int32(f+1) {
				return nil, errorf(t.line, "scope of factor %d names variable %d twice", f, v)
			}
			seen[v] = int32(f + 1)
			scopes.add(int32(v))
		}
	}
	if check != nil {
		h := &Header{cards: &cards, Bayes: bayes, Shape: factorgraph.Shape{Variables: n, States: total, Factors: nf, ScopeEntries: scopes.len() - nf}}
		tooLarge := false
		for it := scopes.iter(); !it.done(); {
			size := 1
			for range it.next() {
				k := cards.at(it.next())
				if size > math.MaxInt32/k {
					// Over the limit, which the table's count reports.
					tooLarge = true
				}
				size *= k
			}
			if tooLarge {
				break
			}
			h.Shape.TableBytes += factorgraph.TableBytes(size)
		}
		if !tooLarge {
			if err := check(h); err != nil {
				return nil, err
			}
		}
	}
	// The cardinalities, and the factors with their scopes in one
	// allocation, which the graph keeps.
	card := cards.ints()
	factors := make([]factorgraph.Factor, nf)
	vars := make([]int, scopes.len()-nf)
	for it, f := scopes.iter(), 0; !it.done(); f++ {
		r := it.next()
		scope := vars[:r:r]
		vars = vars[r:]
		for j := range scope {
			scope[j] = it.next()
		}
		factors[f].Scope = scope
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
		capacity := min(size, 1<<16)
		if fileBytes > 0 {
			capacity = int(min(int64(size), fileBytes/2+1))
		}
		table := make([]float64, 0, capacity)
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
	// The graph keeps the factors and cardinalities built here.
	return factorgraph.NewOwned(card, factors)
}

// words is a list of 4-byte words kept in chunks of 2^16: growing it
// copies nothing, and it takes at most a chunk more than its words.
type words struct {
	chunks [][]int32
	n      int
}

const chunkWords = 1 << 16

func (w *words) add(v int32) {
	if w.n%chunkWords == 0 {
		w.chunks = append(w.chunks, make([]int32, 0, chunkWords))
	}
	c := &w.chunks[len(w.chunks)-1]
	*c = append(*c, v)
	w.n++
}

func (w *words) len() int { return w.n }

// at returns word i.
func (w *words) at(i int) int { return int(w.chunks[i/chunkWords][i%chunkWords]) }

// ints returns the words as ints.
func (w *words) ints() []int {
	out := make([]int, 0, w.n)
	for _, c := range w.chunks {
		for _, v := range c {
			out = append(out, int(v))
		}
	}
	return out
}

// wordIter reads a words list from its start.
type wordIter struct {
	w    *words
	k, i int // chunk, and word within it
}

func (w *words) iter() *wordIter { return &wordIter{w: w} }

func (it *wordIter) done() bool {
	return it.k >= len(it.w.chunks) || it.k == len(it.w.chunks)-1 && it.i >= len(it.w.chunks[it.k])
}

func (it *wordIter) next() int {
	c := it.w.chunks[it.k]
	v := c[it.i]
	if it.i++; it.i == len(c) {
		it.k, it.i = it.k+1, 0
	}
	return int(v)
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
	return ReadFileCheck(ctx, path, max, nil)
}

// ReadFileCheck is ReadFileLimit with ReadCheck's check of the header; an
// error from check is returned as it is.
func ReadFileCheck(ctx context.Context, path string, max int64, check func(*Header) error) (*factorgraph.Graph, error) {
	var checkErr error
	if check != nil {
		inner := check
		check = func(h *Header) error {
			checkErr = inner(h)
			return checkErr
		}
	}
	f, err := safeio.Open(path, "UAI network", max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if info, err := os.Stat(path); err == nil && info.Mode().IsRegular() {
		size = info.Size()
	}
	g, err := readCheck(safeio.WithContext(ctx, f), check, size)
	if err != nil {
		var tl *safeio.TooLarge
		if errors.As(err, &tl) || ctx.Err() != nil || err == checkErr {
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
