package observed

import (
	"math"
	"strings"
	"testing"

	"github.com/dstein/dstein/model"
)

func TestObservedStates(t *testing.T) {
	cols := [][]float64{{1, -1, 1, 1}, {2, 0, 5, 0}}
	m, err := New([]string{"a", "b"}, 4, func(i, r int) float64 { return cols[i][r] })
	if err != nil {
		t.Fatal(err)
	}
	if got := m.States(0); len(got) != 2 || got[0] != -1 || got[1] != 1 {
		t.Errorf("states of a: %v", got)
	}
	if got := m.States(1); len(got) != 3 || got[2] != 5 {
		t.Errorf("states of b: %v", got)
	}
	if k, ok := m.State(1, 5); !ok || k != 2 {
		t.Errorf("State(b, 5) = %d, %v", k, ok)
	}
	if _, ok := m.State(1, 3); ok {
		t.Error("an unseen value has a state")
	}
	if model.VariableName(m, 1) != "b" {
		t.Errorf("name %q", model.VariableName(m, 1))
	}
	if _, ok := model.Model(m).(model.NoDensity); !ok {
		t.Error("not marked NoDensity")
	}
	for _, c := range []struct {
		names []string
		v     float64
		want  string
	}{{[]string{"a", "a"}, 0, "two variables"}, {[]string{""}, 0, "empty"}, {[]string{"x"}, math.NaN(), "finite"}} {
		if _, err := New(c.names, 1, func(int, int) float64 { return c.v }); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, %v: error %v; want %q", c.names, c.v, err, c.want)
		}
	}
}
