package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/internal/strictjson"
	"github.com/dstein/dstein/report"
)

// Settings is the sidecar NAME.trials.json.
type Settings struct {
	Format     int                `json:"format"`
	Experiment string             `json:"experiment"`
	Seed       uint64             `json:"seed"`
	Mode       string             `json:"mode"`
	Options    map[string]float64 `json:"options"`
	// Version is the dstein build that started the journal (informative).
	Version string `json:"dstein_version,omitempty"`
	// Inputs are the SHA-256 digests of input files by name (the suite's
	// UAI networks).
	Inputs map[string]string `json:"inputs,omitempty"`
	// Methods are the full settings of each method whose trials the
	// journal holds (the experiment runner's describe): its preset, its pipeline with every
	// default resolved, its chains. A method added later is added here; a
	// method whose settings changed is refused.
	Methods map[string]json.RawMessage `json:"methods,omitempty"`
	// Trials is the number of trials of the last run (informative; a
	// resume may ask for more or fewer).
	Trials int `json:"trials,omitempty"`
	// Shard is "K/N" for a journal of shard K of N (Config.Shard): it
	// holds only that shard's trials, and resumes only as that shard.
	Shard string `json:"shard,omitempty"`
	// Selected are the methods a run selected (the suite's --methods;
	// informative: a resume may select others).
	Selected []string `json:"selected_methods,omitempty"`
	// MergedFrom lists the shard directories that dstein merge joined
	// into this journal.
	MergedFrom []string `json:"merged_from,omitempty"`
}

// ResultSettings returns the settings of s that change results: all but
// the options in selectOnly.
func ResultSettings(s Settings, selectOnly map[string]bool) string {
	var parts []string
	parts = append(parts, fmt.Sprintf("experiment=%s", s.Experiment), fmt.Sprintf("seed=%d", s.Seed), "mode="+s.Mode)
	keys := make([]string, 0, len(s.Options))
	for k := range s.Options {
		if !selectOnly[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+strconv.FormatFloat(s.Options[k], 'g', -1, 64))
	}
	return strings.Join(parts, " ")
}

// SameInputs refuses input files that the journal recorded with other
// contents. Inputs may be added or left out between runs (each names its
// own targets, so their trials do not mix), but a file whose digest
// changed would give the journal's trials of it a different meaning.
func SameInputs(have, want map[string]string) error {
	names := make([]string, 0, len(want))
	for k := range want {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if h, ok := have[k]; ok && h != want[k] {
			return fmt.Errorf("was written with other settings: input %s has changed since (SHA-256 %.12s…, now %.12s…)", k, h, want[k])
		}
	}
	return nil
}

// ReadSettings reads a journal's settings file and checks that it is
// experiment name's.
func ReadSettings(side, name string) (Settings, error) {
	return readSettingsFile(side, name, " (--restart starts over)")
}

// readSettingsFile reads a settings file and checks that it is experiment
// name's; hint follows a syntax error.
func readSettingsFile(side, name, hint string) (Settings, error) {
	var have Settings
	raw, err := safeio.ReadFile(side, "journal settings", 1<<20)
	if err != nil {
		return have, err
	}
	if err := strictjson.Unmarshal(raw, &have); err != nil {
		return have, fmt.Errorf("%s: %w%s", side, err, hint)
	}
	if have.Experiment != name {
		return have, fmt.Errorf("%s holds the settings of experiment %q, not %s", side, have.Experiment, name)
	}
	if have.Options == nil {
		have.Options = map[string]float64{}
	}
	return have, nil
}

// SettingsFill writes journal settings.
func SettingsFill(s Settings) func(*bufio.Writer) error {
	if s.Options == nil {
		s.Options = map[string]float64{}
	}
	s.Format = FormatVersion
	return func(w *bufio.Writer) error { return report.WriteJSON(w, s) }
}

// ShardWords names a journal's shard for messages.
func ShardWords(s string) string {
	if s == "" {
		return "every trial (no --shard)"
	}
	return "the trials of shard " + s
}

// Describe records the settings of a method (its JSON form b), and
// refuses when the journal holds trials of that method made with other
// settings. Settings recorded for a method without trials are replaced.
func (j *Journal) Describe(method string, b []byte) error {
	now, err := CompactJSON(b)
	if err != nil {
		return err
	}
	if old, ok := j.settings.Methods[method]; ok {
		had, err := CompactJSON(old)
		if err != nil {
			return fmt.Errorf("%s: the settings of method %s: %w (--restart starts over)", j.side, method, err)
		}
		if SameSettings(had, now) || SameSettings(renamedPresets(had, now), now) {
			return nil
		}
		if j.HasMethod(method) {
			return fmt.Errorf("%s holds trials of %s made with other settings (recorded in %s: %s; now %s); use another --out-dir, or --restart to start over", j.path, method, j.side, had, now)
		}
	}
	if j.settings.Methods == nil {
		j.settings.Methods = map[string]json.RawMessage{}
	}
	j.settings.Methods[method] = json.RawMessage(now)
	if j.f == nil {
		j.sideDirty = true // written with the first trial
		return nil
	}
	return WriteSettings(j.side, j.settings)
}

