package experiment

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/dstein/dstein/experiment/journal"
	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/report"
)

// errMissing is the error of an offline run (Config.offline) that needs a
// trial the journal does not hold.
type errMissing struct{ k journal.Key }

func (e errMissing) Error() string {
	return fmt.Sprintf("trial %d of %s at %s is in no shard", e.k.Trial, e.k.Method, report.FormatValue(e.k.X))
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
	if err := journal.CheckMemory(cfg.Budget, paths...); err != nil {
		return nil, err
	}
	var shards []journal.Shard
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
		sj, err := journal.ReadShard(e.Name, d)
		if err != nil {
			return nil, err
		}
		shards = append(shards, sj)
	}
	joined, err := journal.Join(e.Name, shards, e.defaultOptions(), e.selectOnly(), cfg.Version)
	if err != nil {
		return nil, err
	}
	first := joined.Settings
	mode, err := parseMode(first.Mode)
	if err != nil {
		return nil, err
	}
	settings, err := e.decode(first.Options)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", shards[0].Dir, err)
	}
	run := Config{Seed: first.Seed, Mode: mode, Trials: first.Trials, Settings: settings, Methods: first.Selected,
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
	if err := journal.RefuseForeign(e.Name, cfg.Out); err != nil {
		return nil, err
	}
	for _, f := range e.OutputsFor(cfg.Out, !cfg.NoSVG) {
		if err := safeio.Owned(f); err != nil {
			return nil, err
		}
	}
	// The output directory's lock, so that no run of the experiment
	// writes there meanwhile.
	lock, err := journal.Lock(cfg.Out, e.Name)
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
	if err := journal.WriteSettings(filepath.Join(scratch, e.Name+".trials.json"), first); err != nil {
		return nil, err
	}
	if err := journal.Write(filepath.Join(scratch, e.Name+".trials.csv"), joined.Order, joined.Done); err != nil {
		return nil, err
	}
	run.Out, run.journalDir, run.offline = cfg.Out, scratch, true
	// The joined journal goes into cfg.Out with the tables and figures,
	// in one batch.
	run.extra = []extraFile{
		{filepath.Join(cfg.Out, e.Name+".trials.json"), journal.SettingsFill(first)},
		{filepath.Join(cfg.Out, e.Name+".trials.csv"), journal.Fill(joined.Order, joined.Done)},
	}
	res, err = e.Run(ctx, run)
	if err != nil {
		var m errMissing
		if errors.As(err, &m) {
			return nil, fmt.Errorf("incomplete set of shards: %w (trials counted from 0, as the journals' trial column does: trial t is in shard t mod N + 1 of N; rerun or resubmit that shard, which resumes its journal)", m)
		}
		return nil, err
	}
	return res, nil
}

// parseMode reads a mode's name as the shards' settings record it.
func parseMode(s string) (Mode, error) {
	for _, m := range []Mode{Full, Quick, Tiny} {
		if m.String() == s {
			return m, nil
		}
	}
	return Full, fmt.Errorf("unknown mode %q in the shards' settings", s)
}
