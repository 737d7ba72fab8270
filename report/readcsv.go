package report

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/dstein/dstein/internal/safeio"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
)

// TooManyRows is the error of a samples file with more rows than allowed.
type TooManyRows struct {
	Path string
	Max  int
}

func (e *TooManyRows) Error() string {
	return fmt.Sprintf("%s has more than %d sample rows, the most the memory limit allows for this command (--max-memory raises it)", e.Path, e.Max)
}

// LoadSamplesCSV reads the samples CSV file at path (see ReadSamplesCSV),
// a regular file or "-" for standard input, keeping at most maxRows samples
// (0: no limit) and stopping with ctx's error when ctx is canceled; errors
// name the file. A regular file's rows are counted first (a pass that holds
// nothing): a file of more than maxRows rows is refused before any is
// kept, and the samples are allocated once, at their size.
func LoadSamplesCSV(ctx context.Context, path string, m model.Model, maxRows int) (*sampler.Samples, error) {
	return loadSamplesCSV(ctx, path, m, maxRows, false)
}

// LoadOwnSamplesCSV is LoadSamplesCSV for draws that must be m's own (the
// candidates of compress, whose Stein rules and weights use m): where the
// file has an lp__ column, each row's value must be m's log p* of the row,
// up to rounding, or the file is refused as another model's. (gof, whose
// samples may come from any model, reads with LoadSamplesCSV.)
func LoadOwnSamplesCSV(ctx context.Context, path string, m model.Model, maxRows int) (*sampler.Samples, error) {
	return loadSamplesCSV(ctx, path, m, maxRows, true)
}

