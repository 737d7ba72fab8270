package sampler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/dstein/dstein/internal/strictjson"
)

// Reading a pipeline file: the checks that apply to what a user wrote
// (an explicit "std", zeros that defaults would replace) on top of the
// strict JSON of Pipeline and Stage.

// ParsePipeline reads a pipeline file's JSON strictly. The initial draw's
// "std", when the file gives one, must be > 0: a file that leaves it out
// gets the default 1 (see Init.Resolved), but one that says 0 asks for
// something else, and is refused rather than read as 1.
func ParsePipeline(data []byte) (Pipeline, error) {
	var p Pipeline
	if err := strictjson.Unmarshal(data, &p); err != nil {
		return p, err
	}
	if err := checkFileStd(data); err != nil {
		return p, err
	}
	if err := checkFileZeros(data, p); err != nil {
		return p, err
	}
	return p, p.Validate()
}

// checkFileZeros refuses a setting written as 0 in a pipeline file where
// the method's defaults would replace that 0 (Go's zero value means "the
// default"; a file's 0 is read as what it says). Pipelines that dstein
// writes itself (journals, summaries) are not checked: they record the
// settings as given, zeros included.
func checkFileZeros(data []byte, p Pipeline) error {
	data, err := strictjson.Prepare(data)
	if err != nil {
		return err
	}
	var raw struct {
		Stages []struct {
			Settings json.RawMessage `json:"settings"`
		} `json:"stages"`
	}
	if json.Unmarshal(data, &raw) != nil || len(raw.Stages) != len(p.Stages) {
		return nil
	}
	for k, st := range raw.Stages {
		if len(st.Settings) == 0 || p.Stages[k].Settings == nil {
			continue
		}
		if key, def := defaultedZero(st.Settings, p.Stages[k].Settings); key != "" {
			return fmt.Errorf("stage %d (%s): %q is 0, which would silently mean the default (%s); leave the key out for the default, or give another value", k+1, p.Stages[k].Method, key, def)
		}
	}
	return nil
}

// checkFileStd refuses an explicit "std" ≤ 0 in the "init" of a pipeline
// file that strictjson has read into a Pipeline (so its keys are spelled
// exactly and appear once), naming the value's line and column. A "std"
// of null is taken as left out, as encoding/json does.
func checkFileStd(data []byte) error {
	data, err := strictjson.Prepare(data)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if !enterKey(dec, "init") || !enterKey(dec, "std") {
		return nil
	}
	tok, err := dec.Token()
	n, ok := tok.(json.Number)
	if err != nil || !ok {
		return nil
	}
	if std, err := n.Float64(); err == nil && std > 0 {
		return nil
	}
	at := strictjson.Position(data, dec.InputOffset()-int64(len(n)))
	return fmt.Errorf("%s: the initial draw's \"std\" is %s; want a spread > 0 (leave \"std\" out for the default 1)", at, n)
}

// enterKey reads an object's opening brace and its members up to key,
// leaving dec before key's value; false when the next value is not an
// object or has no such key (or the text ends early).
func enterKey(dec *json.Decoder, key string) bool {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	var skip json.RawMessage
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false
		}
		if k == key {
			return true
		}
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// defaultedZero returns the first key (dotted for nested settings, in
// sorted order) that the settings as written (raw) set to the number 0
// while the resolved settings hold another number there, and that number:
// a 0 that the method's defaults would replace. In Go a zero field means
// the default; in a file a 0 is read as what it says, so it is refused
// (as the command line refuses --temperature 0).
func defaultedZero(raw json.RawMessage, set Settings) (key, def string) {
	var given, used any
	if decodeNumbers(raw, &given) != nil {
		return "", ""
	}
	b, err := json.Marshal(set.Resolved())
	if err != nil || decodeNumbers(b, &used) != nil {
		return "", ""
	}
	return zeroReplaced(given, used, "")
}

func decodeNumbers(b []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

func zeroReplaced(given, used any, prefix string) (key, def string) {
	g, ok := given.(map[string]any)
	u, ok2 := used.(map[string]any)
	if !ok || !ok2 {
		return "", ""
	}
	keys := make([]string, 0, len(g))
	for k := range g {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch v := g[k].(type) {
		case map[string]any:
			if key, def := zeroReplaced(v, u[k], prefix+k+"."); key != "" {
				return key, def
			}
		case json.Number:
			x, err := v.Float64()
			d, ok := u[k].(json.Number)
			if err == nil && x == 0 && ok {
				if y, err := d.Float64(); err == nil && y != 0 {
					return prefix + k, d.String()
				}
			}
		}
	}
	return "", ""
}
