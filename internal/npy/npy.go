package npy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Element is a type of array element this package writes.
type Element interface {
	float64 | float32 | int8 | int16 | int32 | int64 | uint8
}

// Magic starts every NPY file.
const Magic = "\x93NUMPY"

// align is the multiple of bytes at which the data start (the format's
// documentation asks for 64 so that the data can be memory-mapped aligned).
const align = 64

// maxHeader is the largest header of format version 1.0 (its length is a
// uint16).
const maxHeader = math.MaxUint16

// Descr returns the NumPy type string of T ("<f8" for float64).
func Descr[T Element]() string {
	var z T
	switch any(z).(type) {
	case float64:
		return "<f8"
	case float32:
		return "<f4"
	case int8:
		return "|i1"
	case int16:
		return "<i2"
	case int32:
		return "<i4"
	case int64:
		return "<i8"
	case uint8:
		return "|u1"
	}
	panic(fmt.Sprintf("npy: no NumPy type for %T", z))
}

// size returns the number of values of an array of the given shape, or an
// error for a negative extent or a count that does not fit an int.
func size(shape []int) (int, error) {
	n := 1
	for _, s := range shape {
		if s < 0 {
			return 0, fmt.Errorf("npy: shape %v has a negative extent", shape)
		}
		if s != 0 && n > math.MaxInt/s {
			return 0, fmt.Errorf("npy: shape %v holds more values than fit in an int", shape)
		}
		n *= s
	}
	return n, nil
}

// Header returns the bytes before the data of an array of the given NumPy
// type string and shape: magic, version 1.0, header length and the padded
// header.
func Header(descr string, shape []int) ([]byte, error) {
	if _, err := size(shape); err != nil {
		return nil, err
	}
	var sb strings.Builder
	sb.WriteString("{'descr': '")
	sb.WriteString(descr)
	sb.WriteString("', 'fortran_order': False, 'shape': (")
	for i, s := range shape {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(strconv.Itoa(s))
	}
	if len(shape) == 1 {
		sb.WriteByte(',') // a Python 1-tuple
	}
	sb.WriteString("), }")
	pre := len(Magic) + 2 + 2
	total := pre + sb.Len() + 1 // the newline
	pad := (align - total%align) % align
	hlen := sb.Len() + pad + 1
	if hlen > maxHeader {
		return nil, fmt.Errorf("npy: a header of %d bytes does not fit format version 1.0", hlen)
	}
	out := make([]byte, 0, pre+hlen)
	out = append(out, Magic...)
	out = append(out, 1, 0)
	out = binary.LittleEndian.AppendUint16(out, uint16(hlen))
	out = append(out, sb.String()...)
	for range pad {
		out = append(out, ' ')
	}
	return append(out, '\n'), nil
}

// Write writes data, len(data) values in C order, as an array of the given
// shape.
func Write[T Element](w io.Writer, shape []int, data []T) error {
	aw, err := NewWriter[T](w, shape)
	if err != nil {
		return err
	}
	if err := aw.Append(data...); err != nil {
		return err
	}
	return aw.Close()
}

// Writer streams the values of one array: NewWriter writes the header,
// Append the values in C order, and Close checks that the shape was filled.
// It does not buffer beyond a small chunk; wrap w in a bufio.Writer.
type Writer[T Element] struct {
	w         io.Writer
	want, got int
	buf       []byte
}

// NewWriter writes the header of an array of T with the given shape and
// returns the writer of its values.
func NewWriter[T Element](w io.Writer, shape []int) (*Writer[T], error) {
	n, err := size(shape)
	if err != nil {
		return nil, err
	}
	h, err := Header(Descr[T](), shape)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(h); err != nil {
		return nil, err
	}
	return &Writer[T]{w: w, want: n}, nil
}

// chunk is the number of values Append encodes before each write.
const chunk = 4096