// renamedPresets returns a recorded method's settings with the presets
// that were renamed under their present names: journals written before
// round three's switch of the default recorded "preset":"default" and a
// pipeline named "default" for the preset now called "tempering" (the
// same stages and chains, which SameSettings still compares; it does not
// compare the rewritten description), so that their trials still resume
// and merge. The Record itself is left as it was written.
func renamedPresets(had, now []byte) []byte {
	var h, n map[string]any
	if json.Unmarshal(had, &h) != nil || json.Unmarshal(now, &n) != nil || h["preset"] != "default" || n["preset"] != "tempering" {
		return had
	}
	h["preset"] = "tempering"
	hp, ok1 := h["pipeline"].(map[string]any)
	np, ok2 := n["pipeline"].(map[string]any)
	if ok1 && ok2 && hp["name"] == "default" && np["name"] == "tempering" {
		hp["name"] = "tempering"
	}
	b, err := json.Marshal(h)
	if err != nil {
		return had
	}
	return b
}

// SameSettings reports whether two recorded settings (JSON) are the same:
// equal values, where a key that only one side has counts as equal when its
// value there is empty ("", 0, false, null, [] or {}), the zero value that
// means "the default" in dstein's settings, so that a field added to a
// Record later does not invalidate the journals written before. A
// "description" (a pipeline's prose, rewritten as the docs are) is not
// compared.
func SameSettings(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return sameValue(x, y)
}

func sameValue(x, y any) bool {
	mx, okx := x.(map[string]any)
	my, oky := y.(map[string]any)
	if okx != oky {
		return false
	}
	if okx {
		for k, v := range mx {
			if k == "description" {
				continue // a pipeline's prose, rewritten with the docs; never a result
			}
			if w, ok := my[k]; ok {
				if !sameValue(v, w) {
					return false
				}
			} else if !emptyValue(v) {
				return false
			}
		}
		for k, w := range my {
			if _, ok := mx[k]; !ok && !emptyValue(w) && k != "description" {
				return false
			}
		}
		return true
	}
	ax, okx := x.([]any)
	ay, oky := y.([]any)
	if okx != oky {
		return false
	}
	if okx {
		if len(ax) != len(ay) {
			return false
		}
		for i := range ax {
			if !sameValue(ax[i], ay[i]) {
				return false
			}
		}
		return true
	}
	return x == y
}

func emptyValue(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case float64:
		return v == 0
	case bool:
		return !v
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// CompactJSON returns b without insignificant space, the form in which
// recorded settings are compared.
func CompactJSON(b []byte) ([]byte, error) {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// OtherMethods lists, sorted, the methods the journal holds trials of that
// are not in used.
func (j *Journal) OtherMethods(used map[string]bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range j.order {
		if !used[k.Method] && !seen[k.Method] {
			seen[k.Method] = true
			out = append(out, k.Method)
		}
	}
	sort.Strings(out)
	return out
}

// HasMethod reports whether the journal holds a trial of method.
func (j *Journal) HasMethod(method string) bool {
	for _, k := range j.order {
		if k.Method == method {
			return true
		}
	}
	return false
}

func WriteSettings(path string, s Settings) error {
	return safeio.Rewrite(path, SettingsFill(s))
}

// legacyHeader recognises a first-round journal ("# dstein experiment NAME
// seed=S mode=M k=v …" before the columns), checks its settings against
// want and returns the data without that line.
func legacyHeader(data []byte, want *Settings, selectOnly map[string]bool) ([]byte, bool, error) {
	if !bytes.HasPrefix(data, []byte("# dstein experiment ")) {
		return data, false, nil
	}
	line, rest, _ := bytes.Cut(data, []byte("\n"))
	fields := strings.Fields(strings.TrimSuffix(string(line), "\r"))
	have := Settings{Options: map[string]float64{}}
	if len(fields) < 4 {
		return nil, true, fmt.Errorf("line 1: a first-round header without the experiment's name")
	}
	have.Experiment = fields[3]
	for _, f := range fields[4:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		switch k {
		case "seed":
			have.Seed, _ = strconv.ParseUint(v, 10, 64)
		case "mode":
			have.Mode = v
		default:
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, true, fmt.Errorf("line 1: option %s=%q is not a number", k, v)
			}
			have.Options[k] = x
		}
	}
	// Options absent from the old header had their defaults.
	for k, v := range want.Options {
		if _, ok := have.Options[k]; !ok && v == 0 {
			have.Options[k] = 0
		}
	}
	if a, b := ResultSettings(have, selectOnly), ResultSettings(*want, selectOnly); a != b {
		return nil, true, fmt.Errorf("was written with other settings (%s; now %s); use another --out-dir, or --restart to start over", a, b)
	}
	return rest, true, nil
}
