package strictjson

// The messages: where in the file (line and column) and what was wrong.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Position returns "line L, column C" of a byte offset of data (both from
// 1, the column in bytes), for errors about a value found in prepared data
// (see Prepare).
func Position(data []byte, off int64) string { return position(data, off) }

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
		if num, ok := strings.CutPrefix(te.Value, "number "); ok && kindOf(te.Type) == "a whole number in range" && strings.ContainsAny(num, ".eE") {
			// A whole number written as 3.0 or 1e3, which fits the
			// field: say how to write it.
			if f, err := strconv.ParseFloat(num, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 && fits(te.Type, int64(f)) {
				return fmt.Errorf("%s: %s is the JSON number %s; want a whole number in plain digits (%d)", position(data, te.Offset), field, num, int64(f))
			}
		}
		return fmt.Errorf("%s: %s is a JSON %s; want %s", position(data, te.Offset), field, te.Value, kindOf(te.Type))
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("line %d: the JSON ends early", 1+bytes.Count(data, []byte{'\n'}))
	}
	return err
}

// fits says whether v is a value of the integer type t (or of what t
// points to).
func fits(t reflect.Type, v int64) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	z := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v >= 0 && !z.OverflowUint(uint64(v))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return !z.OverflowInt(v)
	}
	return false
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
