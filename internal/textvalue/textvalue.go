// Package textvalue parses the text of a command-line value into a Go
// value of a given type: an encoding.TextUnmarshaler, a string, a finite
// float64, an int or a bool. The sampler settings' flags and the
// experiments' options both read their values with it.
package textvalue

import (
	"encoding"
	"fmt"
	"math"
	"reflect"
	"strconv"
)

var textType = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()

// IsText reports whether *t reads its own text (encoding.TextUnmarshaler).
func IsText(t reflect.Type) bool { return reflect.PointerTo(t).Implements(textType) }

// Supported reports whether Parse reads values of type t.
func Supported(t reflect.Type) bool {
	if IsText(t) {
		return true
	}
	switch t.Kind() {
	case reflect.String, reflect.Float64, reflect.Int, reflect.Bool:
		return true
	}
	return false
}

// Parse parses s as a value of type t; its errors say what was wanted
// ("\"x\" is not a finite number").
func Parse(t reflect.Type, s string) (reflect.Value, error) {
	v := reflect.New(t)
	if IsText(t) {
		if err := v.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			return v, err
		}
		return v.Elem(), nil
	}
	switch t.Kind() {
	case reflect.String:
		v.Elem().SetString(s)
	case reflect.Float64:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return v, fmt.Errorf("%q is not a finite number", s)
		}
		v.Elem().SetFloat(x)
	case reflect.Int:
		x, err := strconv.Atoi(s)
		if err != nil {
			return v, fmt.Errorf("%q is not a whole number", s)
		}
		v.Elem().SetInt(int64(x))
	case reflect.Bool:
		x, err := strconv.ParseBool(s)
		if err != nil {
			return v, fmt.Errorf("%q is not true or false", s)
		}
		v.Elem().SetBool(x)
	default:
		return v, fmt.Errorf("internal error: a value of type %v cannot be given on the command line", t)
	}
	return v.Elem(), nil
}