func loadSamplesCSV(ctx context.Context, path string, m model.Model, maxRows int, own bool) (*sampler.Samples, error) {
	f, err := safeio.Open(path, "samples file", 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows := 0
	if path != "-" {
		var size int64
		if rows, size, err = countRows(ctx, path); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if maxRows > 0 && rows > maxRows {
			return nil, &TooManyRows{Path: path, Max: maxRows}
		}
		// A row of d values takes at least 2d bytes (a digit and a comma
		// or newline each): the list is never larger than the file allows.
		rows = int(min(int64(rows), size/int64(2*max(1, m.Dim()))+1))
	}
	s, err := readSamples(safeio.WithContext(ctx, f), m, maxRows, rows, own)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var tm *TooManyRows
		if errors.As(err, &tm) {
			tm.Path = path
			return nil, tm
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// SamplesBytes estimates the memory of n samples of d variables read by
// LoadSamplesCSV from a regular file: 8 bytes a value, allocated once; each
// variable's index of its states (about 200 bytes); the reader's buffers
// (64 KiB). Read from standard input, whose rows are not counted first, the
// samples grow by appending, which holds up to three times as much while
// it copies.
func SamplesBytes(n, d int) float64 {
	return 8*float64(n)*float64(d) + 200*float64(d) + 64<<10
}

// countRows returns the number of rows after the header of the CSV file at
// path, its lines that are not blank (as encoding/csv skips them) less one,
// and its size in bytes. The count is an upper bound of the samples (a
// quoted field may span lines) and exact for a file that dstein wrote.
func countRows(ctx context.Context, path string) (int, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	r := safeio.WithContext(ctx, f)
	buf := make([]byte, 64<<10)
	lines, content, size := 0, false, int64(0)
	for {
		k, err := r.Read(buf)
		size += int64(k)
		for _, b := range buf[:k] {
			switch b {
			case '\n':
				if content {
					lines++
				}
				content = false
			case '\r':
			default:
				content = true
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, err
		}
	}
	if content {
		lines++
	}
	return max(lines-1, 0), size, nil
}

// ReadSamplesCSV reads samples in the form WriteSamplesCSV writes: a header
// z0,z1,…,z(d−1) for the model's d variables, then one row per sample with
// each variable's state value. A cell matches a state when it is the
// state's value as WriteSamplesCSV formats it or when it parses as the same
// number ("1.0" for 1). Leading columns that number groups (chain, draw,
// replicate, particle) or hold per-sample statistics (lp__) are skipped,
// as are blank lines. Errors name the line and the column (1-based) of the
// problem.
func ReadSamplesCSV(r io.Reader, m model.Model) (*sampler.Samples, error) {
	return readSamples(r, m, 0, 0, false)
}

// PositionalHeader reports whether head is z0, z1, …, z(d−1) for a model
// whose variables have other names (a Bayesian network's): columns named
// by position, as tools that know no names write them (dstein's Python
// package writes arrays so), read in the model's order. A model with a
// variable named like z3 takes its names only, so that no column is
// mistaken for another.
func PositionalHeader(head []string, m model.Model) bool {
	if len(head) != m.Dim() {
		return false
	}
	for i, c := range head {
		if strings.TrimSpace(c) != "z"+strconv.Itoa(i) {
			return false
		}
	}
	for i := range m.Dim() {
		name := model.VariableName(m, i)
		if rest, ok := strings.CutPrefix(name, "z"); ok && rest != "" && strings.Trim(rest, "0123456789") == "" && name != "z"+strconv.Itoa(i) {
			return false
		}
	}
	return true
}

// MaxLineBytes is the longest line a samples CSV of d variables may have:
// 256 bytes a column (a state value takes at most 24, a network's
// variable name rarely more) for the variables and a few leading columns,
// and 1 MiB besides. A longer line is refused as it is read, before the
// CSV reader holds it whole with its fields (about 25 times the line's
// size in memory: a 16 MB line took 390 MB).
func MaxLineBytes(d int) int { return 1<<20 + 256*(d+8) }

// lineLimit passes r's bytes on while no record is longer than max bytes:
// a record ends at a line break outside double quotes, so that a quoted
// field cannot run on over many short lines.
type lineLimit struct {
	r         io.Reader
	max, size int
	line      int  // the line the record being read starts on, from 1
	breaks    int  // line breaks inside its quotes
	quoted    bool // inside double quotes ("" inside them toggles twice)
}

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for k, b := range p[:n] {
		switch {
		case b == '"':
			l.quoted = !l.quoted
		case b == '\n' && !l.quoted:
			l.line += 1 + l.breaks
			l.size, l.breaks = 0, 0
			continue
		case b == '\n':
			l.breaks++
		}
		if l.size++; l.size > l.max {
			return k, fmt.Errorf("line %d is longer than %d bytes, more than a samples file of these variables needs; is it a samples CSV with one row per sample?", l.line, l.max)
		}
	}
	return n, err
}

// readSamples reads at most maxRows samples (0: no limit) into a list
// allocated for rows samples (a count of the file's rows, or 0 when it is
// not known: the list then grows as it is read).
func readSamples(r io.Reader, m model.Model, maxRows, rows int, own bool) (*sampler.Samples, error) {
	d := m.Dim()
	br := bufio.NewReader(&lineLimit{r: r, max: MaxLineBytes(d), line: 1})
	if magic, _ := br.Peek(6); string(magic) == "\x93NUMPY" {
		return nil, fmt.Errorf("this is a NumPy .npy array; this command reads a samples CSV file (dstein sample --out FILE.csv writes one; dstein summary reads .npy draws)")
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1 // widths are checked below, with our own message
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("the samples file is empty; want a header z0,…,z%d and one row per sample", d-1)
	}
	if err != nil {
		return nil, csvError(err)
	}
	line, _ := cr.FieldPos(0)
	if len(head) > 0 {
		head[0] = strings.TrimPrefix(head[0], "\ufeff") // a byte-order mark
	}
	// Leading group columns (chain,draw or replicate,particle) and
	// columns of per-sample statistics (lp__: names ending in "__") are
	// skipped, but never one of the last d, the variables' (a network's
	// variable may be named chain or x__).
	skip := 0
	for skip < len(head)-d && (slices.Contains(IDColumns, strings.TrimSpace(head[skip])) || strings.HasSuffix(strings.TrimSpace(head[skip]), "__")) {
		skip++
	}
	// The lp__ column, where the file has one: each row's log p* under
	// the model that drew it, checked against this model below.
	lpCol := -1
	if _, none := m.(model.NoDensity); own && !none {
		for k := range skip {
			if strings.TrimSpace(head[k]) == LogPColumn {
				lpCol = k
			}
		}
	}
	width := len(head)
	head = head[skip:]
	if len(head) != d {
		vars := "variables"
		if d == 1 {
			vars = "variable"
		}
		return nil, fmt.Errorf("line %d: the header has %d columns, the model has %d %s", line, len(head), d, vars)
	}
	if !PositionalHeader(head, m) {
		for i, c := range head {
			if want := model.VariableName(m, i); strings.TrimSpace(c) != want {
				return nil, fmt.Errorf("line %d, column %d: header %q, want %s (the variables' names in the model's order, as dstein sample writes them)", line, skip+i+1, c, want)
			}
		}
	}
	// Each variable's states by their formatted value, for the exact match.
	index := make([]map[string]int, d)
	for i := range d {
		st := m.States(i)
		index[i] = make(map[string]int, len(st))
		for s, v := range st {
			index[i][FormatValue(v)] = s
		}
		// A network's states by name too ("summer" for its index),
		// unless some name reads as a number: states named "1", "2",
		// "3" of values 0, 1, 2 would make a cell mean one state or
		// another.
		if sn, ok := m.(model.StateNamer); ok {
			if names := sn.StateNames(i); len(names) == len(st) && !slices.ContainsFunc(names, numeric) {
				for s, name := range names {
					if name != "" {
						index[i][name] = s
					}
				}
			}
		}
	}
	var z []int
	if rows > 0 {
		if maxRows > 0 {
			rows = min(rows, maxRows)
		}
		z = make([]int, 0, rows*d)
	}
	n := 0
	for {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvRowError(err, width, len(row))
		}
		line, _ := cr.FieldPos(0)
		if maxRows > 0 && n >= maxRows {
			return nil, &TooManyRows{Max: maxRows}
		}
		if len(row) != d+skip {
			return nil, fmt.Errorf("line %d: %d columns, want %d (one per variable)", line, len(row), d+skip)
		}
		for i, c := range row[skip:] {
			s, err := stateOf(m, i, index[i], c)
			if err != nil {
				return nil, fmt.Errorf("line %d, column %d (%s): %w", line, skip+i+1, model.VariableName(m, i), err)
			}
			z = append(z, s)
		}
		if lpCol >= 0 {
			if err := checkLogP(m, z[len(z)-d:], row[lpCol]); err != nil {
				return nil, fmt.Errorf("line %d, column %d (%s): %w", line, lpCol+1, LogPColumn, err)
			}
		}
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("no samples: the file has a header but no data rows")
	}
	return &sampler.Samples{N: n, D: d, Z: z}, nil
}

// numeric reports whether s reads as a number (or is empty).
func numeric(s string) bool {
	_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil || errors.Is(err, strconv.ErrRange) || strings.TrimSpace(s) == ""
}

// shortCell quotes a cell for a message, cut to 40 characters.
func shortCell(c string) string {
	if r := []rune(c); len(r) > 40 {
		return strconv.Quote(string(r[:40])) + "…"
	}
	return strconv.Quote(c)
}

// stateOf returns the index of cell c among variable i's states.
func stateOf(m model.Model, i int, index map[string]int, c string) (int, error) {
	if s, ok := index[c]; ok {
		return s, nil
	}
	t := strings.TrimSpace(c)
	if s, ok := index[t]; ok {
		return s, nil
	}
	if t == "" {
		return 0, errors.New("empty cell; want a state value")
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		if sn, ok := m.(model.StateNamer); ok && len(sn.StateNames(i)) > 0 && !slices.ContainsFunc(sn.StateNames(i), numeric) {
			return 0, fmt.Errorf("%s is neither a state's value nor its name (states: %s; names: %s)", shortCell(c), listStates(m.States(i)), strings.Join(sn.StateNames(i)[:min(10, len(sn.StateNames(i)))], ", "))
		}
		return 0, fmt.Errorf("%s is not a number", shortCell(c))
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s is not a finite number", shortCell(c))
	}
	for s, sv := range m.States(i) {
		if sv == v {
			return s, nil
		}
	}
	return 0, fmt.Errorf("%s is not a state of the model (states: %s)", t, listStates(m.States(i)))
}

// listStates formats up to 10 state values.
func listStates(st []float64) string {
	const most = 10
	parts := make([]string, 0, min(len(st), most)+1)
	for s, v := range st {
		if s == most {
			parts = append(parts, fmt.Sprintf("… %d in all", len(st)))
			break
		}
		parts = append(parts, FormatValue(v))
	}
	return strings.Join(parts, ", ")
}

// csvError rewords encoding/csv's errors ("parse error on line 3, column
// 5: …", the column counted in bytes) in our form, where a column is a
// field.
func csvError(err error) error { return csvRowError(err, 0, 0) }

// csvRowError is csvError for a row of got fields (what csv.Reader
// returned with the error) after a header of width fields: a row of
// another length says how many it has and how many the header has.
func csvRowError(err error, width, got int) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) && width > 0 {
			return fmt.Errorf("line %d: a row of %d fields; the header has %d", pe.Line, got, width)
		}
		return fmt.Errorf("line %d, byte %d: %v", pe.Line, pe.Column, pe.Err)
	}
	return err
}

// checkLogP compares a row's lp__ cell with the model's log p* of the row:
// dstein sample writes the log p* of the model it sampled, so a row whose
// lp__ differs beyond rounding comes from another model (of the same
// variables and states: compress once picked points from such a file
// without a word) or was edited. An empty or unreadable cell is not
// checked.
func checkLogP(m model.Model, z []int, cell string) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(cell), 64)
	if err != nil || math.IsNaN(v) {
		return nil
	}
	lp := m.LogProb(z)
	if v == lp || math.Abs(v-lp) <= 1e-9*max(1, math.Abs(lp)) {
		return nil
	}
	return fmt.Errorf("%s, but this model gives the row log p* = %s: the samples come from another model, or the row was edited; want samples of this model (without an %s column nothing is checked)", shortCell(cell), FormatValue(lp), LogPColumn)
}