// Append writes values; together the calls must write exactly as many as
// the shape holds.
func (a *Writer[T]) Append(v ...T) error {
	if a.got+len(v) > a.want || a.got+len(v) < a.got {
		return fmt.Errorf("npy: %d values for a shape of %d", a.got+len(v), a.want)
	}
	for len(v) > 0 {
		k := min(len(v), chunk)
		a.buf = appendValues(a.buf[:0], v[:k])
		if _, err := a.w.Write(a.buf); err != nil {
			return err
		}
		a.got += k
		v = v[k:]
	}
	return nil
}

// Close reports an array that received fewer values than its shape holds.
func (a *Writer[T]) Close() error {
	if a.got != a.want {
		return fmt.Errorf("npy: %d values written for a shape of %d", a.got, a.want)
	}
	return nil
}

func appendValues[T Element](b []byte, v []T) []byte {
	var z T
	le := binary.LittleEndian
	switch any(z).(type) {
	case float64:
		for _, x := range v {
			b = le.AppendUint64(b, math.Float64bits(float64(x)))
		}
	case float32:
		for _, x := range v {
			b = le.AppendUint32(b, math.Float32bits(float32(x)))
		}
	case int8:
		for _, x := range v {
			b = append(b, byte(int8(x)))
		}
	case uint8:
		for _, x := range v {
			b = append(b, byte(x))
		}
	case int16:
		for _, x := range v {
			b = le.AppendUint16(b, uint16(int16(x)))
		}
	case int32:
		for _, x := range v {
			b = le.AppendUint32(b, uint32(int32(x)))
		}
	case int64:
		for _, x := range v {
			b = le.AppendUint64(b, uint64(int64(x)))
		}
	default:
		panic(fmt.Sprintf("npy: no encoding for %T", z))
	}
	return b
}

// Info is what a header says: the NumPy type string, the order and the
// shape.
type Info struct {
	Descr        string
	FortranOrder bool
	Shape        []int
}

// Len returns the number of values the shape holds.
func (h Info) Len() int {
	n := 1
	for _, s := range h.Shape {
		n *= s
	}
	return n
}

// ReadHeader reads the magic string, the version (1.0, 2.0 or 3.0) and the
// header of an NPY file, leaving r at the first data byte. It reads headers
// as numpy writes them: the keys 'descr', 'fortran_order' and 'shape', in
// any order.
func ReadHeader(r io.Reader) (Info, error) {
	var info Info
	pre := make([]byte, len(Magic)+2)
	if _, err := io.ReadFull(r, pre); err != nil {
		return info, fmt.Errorf("npy: reading the magic string: %w", err)
	}
	if string(pre[:len(Magic)]) != Magic {
		return info, errors.New("npy: not an NPY file (no \\x93NUMPY magic string)")
	}
	var hlen int
	switch major := pre[len(Magic)]; major {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return info, fmt.Errorf("npy: reading the header length: %w", err)
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return info, fmt.Errorf("npy: reading the header length: %w", err)
		}
		hlen = int(binary.LittleEndian.Uint32(b[:]))
		if hlen > 1<<24 {
			return info, fmt.Errorf("npy: a header of %d bytes", hlen)
		}
	default:
		return info, fmt.Errorf("npy: format version %d.%d; want 1.0, 2.0 or 3.0", major, pre[len(Magic)+1])
	}
	h := make([]byte, hlen)
	if _, err := io.ReadFull(r, h); err != nil {
		return info, fmt.Errorf("npy: reading the header: %w", err)
	}
	return parseHeader(strings.TrimRight(string(h), " \n\x00"))
}

