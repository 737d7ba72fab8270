package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/internal/strictjson"
	"github.com/dstein/dstein/report"
)

// errMissing is the error of an offline run (Config.offline) that needs a
// trial the journal does not hold.
type errMissing struct{ k key }

func (e errMissing) Error() string {
	return fmt.Sprintf("trial %d of %s at %s is in no shard", e.k.trial+1, e.k.method, report.FormatValue(e.k.x))
}

// shardJournal is one shard's journal as read by Merge.
type shardJournal struct {
	dir      string
	settings journalSettings
	j        *journal
}

// Merge joins the journals that shard runs of the experiment wrote into
// the directories dirs (each run with --shard K/N and its own --out-dir)
// into one journal in cfg.Out, and then runs the experiment there from
// that journal alone, so that it writes the same tables, CSVs and figures
// as one unsharded run (the seconds columns and time-based panels aside).
// It refuses shards made with different settings that change results, a
// trial held by two shards, and an incomplete set: the trials that no
// shard holds are named. Only cfg.Out, cfg.Log, cfg.Progress, cfg.Budget,
// cfg.Version and cfg.UAIDir (the suite's networks, which the shards record by digest)
// are read from cfg; the rest comes from the shards' settings.
func (e *Experiment) Merge(ctx context.Context, cfg Config, dirs []string) (res *Result, err error) {
	if e.Unsharded {
		return nil, fmt.Errorf("experiment %s is one trial and is not sharded: run it whole", e.Name)
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("merge needs the output directories of the shards")
	}
	var paths []string
	for _, d := range dirs {
		paths = append(paths, filepath.Join(d, e.Name+".trials.csv"))
	}
	if err := checkJournalMemory(cfg.Budget, paths...); err != nil {
		return nil, err
	}
	var shards []shardJournal
	seen := map[string]string{}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		if other, dup := seen[abs]; dup {
			return nil, fmt.Errorf("%s is given twice (also as %s)", d, other)
		}
		seen[abs] = d
		if out, err := filepath.Abs(cfg.Out); err == nil && out == abs {
			return nil, fmt.Errorf("--out-dir %s is one of the shards' directories; merge into a directory of its own", cfg.Out)
		}
		sj, err := readShard(e.Name, d)
		if err != nil {
			return nil, err
		}
		shards = append(shards, sj)
	}
	first := shards[0].settings
	for k, v := range e.defaultOptions() {
		if _, ok := first.Options[k]; !ok {
			first.Options[k] = v
		}
	}
	want := resultSettings(first)
	trials := first.Trials
	methods := map[string][]byte{}
	for _, s := range shards {
		for k, v := range e.defaultOptions() {
			if _, ok := s.settings.Options[k]; !ok {
				s.settings.Options[k] = v
			}
		}
		if got := resultSettings(s.settings); got != want {
			return nil, fmt.Errorf("the shards were made with different settings: %s has %s, %s has %s", shards[0].dir, want, s.dir, got)
		}
		if s.settings.Trials != trials {
			return nil, fmt.Errorf("the shards ran different numbers of trials: %s %d, %s %d (run every shard with the same --trials)", shards[0].dir, trials, s.dir, s.settings.Trials)
		}
		if err := sameInputs(first.Inputs, s.settings.Inputs); err != nil {
			return nil, fmt.Errorf("%s: %w", s.dir, err)
		}
		for m, raw := range s.settings.Methods {
			now, err := compactJSON(raw)
			if err != nil {
				return nil, fmt.Errorf("%s: the settings of method %s: %w", s.dir, m, err)
			}
			if had, ok := methods[m]; ok && !sameSettings(had, now) {
				return nil, fmt.Errorf("method %s was run with other settings in %s than in another shard (%s; %s)", m, s.dir, had, now)
			}
			methods[m] = now
		}
	}
	// Join the trials in trial order (each trial's rows in the order its
	// shard recorded them), the order of an unsharded run, so that the
	// means over trials add in the same order and round alike.
	owner := map[key]string{}
	var units []unit
	for _, s := range shards {
		for _, k := range s.j.order {
			if d, dup := owner[k]; dup {
				return nil, fmt.Errorf("trial %d of %s at %s is in two shards, %s and %s; each trial belongs to one shard", k.trial+1, k.method, report.FormatValue(k.x), d, s.dir)
			}
			owner[k] = s.dir
			units = append(units, unit{k, s.j.done[k]})
		}
	}
	sort.SliceStable(units, func(a, b int) bool { return units[a].k.trial < units[b].k.trial })
	has := map[int]bool{}
	for _, u := range units {
		has[u.k.trial] = true
	}
	var missing []string
	for t := range trials {
		if !has[t] {
			missing = append(missing, strconv.Itoa(t+1))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("incomplete set of shards: no shard holds trial %s of %d (trial t is shard t mod N + 1's, counting trials from 0; rerun or resubmit those shards, which resume their journals)", strings.Join(missing, ", "), trials)
	}
	merged := journalSettings{Format: journalFormat, Experiment: e.Name, Seed: first.Seed, Mode: first.Mode, Options: first.Options,
		Version: cfg.version(), Inputs: first.Inputs, Trials: trials, Selected: first.Selected, Methods: map[string]json.RawMessage{}}
	for m, raw := range methods {
		merged.Methods[m] = raw
	}
	for _, s := range shards {
		merged.MergedFrom = append(merged.MergedFrom, s.dir)
	}
	mode, err := parseMode(first.Mode)
	if err != nil {
		return nil, err
	}
	settings, err := e.decode(first.Options)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", shards[0].dir, err)
	}
	run := Config{Seed: first.Seed, Mode: mode, Trials: trials, Settings: settings, Methods: first.Selected,
		UAIDir: cfg.UAIDir, Log: cfg.Log, Progress: cfg.Progress, Budget: cfg.Budget}
	if cfg.UAIDir == "" && len(first.Inputs) > 0 {
		return nil, fmt.Errorf("the shards scored UAI networks (%d files): give their directory with --uai", len(first.Inputs))
	}
	created, err := safeio.MakeDir(cfg.Out)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			safeio.RemoveEmpty(created)
		}
	}()
	if err := refuseForeignJournal(e.Name, cfg.Out); err != nil {
		return nil, err
	}
	for _, f := range e.OutputsFor(cfg.Out, !cfg.NoSVG) {
		if err := safeio.Owned(f); err != nil {
			return nil, err
		}
	}
	// The output directory's lock, so that no run of the experiment
	// writes there meanwhile.
	lock, err := lockJournal(cfg.Out, e.Name)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	// Run the experiment over the joined journal, kept in a scratch
	// directory: it computes nothing (a missing trial is named) and writes
	// its tables and figures into cfg.Out only at the end, with the joined
	// journal, in one batch. An interrupted or refused merge writes
	// nothing.
	scratch, err := safeio.TempDir("dstein-merge-")
	if err != nil {
		return nil, err
	}
	defer safeio.RemoveTempDir(scratch)
	if err := writeSettings(filepath.Join(scratch, e.Name+".trials.json"), merged); err != nil {
		return nil, err
	}
	if err := writeJournal(filepath.Join(scratch, e.Name+".trials.csv"), unitKeys(units), unitVals(units)); err != nil {
		return nil, err
	}
	run.Out, run.journalDir, run.offline = cfg.Out, scratch, true
	// The joined journal goes into cfg.Out with the tables and figures,
	// in one batch.
	run.extra = []extraFile{
		{filepath.Join(cfg.Out, e.Name+".trials.json"), settingsFill(merged)},
		{filepath.Join(cfg.Out, e.Name+".trials.csv"), journalFill(unitKeys(units), unitVals(units))},
	}
	res, err = e.Run(ctx, run)
	if err != nil {
		var m errMissing
		if errors.As(err, &m) {
			return nil, fmt.Errorf("incomplete set of shards: %w (trial t is shard t mod N + 1's, counting trials from 0; rerun or resubmit that shard, which resumes its journal)", m)
		}
		return nil, err
	}
	return res, nil
}

