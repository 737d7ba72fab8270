package main

import (
	"encoding"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dstein/dstein/internal/textvalue"
	"github.com/dstein/dstein/sampler"
)

// settingFlag is a command-line flag bound to a field of one or more
// methods' settings (by their `flag` tags). Methods may share a flag when
// the field has the same meaning and type.
type settingFlag struct {
	name, help string
	positive   bool // the value must be > 0 (its zero means "the default")
	typ        reflect.Type
	methods    []string
	defaults   []string // the methods' defaults, "method value"
	raw        string
	isBool     bool
}

// pflag.Value
func (f *settingFlag) String() string { return f.raw }
func (f *settingFlag) Set(s string) error {
	if _, err := textvalue.Parse(f.typ, s); err != nil {
		return err
	}
	f.raw = s
	return nil
}
func (f *settingFlag) Type() string {
	switch {
	case f.isBool:
		return "bool"
	case f.typ.Kind() == reflect.Float64 && !textvalue.IsText(f.typ):
		return "float"
	case f.typ.Kind() == reflect.Int && !textvalue.IsText(f.typ):
		return "int"
	}
	return "string"
}

// fieldPath is the index path of a tagged field inside a settings struct.
type fieldPath []int

// taggedFields lists the fields of struct type t (nested structs
// included) that carry a `flag` tag, by flag name.
func taggedFields(t reflect.Type, prefix fieldPath, out map[string]fieldPath, help map[string]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		p := append(append(fieldPath(nil), prefix...), i)
		if tag := f.Tag.Get("flag"); tag != "" {
			name, opt, _ := strings.Cut(tag, ",")
			out[name] = p
			help[name] = f.Tag.Get("help")
			if opt == "positive" {
				help[name] = "\x00" + help[name] // marker read by registerSettingFlags
			}
			continue
		}
		if f.Type.Kind() == reflect.Struct && !textvalue.IsText(f.Type) {
			taggedFields(f.Type, p, out, help)
		}
	}
}

// settingFlags are the flags of every registered method's settings.
type settingFlags struct {
	byName map[string]*settingFlag
	paths  map[string]map[string]fieldPath // method → flag → field
	// err is a clash between methods' settings (one flag name, two
	// types): the clashing method's flag is left out, and every run of
	// the command reports err. TestSettingFlagsOfTheRegistry fails on it,
	// so a release never has one.
	err error
}

// registerSettingFlags adds one flag per distinct `flag` tag of the
// registered methods' settings to fs.
func registerSettingFlags(fs *pflag.FlagSet) *settingFlags {
	sf := newSettingFlags(sampler.Methods())
	sf.register(fs)
	return sf
}

// newSettingFlags gathers the `flag` tags of the methods' settings: one
// flag per name, whose type every method that has it must share.
func newSettingFlags(methods []*sampler.Method) *settingFlags {
	sf := &settingFlags{byName: map[string]*settingFlag{}, paths: map[string]map[string]fieldPath{}}
	for _, m := range methods {
		set := m.NewSettings()
		t := reflect.TypeOf(set).Elem()
		paths, help := map[string]fieldPath{}, map[string]string{}
		taggedFields(t, nil, paths, help)
		sf.paths[m.Name] = paths
		resolved := reflect.ValueOf(set.Resolved()).Elem()
		names := make([]string, 0, len(paths))
		for n := range paths {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, name := range names {
			p := paths[name]
			ft := t.FieldByIndex(p).Type
			f := sf.byName[name]
			h, positive := strings.CutPrefix(help[name], "\x00")
			if !textvalue.Supported(ft) {
				if sf.err == nil {
					sf.err = fmt.Errorf("internal error: the setting flag --%s of method %s has type %v, which the command line cannot read", name, m.Name, ft)
				}
				delete(paths, name)
				continue
			}
			if f == nil {
				f = &settingFlag{name: name, help: h, typ: ft, positive: positive, isBool: ft.Kind() == reflect.Bool && !textvalue.IsText(ft)}
				sf.byName[name] = f
			} else if f.typ != ft {
				if sf.err == nil {
					sf.err = fmt.Errorf("internal error: the setting flag --%s has type %v in method %s and %v in %s; a flag name must have one type",
						name, ft, m.Name, f.typ, strings.Join(f.methods, ", "))
				}
				delete(paths, name)
				continue
			}
			f.methods = append(f.methods, m.Name)
			f.defaults = append(f.defaults, m.Name+" "+formatSetting(resolved.FieldByIndex(p)))
		}
	}
	return sf
}

// register adds the flags to fs.
func (sf *settingFlags) register(fs *pflag.FlagSet) {
	names := make([]string, 0, len(sf.byName))
	for n := range sf.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f := sf.byName[n]
		help := f.help + " [" + strings.Join(f.methods, ", ") + "]"
		if len(f.defaults) == 1 {
			help += " (default " + strings.TrimPrefix(f.defaults[0], f.methods[0]+" ") + ")"
		} else {
			help += " (default: " + strings.Join(f.defaults, ", ") + ")"
		}
		fl := fs.VarPF(f, n, "", help)
		if f.isBool {
			fl.NoOptDefVal = "true"
		}
	}
}

