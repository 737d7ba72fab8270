package journal

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/dstein/dstein/report"
)

// Shard is one shard's journal, as ReadShard reads it from the shard's
// output directory.
type Shard struct {
	Dir      string
	Settings Settings
	j        *Journal
}

// ReadShard reads the journal (plain or packed) and settings of
// experiment name in one shard's directory.
func ReadShard(name, dir string) (Shard, error) {
	path := filepath.Join(dir, name+".trials.csv")
	side := filepath.Join(dir, name+".trials.json")
	for _, p := range []string{path, side} {
		exists, err := NoLink(p)
		if err != nil {
			return Shard{}, err
		}
		if !exists && p == path {
			// or packed (NAME.trials.csv.gz)
			if exists, err = NoLink(p + PackedSuffix); err != nil {
				return Shard{}, err
			}
		}
		if !exists {
			return Shard{}, fmt.Errorf("%s: no %s there; is it a shard's --out-dir of experiment %s?", dir, filepath.Base(p), name)
		}
	}
	s, err := readSettingsFile(side, name, "")
	if err != nil {
		return Shard{}, err
	}
	data, err := ReadFile(path)
	if err != nil {
		return Shard{}, err
	}
	j := &Journal{path: path, done: map[Key]map[string]float64{}, checksums: s.Format >= 3}
	if _, _, err := j.read(data); err != nil {
		return Shard{}, fmt.Errorf("%s %w", path, err)
	}
	return Shard{Dir: dir, Settings: s, j: j}, nil
}

// Joined is the union of the shards' journals: the settings of the
// merged journal and its trials in trial order.
type Joined struct {
	Settings Settings
	Order    []Key
	Done     map[Key]map[string]float64
}

// Join checks that the shards were made with the same settings that
// change results (an option a shard's settings lack takes its value in
// defaults; selectOnly as in Spec), the same number of trials, the same
// input files and the same settings of every method, that no trial is in
// two shards and none is missing, and joins them: the trials in trial
// order (each trial's rows in the order its shard recorded them, the
// order of an unsharded run, so that means over trials add in the same
// order and round alike), the settings recording the shards' directories
// and version.
func Join(name string, shards []Shard, defaults map[string]float64, selectOnly map[string]bool, version string) (Joined, error) {
	if len(shards) == 0 {
		return Joined{}, fmt.Errorf("no shards to join")
	}
	for _, s := range shards {
		for k, v := range defaults {
			if _, ok := s.Settings.Options[k]; !ok {
				s.Settings.Options[k] = v
			}
		}
	}
	first := shards[0].Settings
	want := ResultSettings(first, selectOnly)
	trials := first.Trials
	methods := map[string][]byte{}
	for _, s := range shards {
		if got := ResultSettings(s.Settings, selectOnly); got != want {
			return Joined{}, fmt.Errorf("the shards were made with different settings: %s has %s, %s has %s", shards[0].Dir, want, s.Dir, got)
		}
		if s.Settings.Trials != trials {
			return Joined{}, fmt.Errorf("the shards ran different numbers of trials: %s %d, %s %d (run every shard with the same --trials)", shards[0].Dir, trials, s.Dir, s.Settings.Trials)
		}
		if err := SameInputs(first.Inputs, s.Settings.Inputs); err != nil {
			return Joined{}, fmt.Errorf("%s: %w", s.Dir, err)
		}
		for m, raw := range s.Settings.Methods {
			now, err := CompactJSON(raw)
			if err != nil {
				return Joined{}, fmt.Errorf("%s: the settings of method %s: %w", s.Dir, m, err)
			}
			if had, ok := methods[m]; ok && !SameSettings(had, now) {
				return Joined{}, fmt.Errorf("method %s was run with other settings in %s than in another shard (%s; %s)", m, s.Dir, had, now)
			}
			methods[m] = now
		}
	}
	owner := map[Key]string{}
	type unit struct {
		k    Key
		vals map[string]float64
	}
	var units []unit
	for _, s := range shards {
		for _, k := range s.j.order {
			if d, dup := owner[k]; dup {
				return Joined{}, fmt.Errorf("trial %d of %s at %s is in two shards, %s and %s; each trial belongs to one shard", k.Trial+1, k.Method, report.FormatValue(k.X), d, s.Dir)
			}
			owner[k] = s.Dir
			units = append(units, unit{k, s.j.done[k]})
		}
	}
	sort.SliceStable(units, func(a, b int) bool { return units[a].k.Trial < units[b].k.Trial })
	has := map[int]bool{}
	for _, u := range units {
		has[u.k.Trial] = true
	}
	var missing []string
	for t := range trials {
		if !has[t] {
			missing = append(missing, strconv.Itoa(t))
		}
	}
	if len(missing) > 0 {
		return Joined{}, fmt.Errorf("incomplete set of shards: no shard holds trial %s of trials 0 to %d (as the journals' trial column counts them: trial t is in shard t mod N + 1 of N; rerun or resubmit those shards, which resume their journals)", strings.Join(missing, ", "), trials-1)
	}
	if version == "" {
		version = "devel"
	}
	out := Joined{Settings: Settings{Format: FormatVersion, Experiment: name, Seed: first.Seed, Mode: first.Mode, Options: first.Options,
		Version: version, Inputs: first.Inputs, Trials: trials, Selected: first.Selected, Methods: map[string]json.RawMessage{}},
		Done: make(map[Key]map[string]float64, len(units))}
	for m, raw := range methods {
		out.Settings.Methods[m] = raw
	}
	for _, s := range shards {
		out.Settings.MergedFrom = append(out.Settings.MergedFrom, s.Dir)
	}
	for _, u := range units {
		out.Order = append(out.Order, u.k)
		out.Done[u.k] = u.vals
	}
	return out, nil
}

// RefuseForeign refuses to replace a journal of experiment name in dir
// that a merge did not write (it holds trials that were computed there),
// and settings without a journal that are not the experiment's.
func RefuseForeign(name, dir string) error {
	side := filepath.Join(dir, name+".trials.json")
	exists, err := NoLink(filepath.Join(dir, name+".trials.csv"))
	if err != nil {
		return err
	}
	sideExists, err := NoLink(side)
	if err != nil {
		return err
	}
	if !sideExists {
		if exists {
			return fmt.Errorf("%s holds a journal without its settings %s (not one that dstein merge wrote); merge into another --out-dir", filepath.Join(dir, name+".trials.csv"), side)
		}
		return nil
	}
	s, err := ReadSettings(side, name)
	if err != nil {
		return fmt.Errorf("%w; merge into another --out-dir", err)
	}
	if exists && len(s.MergedFrom) == 0 {
		return fmt.Errorf("%s holds a journal of its own (not one that dstein merge wrote); merge into another --out-dir", filepath.Join(dir, name+".trials.csv"))
	}
	return nil
}