// unit is one trial of one method at one setting, with its metrics.
type unit struct {
	k    key
	vals map[string]float64
}

func unitKeys(us []unit) []key {
	out := make([]key, len(us))
	for i, u := range us {
		out[i] = u.k
	}
	return out
}

func unitVals(us []unit) map[key]map[string]float64 {
	out := make(map[key]map[string]float64, len(us))
	for _, u := range us {
		out[u.k] = u.vals
	}
	return out
}

// readShard reads the journal and settings of one shard's directory.
func readShard(name, dir string) (shardJournal, error) {
	path := filepath.Join(dir, name+".trials.csv")
	side := filepath.Join(dir, name+".trials.json")
	for _, p := range []string{path, side} {
		exists, err := noLink(p)
		if err != nil {
			return shardJournal{}, err
		}
		if !exists && p == path {
			// or packed (NAME.trials.csv.gz)
			if exists, err = noLink(p + packedSuffix); err != nil {
				return shardJournal{}, err
			}
		}
		if !exists {
			return shardJournal{}, fmt.Errorf("%s: no %s there; is it a shard's --out-dir of experiment %s?", dir, filepath.Base(p), name)
		}
	}
	raw, err := safeio.ReadFile(side, "journal settings", 1<<20)
	if err != nil {
		return shardJournal{}, err
	}
	var s journalSettings
	if err := strictjson.Unmarshal(raw, &s); err != nil {
		return shardJournal{}, fmt.Errorf("%s: %w", side, err)
	}
	if s.Experiment != name {
		return shardJournal{}, fmt.Errorf("%s holds experiment %s, not %s", dir, s.Experiment, name)
	}
	if s.Options == nil {
		s.Options = map[string]float64{}
	}
	data, err := readJournalFile(path)
	if err != nil {
		return shardJournal{}, err
	}
	j := &journal{path: path, done: map[key]map[string]float64{}, checksums: s.Format >= 3}
	if _, _, err := j.read(data); err != nil {
		return shardJournal{}, fmt.Errorf("%s %w", path, err)
	}
	return shardJournal{dir: dir, settings: s, j: j}, nil
}

// refuseForeignJournal refuses to replace a journal in dir that a merge
// did not write (it holds trials that were computed there), and settings
// without a journal that are not the experiment's.
func refuseForeignJournal(name, dir string) error {
	side := filepath.Join(dir, name+".trials.json")
	exists, err := noLink(filepath.Join(dir, name+".trials.csv"))
	if err != nil {
		return err
	}
	sideExists, err := noLink(side)
	if err != nil {
		return err
	}
	if !sideExists {
		if exists {
			return fmt.Errorf("%s holds a journal without its settings %s (not one that dstein merge wrote); merge into another --out-dir", filepath.Join(dir, name+".trials.csv"), side)
		}
		return nil
	}
	s, err := readSettings(side, name)
	if err != nil {
		return fmt.Errorf("%w; merge into another --out-dir", err)
	}
	if exists && len(s.MergedFrom) == 0 {
		return fmt.Errorf("%s holds a journal of its own (not one that dstein merge wrote); merge into another --out-dir", filepath.Join(dir, name+".trials.csv"))
	}
	return nil
}

func parseMode(s string) (Mode, error) {
	for _, m := range []Mode{Full, Quick, Tiny} {
		if m.String() == s {
			return m, nil
		}
	}
	return Full, fmt.Errorf("unknown mode %q in the shards' settings", s)
}