// formatSetting writes a setting's value as the command line reads it.
func formatSetting(v reflect.Value) string {
	if m, ok := v.Interface().(encoding.TextMarshaler); ok {
		b, err := m.MarshalText()
		if err == nil {
			return string(b)
		}
	}
	switch v.Kind() {
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.String:
		if v.String() == "" {
			return `""`
		}
	}
	return fmt.Sprint(v.Interface())
}

// apply sets the flags the user changed on the stages of p whose method has
// them. A flag that applies to no stage, or to more than one, is a usage
// error naming the methods it applies to.
func (sf *settingFlags) apply(fs *pflag.FlagSet, p *sampler.Pipeline, what string) error {
	names := make([]string, 0, len(sf.byName))
	for n := range sf.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	applied := map[string]int{} // flag → the stage it set
	for _, name := range names {
		if !fs.Changed(name) {
			continue
		}
		f := sf.byName[name]
		var hits []int
		for k, st := range p.Stages {
			if _, ok := sf.paths[st.Method][name]; ok {
				hits = append(hits, k)
			}
		}
		switch {
		case len(hits) == 0:
			return usagef("--%s applies to %s, not to %s", name, strings.Join(f.methods, " and "), what)
		case len(hits) > 1:
			return usagef("--%s would apply to %d stages of %s; set it in a pipeline file instead", name, len(hits), what)
		}
		st := &p.Stages[hits[0]]
		if st.Settings == nil {
			m, err := sampler.Lookup(st.Method)
			if err != nil {
				return err
			}
			st.Settings = m.NewSettings()
		}
		// Work on a copy, so a preset's own settings are never changed.
		cp := reflect.New(reflect.TypeOf(st.Settings).Elem())
		cp.Elem().Set(reflect.ValueOf(st.Settings).Elem())
		v, err := textvalue.Parse(f.typ, f.raw)
		if err != nil {
			return usagef("--%s: %v", name, err)
		}
		if f.positive && ((v.CanFloat() && !(v.Float() > 0)) || (v.CanInt() && v.Int() < 1)) {
			return usagef("--%s must be > 0, got %s", name, f.raw)
		}
		cp.Elem().FieldByIndex(sf.paths[st.Method][name]).Set(v)
		st.Settings = cp.Interface().(sampler.Settings)
		applied[name] = hits[0]
		// A 0 that the method's defaults replace would be read as what
		// it is not (as in a pipeline file, see sampler.ParsePipeline).
		if v.IsZero() {
			res := reflect.ValueOf(st.Settings.Resolved())
			if res.Kind() == reflect.Pointer {
				res = res.Elem()
			}
			if rv := res.FieldByIndex(sf.paths[st.Method][name]); !rv.IsZero() {
				return usagef("--%s %s would silently mean the default (%s); leave the flag out for the default, or give another value", name, f.raw, formatSetting(rv))
			}
		}
	}
	// Once every flag is set: one that the others make useless is refused.
	for _, name := range names {
		k, ok := applied[name]
		if !ok {
			continue
		}
		st := p.Stages[k]
		ig, ok := st.Settings.(sampler.Ignorer)
		if !ok {
			continue
		}
		field := reflect.TypeOf(st.Settings).Elem().FieldByIndex(sf.paths[st.Method][name])
		if why := ig.Ignored(strings.Split(field.Tag.Get("json"), ",")[0]); why != "" {
			return usagef("--%s has no effect here: %s", name, why)
		}
	}
	return nil
}
