package suggest

import (
	"reflect"
	"testing"
)

func TestClosest(t *testing.T) {
	c := []string{"gibbs", "gfsvgd", "gwg", "dmala", "dhmc", "exact"}
	for in, want := range map[string][]string{
		"gibs":   {"gibbs"},
		"gfsvdg": {"gfsvgd"},
		"dhm":    {"dhmc"},
		"zzzzzz": nil,
	} {
		if got := Closest(in, c); !reflect.DeepEqual(got, want) {
			t.Errorf("Closest(%q) = %v, want %v", in, got, want)
		}
	}
	if h := Hint("exat", c); h != "; did you mean exact?" {
		t.Errorf("Hint = %q", h)
	}
}
