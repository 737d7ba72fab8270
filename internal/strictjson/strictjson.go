package strictjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode"
)

// Unmarshal decodes data into v (a pointer) after checking its keys against
// v's type. Types that implement json.Unmarshaler (other than through
// Checker) are checked for duplicate keys only.
func Unmarshal(data []byte, v any) error {
	if err := Check(data, reflect.TypeOf(v)); err != nil {
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
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	c := checker{data: data, dec: dec}
	if err := c.value(t, ""); err != nil {
		return err
	}
	return nil
}

type checker struct {
	data []byte
	dec  *json.Decoder
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

// value reads one JSON value and checks it against t (nil: any shape).
func (c *checker) value(t reflect.Type, path string) error {
	t = deref(t)
	if t != nil {
		// Methods are called on a non-nil value: the zero value, or a
		// pointer to one (a nil pointer would panic in a value method).
		pt := reflect.PointerTo(t)
		switch {
		case t.Kind() != reflect.Interface && t.Implements(checkerType):
			t = deref(reflect.Zero(t).Interface().(Checker).JSONShape())
		case pt.Implements(checkerType):
			t = deref(reflect.New(t).Interface().(Checker).JSONShape())
		case t == rawType || t.Implements(unmarshalerType) || pt.Implements(unmarshalerType) || pt.Implements(textType):
			t = nil
		}
	}
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
		return c.object(t, path)
	case '[':
		var et reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			et = t.Elem()
		}
		for k := 0; c.dec.More(); k++ {
			if err := c.value(et, fmt.Sprintf("%s[%d]", path, k)); err != nil {
				return err
			}
		}
		if _, err := c.dec.Token(); err != nil {
			return describe(c.data, err)
		}
	}
	return nil
}

func (c *checker) object(t reflect.Type, path string) error {
	seen := map[string]bool{}
	var fields map[string]reflect.Type
	var names []string
	var elem reflect.Type
	switch {
	case t == nil:
	case t.Kind() == reflect.Struct:
		fields = map[string]reflect.Type{}
		collect(t, fields)
		for k := range fields {
			names = append(names, k)
		}
	case t.Kind() == reflect.Map:
		elem = t.Elem()
	case t.Kind() == reflect.Interface:
	}
	for c.dec.More() {
		tok, err := c.dec.Token()
		if err != nil {
			return describe(c.data, err)
		}
		key := tok.(string)
		where := key
		if path != "" {
			where = path + "." + key
		}
		if seen[key] {
			return fmt.Errorf("%s: key %q appears twice", c.pos(), where)
		}
		seen[key] = true
		var ft reflect.Type
		if fields != nil {
			var ok bool
			ft, ok = fields[key]
			if !ok {
				for _, n := range names {
					if strings.EqualFold(n, key) {
						return fmt.Errorf("%s: key %q must be spelled %q", c.pos(), where, n)
					}
				}
				return fmt.Errorf("%s: unknown key %q; want one of %s", c.pos(), where, strings.Join(sorted(names), ", "))
			}
		} else {
			ft = elem
		}
		if err := c.value(ft, where); err != nil {
			return err
		}
	}
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

// position returns "line L, column C" of a byte offset.
func position(data []byte, off int64) string {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := int(off) - bytes.LastIndexByte(data[:off], '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

// describe adds the position to encoding/json's errors.
func describe(data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("%s: %v", position(data, se.Offset), se)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "value"
		}
		return fmt.Errorf("%s: %s is a JSON %s; want %s", position(data, te.Offset), field, te.Value, kindOf(te.Type))
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("line %d: the JSON ends early", 1+bytes.Count(data, []byte{'\n'}))
	}
	return err
}

// kindOf names what a Go type reads from JSON.
func kindOf(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	if reflect.PointerTo(t).Implements(textType) {
		return "a string"
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return "a finite number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number in range"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return kindOf(t.Elem())
	}
	return "an object"
}