// parseHeader parses the dict literal of a header.
func parseHeader(s string) (Info, error) {
	var info Info
	bad := func(why string) (Info, error) {
		return Info{}, fmt.Errorf("npy: header %q: %s", s, why)
	}
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return bad("not a dict")
	}
	s = strings.TrimSpace(s[1 : len(s)-1])
	seen := map[string]bool{}
	for s != "" {
		if s[0] != '\'' && s[0] != '"' {
			return bad("want a quoted key")
		}
		end := strings.IndexByte(s[1:], s[0])
		if end < 0 {
			return bad("unterminated key")
		}
		key := s[1 : 1+end]
		s = strings.TrimSpace(s[end+2:])
		if !strings.HasPrefix(s, ":") {
			return bad("want ':' after key " + key)
		}
		s = strings.TrimSpace(s[1:])
		if seen[key] {
			return bad("key " + key + " twice")
		}
		seen[key] = true
		switch key {
		case "descr":
			if s == "" || (s[0] != '\'' && s[0] != '"') {
				return bad("descr is not a string")
			}
			e := strings.IndexByte(s[1:], s[0])
			if e < 0 {
				return bad("unterminated descr")
			}
			info.Descr = s[1 : 1+e]
			s = s[e+2:]
		case "fortran_order":
			switch {
			case strings.HasPrefix(s, "False"):
				s = s[len("False"):]
			case strings.HasPrefix(s, "True"):
				info.FortranOrder = true
				s = s[len("True"):]
			default:
				return bad("fortran_order is not True or False")
			}
		case "shape":
			if !strings.HasPrefix(s, "(") {
				return bad("shape is not a tuple")
			}
			e := strings.IndexByte(s, ')')
			if e < 0 {
				return bad("unterminated shape")
			}
			info.Shape = []int{}
			for _, f := range strings.Split(s[1:e], ",") {
				f = strings.TrimSpace(f)
				if f == "" {
					continue
				}
				f = strings.TrimSuffix(f, "L") // Python 2's longs
				v, err := strconv.Atoi(f)
				if err != nil || v < 0 {
					return bad("shape extent " + f)
				}
				info.Shape = append(info.Shape, v)
			}
			s = s[e+1:]
		default:
			return bad("unknown key " + key)
		}
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, ",") {
			s = strings.TrimSpace(s[1:])
		} else if s != "" {
			return bad("want ',' between entries")
		}
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return bad("no " + k)
		}
	}
	if _, err := size(info.Shape); err != nil {
		return Info{}, err
	}
	return info, nil
}

// Read reads a whole NPY array of T in C order (numpy's default), refusing
// another element type, Fortran order or more than max values (0: no
// limit).
func Read[T Element](r io.Reader, max int) (Info, []T, error) {
	br := bufio.NewReader(r)
	info, err := ReadHeader(br)
	if err != nil {
		return info, nil, err
	}
	// A one-byte type has no byte order: numpy writes '|i1' but reads '<i1'.
	if want := Descr[T](); info.Descr != want && !(want[0] == '|' && len(info.Descr) == 3 && info.Descr[1:] == want[1:]) {
		return info, nil, fmt.Errorf("npy: the array's type is %s; want %s", info.Descr, want)
	}
	if info.FortranOrder {
		return info, nil, errors.New("npy: the array is in Fortran order; want C order")
	}
	n := info.Len()
	if max > 0 && n > max {
		return info, nil, fmt.Errorf("npy: the array holds %d values, more than %d", n, max)
	}
	var z T
	width := len(appendValues(nil, []T{z}))
	out := make([]T, n)
	buf := make([]byte, width*chunk)
	le := binary.LittleEndian
	for o := 0; o < n; {
		k := min(n-o, chunk)
		if _, err := io.ReadFull(br, buf[:k*width]); err != nil {
			return info, nil, fmt.Errorf("npy: reading the values: %w", err)
		}
		for i := range k {
			b := buf[i*width:]
			var v any
			switch any(z).(type) {
			case float64:
				v = math.Float64frombits(le.Uint64(b))
			case float32:
				v = math.Float32frombits(le.Uint32(b))
			case int8:
				v = int8(b[0])
			case uint8:
				v = b[0]
			case int16:
				v = int16(le.Uint16(b))
			case int32:
				v = int32(le.Uint32(b))
			case int64:
				v = int64(le.Uint64(b))
			}
			out[o+i] = v.(T)
		}
		o += k
	}
	return info, out, nil
}
