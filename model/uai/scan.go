package uai

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Error is a problem found at one line of an input: a malformed or
// out-of-range token, or the end of the input where more was expected.
type Error struct {
	// Line is the 1-based line of the token at fault; for an input that
	// ends early, the line of its last token.
	Line int
	// Msg says what was found and what was expected.
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

func errorf(line int, format string, a ...any) *Error {
	return &Error{Line: line, Msg: fmt.Sprintf(format, a...)}
}

// maxToken bounds the length of one token, so that a malformed input
// cannot make the reader buffer it whole.
const maxToken = 1024

// token is one whitespace-separated word of the input and its line.
type token struct {
	text string
	line int
}

// scanner splits an input into tokens separated by any whitespace,
// skipping comment lines (whose first non-blank character is 'c') and a
// leading UTF-8 byte order mark.
type scanner struct {
	r         *bufio.Reader
	line      int  // line of the next byte
	last      int  // line of the last token returned (1 before any)
	lineStart bool // no token yet on the current line
	buf       []byte
	started   bool
}

func newScanner(r io.Reader) *scanner {
	return &scanner{r: bufio.NewReaderSize(r, 64<<10), line: 1, last: 1, lineStart: true}
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

// next returns the next token; at the end of the input it returns io.EOF,
// and an *Error when reading fails or a token is too long.
func (s *scanner) next() (token, error) {
	w, err := s.word()
	if err != nil {
		return token{}, err
	}
	return token{text: string(w), line: s.last}, nil
}

// word is next without the token's copy: the word it returns is the
// scanner's buffer, valid until the next call (its line is s.last).
func (s *scanner) word() ([]byte, error) {
	if !s.started {
		s.started = true
		if bom, err := s.r.Peek(3); err == nil && string(bom) == "\xef\xbb\xbf" {
			s.r.Discard(3)
		}
	}
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			return nil, s.readErr(err)
		}
		switch {
		case b == '\n':
			s.line++
			s.lineStart = true
		case isSpace(b):
		case b == 'c' && s.lineStart:
			if err := s.skipLine(); err != nil {
				return nil, s.readErr(err)
			}
		default:
			s.buf = append(s.buf[:0], b)
			for {
				b, err := s.r.ReadByte()
				if err == io.EOF {
					break
				}
				if err != nil {
					return nil, s.readErr(err)
				}
				if isSpace(b) {
					s.r.UnreadByte()
					break
				}
				if len(s.buf) == maxToken {
					return nil, errorf(s.line, "a word longer than %d characters, starting %q", maxToken, s.buf[:20])
				}
				s.buf = append(s.buf, b)
			}
			s.lineStart = false
			s.last = s.line
			return s.buf, nil
		}
	}
}

// skipLine consumes the rest of a comment line, up to and excluding its
// newline.
func (s *scanner) skipLine() error {
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			return err
		}
		if b == '\n' {
			s.r.UnreadByte()
			return nil
		}
	}
}

func (s *scanner) readErr(err error) error {
	if err == io.EOF {
		return io.EOF
	}
	return errorf(s.line, "reading: %v", err)
}

// want returns the next token, or an error saying the input ended where
// what was expected.
func (s *scanner) want(what string) (token, error) {
	t, err := s.next()
	if err == io.EOF {
		return t, errorf(s.last, "the file ends early; want %s", what)
	}
	return t, err
}

// all returns every remaining token.
func (s *scanner) all() ([]token, error) {
	var ts []token
	for {
		t, err := s.next()
		if err == io.EOF {
			return ts, nil
		}
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
}

// parseInt parses a non-negative decimal integer (digits only, an optional
// leading '+'). It reports whether the token has that form and an error when
// it does but is too large.
func parseInt(tok string) (int, bool, error) { return parseIntBytes([]byte(tok)) }

// parseIntBytes is parseInt of a word.
func parseIntBytes(tok []byte) (int, bool, error) {
	d := tok
	if len(d) > 0 && d[0] == '+' {
		d = d[1:]
	}
	if len(d) == 0 {
		return 0, false, nil
	}
	v := 0
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false, nil
		}
		if v > math.MaxInt32 {
			continue // too large; the rest must still be digits
		}
		v = 10*v + int(c-'0')
	}
	if v > math.MaxInt32 {
		return 0, true, errors.New("too large")
	}
	return v, true, nil
}

