package experiment

import (
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/dstein/dstein/infer"
)

// TestExperimentOptions checks every registered experiment's settings:
// their tags read, their defaults encode and decode to themselves, and no
// flag is shared by two experiments with different kinds (the command
// line registers one flag per name).
func TestExperimentOptions(t *testing.T) {
	flags, err := OptionFlags()
	if err != nil {
		t.Fatal(err)
	}
	if len(flags) == 0 {
		t.Fatal("no experiment has options")
	}
	for _, n := range Names() {
		e := registry[n]
		if e.Settings == nil {
			continue
		}
		if _, err := optionsOf(reflect.TypeOf(e.Settings)); err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		opts := e.defaultOptions()
		back, err := e.decode(opts)
		if err != nil {
			t.Errorf("%s: its defaults do not decode: %v", n, err)
			continue
		}
		if !reflect.DeepEqual(back, e.Settings) {
			t.Errorf("%s: defaults %+v came back as %+v", n, e.Settings, back)
		}
		for _, o := range e.Options() {
			if o.Help == "" {
				t.Errorf("%s: option %s has no help", n, o.Key)
			}
		}
		for k := range e.Legacy {
			if _, ok := opts[k]; !ok {
				t.Errorf("%s: legacy value for %q, which is not an option", n, k)
			}
		}
	}
}

// TestOptionFlagClash: two experiments giving one flag different kinds is
// an error that names both.
func TestOptionFlagClash(t *testing.T) {
	type a struct {
		X int `opt:"x" help:"x"`
	}
	type b struct {
		X float64 `opt:"x" help:"x"`
	}
	saved := registry
	defer func() { registry = saved }()
	registry = map[string]*Experiment{"one": {Name: "one", Settings: a{}}, "two": {Name: "two", Settings: b{}}}
	if _, err := OptionFlags(); err == nil || !strings.Contains(err.Error(), "one") || !strings.Contains(err.Error(), "two") {
		t.Errorf("clash: %v", err)
	}
	type c struct {
		X []int `opt:"x"`
	}
	if _, err := optionsOf(reflect.TypeOf(c{})); err == nil {
		t.Error("a slice option was accepted")
	}
	type d struct {
		X int
	}
	if _, err := optionsOf(reflect.TypeOf(d{})); err == nil {
		t.Error("a field without an opt tag was accepted")
	}
}

// TestParseSettings: flags set typed fields, the others keep their
// defaults, and every bad value is refused with the flag's name.
func TestParseSettings(t *testing.T) {
	suite, _ := Get("suite")
	s, err := suite.ParseSettings(map[string]string{"n": "20", "estimates": "frequencies"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (SuiteSettings{N: 20, Estimates: SuiteEstimates{infer.Frequencies}}); s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	opts, err := suite.encode(s)
	if err != nil || !maps.Equal(opts, map[string]float64{"n": 20, "estimates": 0}) {
		t.Errorf("journal options %v (%v); want n 20, estimates 0 (the journals' encoding)", opts, err)
	}
	bnn, _ := Get("bnn")
	s, err = bnn.ParseSettings(map[string]string{"train-limit": "500", "fashion": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (BNNSettings{Train: 500, Fashion: true}); s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	gof, _ := Get("gof-rbm-n")
	if s, _ := gof.ParseSettings(nil); s.(GOFRBMNSettings).Sigma != 0.05 {
		t.Errorf("gof-rbm-n's default σ' = %v, want 0.05", s)
	}
	isingN, _ := Get("ising-n")
	for _, bad := range []struct {
		e           *Experiment
		flag, value string
	}{
		{suite, "n", "0"}, {suite, "n", "x"}, {suite, "estimates", "counts"},
		{isingN, "field", "-1"}, {isingN, "field", "NaN"}, {isingN, "field", "Inf"},
		{isingN, "nmax", "1.5"}, {bnn, "fashion", "maybe"}, {bnn, "sigma", "1"},
	} {
		if _, err := bad.e.ParseSettings(map[string]string{bad.flag: bad.value}); err == nil || !strings.Contains(err.Error(), "--"+bad.flag) {
			t.Errorf("%s --%s %s: %v; want an error naming the flag", bad.e.Name, bad.flag, bad.value, err)
		}
	}
	// The library refuses what the command line would.
	if _, err := isingN.encode(IsingNSettings{Field: -0.1}); err == nil {
		t.Error("a negative field strength was accepted")
	}
	if _, err := suite.decode(map[string]float64{"estimates": 0.5}); err == nil {
		t.Error("estimates 0.5 was decoded")
	}
	if _, err := suite.decode(map[string]float64{"field": 1}); err == nil {
		t.Error("an option the suite lacks was decoded")
	}
}

// TestReproductionFlags: every published result's command line gives
// back its settings through ParseSettings, which is what the command
// line does with them.
func TestReproductionFlags(t *testing.T) {
	for _, p := range Reproductions() {
		e, err := Get(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []Mode{Full, Quick} {
			flags, err := e.Flags(p.settings(mode))
			if err != nil {
				t.Fatalf("%s: %v", p.ID, err)
			}
			given := map[string]string{}
			for i := 0; i < len(flags); i++ {
				name, val, ok := strings.Cut(strings.TrimPrefix(flags[i], "--"), "=")
				if !ok {
					if i+1 < len(flags) && !strings.HasPrefix(flags[i+1], "--") {
						val = flags[i+1]
						i++
					} else {
						val = "true"
					}
				}
				given[name] = val
			}
			back, err := e.ParseSettings(given)
			if err != nil {
				t.Fatalf("%s: %v: %v", p.ID, flags, err)
			}
			a, _ := e.encode(back)
			b, _ := e.encode(p.settings(mode))
			if !maps.Equal(a, b) {
				t.Errorf("%s (%v): %v gives %v, want %v", p.ID, mode, flags, a, b)
			}
		}
	}
}
