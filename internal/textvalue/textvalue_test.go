package textvalue

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		v    any
		text string
		want any
		err  string
	}{
		{0.0, "2.5", 2.5, ""}, {0.0, "NaN", nil, "not a finite number"}, {0.0, "1e999", nil, "not a finite number"},
		{0, "7", 7, ""}, {0, "0.5", nil, "not a whole number"},
		{false, "true", true, ""}, {false, "maybe", nil, "not true or false"},
		{"", "x", "x", ""},
		{netip.Addr{}, "127.0.0.1", netip.MustParseAddr("127.0.0.1"), ""}, {netip.Addr{}, "nope", nil, "ParseAddr"},
		{[]int{}, "1", nil, "cannot be given"},
	} {
		typ := reflect.TypeOf(c.v)
		got, err := Parse(typ, c.text)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v %q: %v; want an error with %q", typ, c.text, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got.Interface(), c.want) {
			t.Errorf("%v %q: %v, %v; want %v", typ, c.text, got, err, c.want)
		}
		if !Supported(typ) {
			t.Errorf("%v not supported", typ)
		}
	}
	if Supported(reflect.TypeOf([]int{})) || !IsText(reflect.TypeOf(netip.Addr{})) {
		t.Error("Supported or IsText is wrong")
	}
}
