package strictjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode"
)

// MaxDepth is the deepest nesting of arrays and objects that Unmarshal and
// Check accept. dstein's own files nest at most 8 deep (an experiment
// journal's settings, with each method's pipeline and stage settings
// inside; model files 3, pipeline files 5 or so), so a limit 125 times
// that refuses nothing real, while it keeps a hostile file from driving
// the recursion of the checker and of encoding/json (whose own limit is
// 10,000) deep: a file nested to the limit costs microseconds.
const MaxDepth = 1000

// bom is the UTF-8 byte order mark, which RFC 8259 lets a parser ignore.
var bom = []byte("\xef\xbb\xbf")

// Prepare returns data without a leading UTF-8 byte order mark, after
// checking that its arrays and objects nest at most MaxDepth deep; the
// error names the line and column of the first bracket too deep. It reads
// data once, skipping strings, and allocates nothing unless it fails, so it
// runs before anything whose cost grows with the depth. Unmarshal and Check
// call it; a caller that reads the same bytes with encoding/json besides
// strictjson calls it first.
func Prepare(data []byte) ([]byte, error) {
	data = bytes.TrimPrefix(data, bom)
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			// Skip the string: its brackets are text. An unclosed
			// string ends the scan; the decoder reports it.
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			if depth++; depth > MaxDepth {
				return nil, fmt.Errorf("%s: arrays and objects nest more than %d deep; want at most %d levels", position(data, int64(i)), MaxDepth, MaxDepth)
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return data, nil
}

// Unmarshal decodes data into v (a pointer) after checking its keys against
// v's type. Types that implement json.Unmarshaler (other than through
// Checker) are checked for duplicate keys only. A leading UTF-8 byte order
// mark is ignored, and nesting deeper than MaxDepth is an error.
func Unmarshal(data []byte, v any) error {
	data, err := Prepare(data)
	if err != nil {
		return err
	}
	if err := check(data, reflect.TypeOf(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return describe(data, err)
	}
	if dec.More() {
		return fmt.Errorf("%s: more than one JSON value", position(data, dec.InputOffset()))
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%s: unexpected data after the JSON value", position(data, dec.InputOffset()))
	}
	return nil
}

// Checker is implemented by types that decode themselves from JSON but
// want their keys checked against a type of their choosing.
type Checker interface {
	// JSONShape returns the type whose fields the object's keys must match.
	JSONShape() reflect.Type
}

// Check verifies that data's object keys match t exactly (see Unmarshal)
// without decoding it.
func Check(data []byte, t reflect.Type) error {
	data, err := Prepare(data)
	if err != nil {
		return err
	}
	return check(data, t)
}

// check is Check on prepared data. Its cost is linear in the size of data:
// the path of a key (for errors) is kept as a stack of steps and written
// out only for an error, and each type's fields are collected once.
func check(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	c := checker{data: data, dec: dec, shapes: map[reflect.Type]reflect.Type{}, structs: map[reflect.Type]*fieldSet{}}
	return c.value(t)
}

type checker struct {
	data []byte
	dec  *json.Decoder
	// path holds the keys and indexes that lead to the current value.
	path []step
	// keys[d] holds the keys seen so far in the object open at depth d
	// (reused from object to object; a large object uses a map instead).
	keys [][]string
	// shapes caches the shape each Go type reads (see shape), structs the
	// fields of each struct type.
	shapes  map[reflect.Type]reflect.Type
	structs map[reflect.Type]*fieldSet
}

// step is one element of a path: an object key, or an array index when
// key is false.
type step struct {
	key   string
	index int
	isKey bool
}

// where returns the path to the current value, ending with key: "a.b[3].key".
func (c *checker) where(key string) string {
	var b strings.Builder
	for _, s := range c.path {
		if s.isKey {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		} else {
			fmt.Fprintf(&b, "[%d]", s.index)
		}
	}
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.WriteString(key)
	return b.String()
}

func (c *checker) pos() string { return position(c.data, c.dec.InputOffset()) }

var (
	unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	textType        = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
	checkerType     = reflect.TypeOf((*Checker)(nil)).Elem()
	rawType         = reflect.TypeOf(json.RawMessage(nil))
)

// deref strips pointers from t: a *T field reads the JSON of a T.
func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// shape returns the type whose shape a value of Go type t must have: t
// without pointers, the shape a Checker names, or nil (any shape) for
// types that decode themselves.
func (c *checker) shape(t reflect.Type) reflect.Type {
	if t == nil {
		return nil
	}
	if s, ok := c.shapes[t]; ok {
		return s
	}
	s := deref(t)
	if s != nil {
		// Methods are called on a non-nil value: the zero value, or a
		// pointer to one (a nil pointer would panic in a value method).
		pt := reflect.PointerTo(s)
		switch {
		case s.Kind() != reflect.Interface && s.Implements(checkerType):
			s = deref(reflect.Zero(s).Interface().(Checker).JSONShape())
		case pt.Implements(checkerType):
			s = deref(reflect.New(s).Interface().(Checker).JSONShape())
		case s == rawType || s.Implements(unmarshalerType) || pt.Implements(unmarshalerType) || pt.Implements(textType):
			s = nil
		}
	}
	c.shapes[t] = s
	return s
}

// value reads one JSON value and checks it against t (nil: any shape).
func (c *checker) value(t reflect.Type) error {
	t = c.shape(t)
	tok, err := c.dec.Token()
	if err != nil {
		return describe(c.data, err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		return c.object(t)
	case '[':
		var et reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			et = t.Elem()
		}
		c.path = append(c.path, step{})
		for k := 0; c.dec.More(); k++ {
			c.path[len(c.path)-1].index = k
			if err := c.value(et); err != nil {
				return err
			}
		}
		c.path = c.path[:len(c.path)-1]
		if _, err := c.dec.Token(); err != nil {
			return describe(c.data, err)
		}
	}
	return nil
}

// fieldSet is a struct type's fields by JSON name, and the names sorted.
type fieldSet struct {
	fields map[string]reflect.Type
	names  []string
}

func (c *checker) fieldsOf(t reflect.Type) *fieldSet {
	if fs, ok := c.structs[t]; ok {
		return fs
	}
	fs := &fieldSet{fields: map[string]reflect.Type{}}
	collect(t, fs.fields)
	for k := range fs.fields {
		fs.names = append(fs.names, k)
	}
	fs.names = sorted(fs.names)
	c.structs[t] = fs
	return fs
}

// smallObject is the number of keys up to which an object's keys are
// checked for duplicates by a linear search of a reused slice.
const smallObject = 16

func (c *checker) object(t reflect.Type) error {
	var fs *fieldSet
	var elem reflect.Type
	switch {
	case t == nil:
	case t.Kind() == reflect.Struct:
		fs = c.fieldsOf(t)
	case t.Kind() == reflect.Map:
		elem = t.Elem()
	case t.Kind() == reflect.Interface:
	}
	depth := len(c.path)
	for len(c.keys) <= depth {
		c.keys = append(c.keys, nil)
	}
	keys := c.keys[depth][:0]
	var seen map[string]bool // once the object has more than smallObject keys
	for c.dec.More() {
		tok, err := c.dec.Token()
		if err != nil {
			return describe(c.data, err)
		}
		key := tok.(string)
		dup := false
		if seen != nil {
			dup = seen[key]
			seen[key] = true
		} else {
			for _, k := range keys {
				if k == key {
					dup = true
					break
				}
			}
			if keys = append(keys, key); len(keys) > smallObject {
				seen = make(map[string]bool, 2*len(keys))
				for _, k := range keys {
					seen[k] = true
				}
			}
		}
		if dup {
			return fmt.Errorf("%s: key %q appears twice", c.pos(), c.where(key))
		}
		var ft reflect.Type
		if fs != nil {
			var ok bool
			ft, ok = fs.fields[key]
			if !ok {
				for _, n := range fs.names {
					if strings.EqualFold(n, key) {
						return fmt.Errorf("%s: key %q must be spelled %q", c.pos(), c.where(key), n)
					}
				}
				return fmt.Errorf("%s: unknown key %q; want one of %s", c.pos(), c.where(key), strings.Join(fs.names, ", "))
			}
		} else {
			ft = elem
		}
		c.path = append(c.path, step{key: key, isKey: true})
		if err := c.value(ft); err != nil {
			return err
		}
		c.path = c.path[:depth]
	}
	c.keys[depth] = keys[:0]
	if _, err := c.dec.Token(); err != nil {
		return describe(c.data, err)
	}
	return nil
}

// collect maps the JSON names of t's fields (embedded structs flattened) to
// their types, with encoding/json's rules: a name at a shallower depth of
// embedding hides the same name deeper down, a tagged name hides an untagged
// one at the same depth, and two names that tie are both dropped (encoding/json
// ignores them). Each embedded struct type is explored once, so a type that
// embeds a pointer to itself terminates.
func collect(t reflect.Type, out map[string]reflect.Type) {
	type found struct {
		typ    reflect.Type
		depth  int
		tagged bool
		ties   int // how many fields share this name, depth and taggedness
	}
	best := map[string]*found{}
	visited := map[reflect.Type]bool{}
	next := []reflect.Type{t}
	nextCount := map[reflect.Type]int{t: 1}
	for depth := 0; len(next) > 0; depth++ {
		current, count := next, nextCount
		next, nextCount = nil, map[reflect.Type]int{}
		for _, st := range current {
			if visited[st] {
				continue
			}
			visited[st] = true
			for i := range st.NumField() {
				f := st.Field(i)
				ft := f.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if f.Anonymous {
					if !f.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !f.IsExported() {
					continue
				}
				tag := f.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, _, _ := strings.Cut(tag, ",")
				if !validTag(name) {
					name = ""
				}
				if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
					nextCount[ft]++
					if nextCount[ft] == 1 {
						next = append(next, ft)
					}
					continue
				}
				tagged := name != ""
				if !tagged {
					name = f.Name
				}
				ties := 1
				if count[st] > 1 {
					ties = 2 // the same struct embedded twice at this depth
				}
				switch b := best[name]; {
				case b == nil || b.depth == depth && tagged && !b.tagged:
					best[name] = &found{f.Type, depth, tagged, ties}
				case b.depth == depth && tagged == b.tagged:
					b.ties += ties
				}
			}
		}
	}
	for name, b := range best {
		if b.ties == 1 {
			out[name] = b.typ
		}
	}
}

// validTag reports whether encoding/json accepts name as a field's JSON
// name (it uses the Go name otherwise).
func validTag(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
