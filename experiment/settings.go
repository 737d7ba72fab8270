package experiment

import (
	"encoding"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/dstein/dstein/internal/textvalue"
	"github.com/dstein/dstein/sampler"
)

// An experiment's settings are a struct of its own options (the Ising
// experiments' field strength, the BNN experiment's epochs, …), registered
// with its defaults as Experiment.Settings and given to a run as
// Config.Settings. Each field carries tags:
//
//	opt:"KEY[,select]"        the option's name in the journal's settings (required);
//	                          select: it only selects which settings run (such as
//	                          nmax) and a resume may change it
//	flag:"NAME[,positive]"    its command-line flag (default KEY); positive: a
//	                          value given must be > 0 (its zero means "the default")
//	flag:"NAME,nonnegative"   a value must be ≥ 0
//	help:"TEXT"               the flag's help
//
// A field is a float64 (finite), an int, a bool (recorded as 1 or 0) or an
// OptionValue. Journals record the options as numbers by KEY, so a KEY
// never changes once journals with it are published; a new option needs
// its old value in Experiment.Legacy when that is not its default.
type OptionValue interface {
	encoding.TextUnmarshaler
	fmt.Stringer
	// Option is the value as the journal records it; SetOption reads it
	// back.
	Option() float64
	SetOption(float64) error
}

var optionValueType = reflect.TypeOf((*OptionValue)(nil)).Elem()

// Option describes one option of an experiment.
type Option struct {
	// Key is its name in the journal, Flag its command-line flag.
	Key, Flag, Help string
	// Kind is "float", "int", "bool" or "string" (an OptionValue).
	Kind string
	// Default is the experiment's default, as a flag would give it.
	Default string
	// Positive options take values > 0 on the command line (0 is the
	// default); NonNegative ones values ≥ 0.
	Positive, NonNegative bool
	// SelectOnly options choose which settings run without changing any
	// trial's result: a journal resumes with another value.
	SelectOnly bool
	index      int
}

// Options lists the experiment's options in the order of its settings'
// fields (none when it has no settings).
func (e *Experiment) Options() []Option {
	if e.Settings == nil {
		return nil
	}
	opts, err := optionsOf(reflect.TypeOf(e.Settings))
	if err != nil {
		panic(fmt.Sprintf("experiment %s: %v", e.Name, err)) // TestExperimentOptions fails first
	}
	def, _ := e.settingsValue(nil)
	for i := range opts {
		opts[i].Default = formatOption(def.Field(opts[i].index))
	}
	return opts
}

// optionsOf reads the tags of a settings struct type.
func optionsOf(t reflect.Type) ([]Option, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("settings of type %v: want a struct", t)
	}
	var out []Option
	seen := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		key, mod, _ := strings.Cut(f.Tag.Get("opt"), ",")
		if key == "" {
			return nil, fmt.Errorf("settings field %s has no opt tag", f.Name)
		}
		o := Option{Key: key, Flag: key, Help: f.Tag.Get("help"), SelectOnly: mod == "select", index: i}
		if mod != "" && mod != "select" {
			return nil, fmt.Errorf("settings field %s: unknown opt modifier %q", f.Name, mod)
		}
		if tag := f.Tag.Get("flag"); tag != "" {
			name, mod, _ := strings.Cut(tag, ",")
			if name != "" {
				o.Flag = name
			}
			switch mod {
			case "":
			case "positive":
				o.Positive = true
			case "nonnegative":
				o.NonNegative = true
			default:
				return nil, fmt.Errorf("settings field %s: unknown flag modifier %q", f.Name, mod)
			}
		}
		switch {
		case reflect.PointerTo(f.Type).Implements(optionValueType):
			o.Kind = "string"
		case f.Type.Kind() == reflect.Float64:
			o.Kind = "float"
		case f.Type.Kind() == reflect.Int:
			o.Kind = "int"
		case f.Type.Kind() == reflect.Bool:
			o.Kind = "bool"
		default:
			return nil, fmt.Errorf("settings field %s of type %v: want float64, int, bool or an OptionValue", f.Name, f.Type)
		}
		if seen[o.Key] || seen["flag "+o.Flag] {
			return nil, fmt.Errorf("settings field %s: option %q or flag --%s given twice", f.Name, o.Key, o.Flag)
		}
		seen[o.Key], seen["flag "+o.Flag] = true, true
		out = append(out, o)
	}
	return out, nil
}

func formatOption(v reflect.Value) string {
	if ov, ok := v.Addr().Interface().(OptionValue); ok {
		return ov.String()
	}
	switch v.Kind() {
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.Int:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	}
	return fmt.Sprint(v.Interface())
}