// count reads a non-negative integer of at least lo; the format and its
// arguments say what it is, and are formatted only for an error. The
// token's text is set only for an error: counts are most of a network's
// header, read without a copy of each word.
func (s *scanner) count(lo int, format string, ints ...int) (int, token, error) {
	a := func() []any {
		out := make([]any, len(ints))
		for i, v := range ints {
			out[i] = v
		}
		return out
	}
	w, err := s.word()
	if err == io.EOF {
		return 0, token{}, errorf(s.last, "the file ends early; want %s", fmt.Sprintf(format, a()...))
	}
	if err != nil {
		return 0, token{}, err
	}
	t := token{line: s.last}
	v, ok, err := parseIntBytes(w)
	if !ok || err != nil || v < lo {
		t.text = string(w)
	}
	if !ok {
		return 0, t, errorf(t.line, "want %s (an integer ≥ %d), got %q", fmt.Sprintf(format, a()...), lo, t.text)
	}
	if err != nil {
		return 0, t, errorf(t.line, "%s is %s, too large", fmt.Sprintf(format, a()...), t.text)
	}
	if v < lo {
		return 0, t, errorf(t.line, "%s is %d; want an integer ≥ %d", fmt.Sprintf(format, a()...), v, lo)
	}
	return v, t, nil
}

// decimal splits a number in decimal notation, [+-]digits[.digits][e[+-]digits]
// with at least one digit before the exponent (so ".5" and "5." are
// numbers), into its sign, mantissa digits (without the point), the
// position of the point among them and the exponent text. ok is false for
// anything else, including hexadecimal, "inf" and "nan".
func decimal(tok string) (neg bool, digits string, point int, exp string, ok bool) {
	s := tok
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	mant := s
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
		e := strings.TrimLeft(exp, "+-")
		if len(exp)-len(e) > 1 || e == "" || strings.Trim(e, "0123456789") != "" {
			return false, "", 0, "", false
		}
	}
	point = len(mant)
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		point = i
		mant = mant[:i] + mant[i+1:]
	}
	if mant == "" || strings.Trim(mant, "0123456789") != "" {
		return false, "", 0, "", false
	}
	return neg, mant, point, exp, true
}

// logValue returns the natural logarithm of a non-negative number written
// in decimal notation: −Inf for zero. Numbers beyond float64's range (1e-400,
// 1e400) keep their exact logarithm. It fails for negative numbers, for
// "nan", "inf" and other non-decimal forms, and for logarithms beyond
// float64's range; the message completes "X is ...".
func logValue(tok string) (float64, error) {
	neg, digits, point, exp, ok := decimal(tok)
	if !ok {
		l := strings.ToLower(strings.TrimLeft(tok, "+-"))
		if l == "nan" {
			return 0, errors.New("NaN; want a finite number ≥ 0")
		}
		if l == "inf" || l == "infinity" {
			return 0, fmt.Errorf("%s; want a finite number ≥ 0", tok)
		}
		return 0, fmt.Errorf("%q, not a number", tok)
	}
	nz := strings.TrimLeft(digits, "0")
	if nz == "" {
		return math.Inf(-1), nil // zero, with any sign
	}
	if neg {
		return 0, fmt.Errorf("%s; want a number ≥ 0", tok)
	}
	if v, err := strconv.ParseFloat(tok, 64); err == nil && v >= 0x1p-1022 && !math.IsInf(v, 0) {
		return math.Log(v), nil
	}
	// Out of float64's normal range: log(0.d₁d₂… × 10^e) from the leading
	// significant digits and the exponent.
	lead := len(digits) - len(nz) // zeros before the first significant digit
	sig := nz
	if len(sig) > 19 {
		sig = sig[:19]
	}
	m, _ := strconv.ParseFloat("0."+sig, 64)
	e := 0.0
	if exp != "" {
		e, _ = strconv.ParseFloat(exp, 64)
	}
	l := math.Log(m) + (e+float64(point-lead))*math.Ln10
	if math.IsInf(l, 0) || math.IsNaN(l) {
		return 0, fmt.Errorf("%s, beyond the range this reader supports", tok)
	}
	return l, nil
}

// prob parses a probability or other non-negative finite number (linear
// scale, as in MAR files).
func prob(tok string) (float64, error) {
	if _, _, _, _, ok := decimal(tok); !ok {
		l := strings.ToLower(strings.TrimLeft(tok, "+-"))
		if l == "nan" || l == "inf" || l == "infinity" {
			return 0, fmt.Errorf("%s; want a finite number ≥ 0", tok)
		}
		return 0, fmt.Errorf("%q, not a number", tok)
	}
	v, err := strconv.ParseFloat(tok, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s, beyond float64's range", tok)
	}
	if v < 0 {
		return 0, fmt.Errorf("%s; want a number ≥ 0", tok)
	}
	return v + 0, nil // +0 turns −0 into 0
}