// settingsValue returns s as a value of the experiment's settings type
// (nil: the defaults).
func (e *Experiment) settingsValue(s any) (reflect.Value, error) {
	if e.Settings == nil {
		if s != nil {
			return reflect.Value{}, fmt.Errorf("experiment %s has no settings; got %T", e.Name, s)
		}
		return reflect.Value{}, nil
	}
	want := reflect.TypeOf(e.Settings)
	out := reflect.New(want).Elem()
	switch v := reflect.ValueOf(s); {
	case s == nil:
		out.Set(reflect.ValueOf(e.Settings))
	case v.Type() == want:
		out.Set(v)
	case v.Type() == reflect.PointerTo(want) && !v.IsNil():
		out.Set(v.Elem())
	default:
		return reflect.Value{}, fmt.Errorf("experiment %s takes settings of type %v; got %T", e.Name, want, s)
	}
	return out, nil
}

// encode returns the options of settings s (nil: the defaults) as the
// journal records them, after checking their values.
func (e *Experiment) encode(s any) (map[string]float64, error) {
	v, err := e.settingsValue(s)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, o := range e.Options() {
		x := optionNumber(v.Field(o.index))
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("experiment option %s is %v; want a finite number", o.Key, x)
		}
		if (o.Positive || o.NonNegative) && x < 0 {
			return nil, fmt.Errorf("experiment option %s is %v; want a number ≥ 0", o.Key, x)
		}
		out[o.Key] = x
	}
	return out, nil
}

// optionNumber is the number a journal records for option field f.
func optionNumber(f reflect.Value) float64 {
	switch fv := f.Addr().Interface().(type) {
	case OptionValue:
		return fv.Option()
	case *float64:
		return *fv
	case *int:
		return float64(*fv)
	case *bool:
		if *fv {
			return 1
		}
	}
	return 0
}

// decode returns the settings that the journal's options record (a
// missing option takes its default).
func (e *Experiment) decode(opts map[string]float64) (any, error) {
	if e.Settings == nil {
		for k := range opts {
			return nil, fmt.Errorf("experiment %s has no option %q", e.Name, k)
		}
		return nil, nil
	}
	v, _ := e.settingsValue(nil)
	known := map[string]bool{}
	for _, o := range e.Options() {
		known[o.Key] = true
		x, ok := opts[o.Key]
		if !ok {
			continue
		}
		f := v.Field(o.index)
		switch fv := f.Addr().Interface().(type) {
		case OptionValue:
			if err := fv.SetOption(x); err != nil {
				return nil, fmt.Errorf("experiment option %s: %w", o.Key, err)
			}
		case *float64:
			*fv = x
		case *int:
			if x != math.Trunc(x) || math.Abs(x) > 1<<40 {
				return nil, fmt.Errorf("experiment option %s is %v; want a whole number", o.Key, x)
			}
			*fv = int(x)
		case *bool:
			if x != 0 && x != 1 {
				return nil, fmt.Errorf("experiment option %s is %v; want 0 or 1", o.Key, x)
			}
			*fv = x == 1
		}
	}
	for k := range opts {
		if !known[k] {
			return nil, fmt.Errorf("experiment %s has no option %q", e.Name, k)
		}
	}
	return v.Interface(), nil
}

// selectOnly names the options that only select settings.
func (e *Experiment) selectOnly() map[string]bool {
	out := map[string]bool{}
	for _, o := range e.Options() {
		if o.SelectOnly {
			out[o.Key] = true
		}
	}
	return out
}

// defaultOptions are the experiment's defaults as a journal records them.
func (e *Experiment) defaultOptions() map[string]float64 {
	m, err := e.encode(nil)
	if err != nil {
		panic(fmt.Sprintf("experiment %s: its defaults: %v", e.Name, err)) // TestExperimentOptions fails first
	}
	return m
}

// ParseSettings returns the experiment's settings with the options given
// by flag name (the text a command line gives) set, the others at their
// defaults: an unknown flag, a value that does not parse or is out of
// range is an error that names the flag.
func (e *Experiment) ParseSettings(given map[string]string) (any, error) {
	byFlag := map[string]Option{}
	for _, o := range e.Options() {
		byFlag[o.Flag] = o
	}
	flags := make([]string, 0, len(given))
	for f := range given {
		flags = append(flags, f)
	}
	sort.Strings(flags)
	v, err := e.settingsValue(nil)
	if err != nil {
		return nil, err
	}
	for _, name := range flags {
		o, ok := byFlag[name]
		if !ok {
			return nil, fmt.Errorf("--%s is not an option of experiment %s (%s)", name, e.Name, e.optionWords())
		}
		text := given[name]
		f := v.Field(o.index)
		x, err := textvalue.Parse(f.Type(), text)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", name, err)
		}
		f.Set(x)
		n := optionNumber(f)
		switch {
		case o.Positive && n <= 0:
			return nil, fmt.Errorf("--%s %s: want a number > 0", name, text)
		case o.NonNegative && n < 0:
			return nil, fmt.Errorf("--%s %s: want a number ≥ 0", name, text)
		}
	}
	if !v.IsValid() {
		return nil, nil
	}
	// Settings with a range of their own (DISCS's targets 1 to 4) check
	// it here, so that a value out of it is a bad command line.
	if c, ok := v.Interface().(interface{ Check() error }); ok {
		if err := c.Check(); err != nil {
			return nil, err
		}
	}
	return v.Interface(), nil
}

// Flags returns the command-line flags that give settings s (nil: the
// defaults): one --FLAG VALUE (or --FLAG for a bool) per option that
// differs from the experiment's default, in the order of the options'
// keys.
func (e *Experiment) Flags(s any) ([]string, error) {
	have, err := e.encode(s)
	if err != nil {
		return nil, err
	}
	def := e.defaultOptions()
	v, _ := e.settingsValue(s)
	opts := e.Options()
	sort.Slice(opts, func(a, b int) bool { return opts[a].Key < opts[b].Key })
	var out []string
	for _, o := range opts {
		if have[o.Key] == def[o.Key] {
			continue
		}
		switch o.Kind {
		case "bool":
			if have[o.Key] == 1 {
				out = append(out, "--"+o.Flag)
			} else {
				out = append(out, "--"+o.Flag+"=false")
			}
		default:
			out = append(out, "--"+o.Flag, formatOption(v.Field(o.index)))
		}
	}
	return out, nil
}

// optionWords lists the experiment's flags for an error message.
func (e *Experiment) optionWords() string {
	var fl []string
	for _, o := range e.Options() {
		fl = append(fl, "--"+o.Flag)
	}
	if len(fl) == 0 {
		return "it has no options of its own"
	}
	return "its options: " + strings.Join(fl, ", ")
}

// OptionFlag is one command-line flag of the experiments' options: the
// experiments that have it share its kind.
type OptionFlag struct {
	Name, Kind, Help string
	// Experiments lists the experiments that take it, in name order.
	Experiments []string
}

// OptionFlags lists the flags of every registered experiment's options,
// by flag name; two experiments that give one flag different kinds are an
// error (TestExperimentOptions keeps a release free of one).
func OptionFlags() ([]OptionFlag, error) {
	byName := map[string]*OptionFlag{}
	var names []string
	for _, n := range Names() {
		e := registry[n]
		if e.Settings == nil {
			continue
		}
		opts, err := optionsOf(reflect.TypeOf(e.Settings))
		if err != nil {
			return nil, fmt.Errorf("experiment %s: %w", n, err)
		}
		for _, o := range opts {
			f, ok := byName[o.Flag]
			if !ok {
				f = &OptionFlag{Name: o.Flag, Kind: o.Kind, Help: o.Help}
				byName[o.Flag] = f
				names = append(names, o.Flag)
			}
			if f.Kind != o.Kind {
				return nil, fmt.Errorf("flag --%s is a %s option of %s but a %s option of %s", o.Flag, f.Kind, strings.Join(f.Experiments, ", "), o.Kind, n)
			}
			f.Experiments = append(f.Experiments, n)
		}
	}
	sort.Strings(names)
	out := make([]OptionFlag, len(names))
	for i, n := range names {
		out[i] = *byName[n]
	}
	return out, nil
}

// device is the run's device option (a DeviceOption field of its
// settings), or the CPU when its experiment has none.
func (r *runner) device() sampler.Device { return deviceOf(r.cfg.settings) }

// deviceOf returns the device option of an experiment's settings, or the
// CPU when they have none.
func deviceOf(settings any) sampler.Device {
	v := reflect.ValueOf(settings)
	if v.Kind() != reflect.Struct {
		return sampler.CPU
	}
	for i := range v.NumField() {
		if o, ok := v.Field(i).Interface().(DeviceOption); ok {
			return o.Device
		}
	}
	return sampler.CPU
}

// DeviceOption is sampler.Device as an experiment's option: the journal
// records 0 for the CPU and 1 for CUDA.
type DeviceOption struct{ sampler.Device }

// UnmarshalText reads cpu or cuda.
func (o *DeviceOption) UnmarshalText(b []byte) error { return o.Device.UnmarshalText(b) }

// Option is the device's number.
func (o DeviceOption) Option() float64 { return float64(o.Device) }

// SetOption reads Option's number back.
func (o *DeviceOption) SetOption(x float64) error {
	switch x {
	case float64(sampler.CPU), float64(sampler.CUDA):
		o.Device = sampler.Device(x)
		return nil
	}
	return fmt.Errorf("%v: want %d (cpu) or %d (cuda)", x, sampler.CPU, sampler.CUDA)
}
