package experiment

import (
	"fmt"
	"time"
)

// trialDone closes trial t (0-based): a trial none of whose units was
// computed counts as loaded from the journal, and the loaded trials are
// reported once, before the first computed trial ends or at the end of
// the run (flushLoaded); a computed trial is reported with its time and
// the estimated time left, the mean time of the trials computed so far
// times the trials still to come.
func (r *runner) trialDone(t int) {
	if !r.curComputed || r.curTrial != t {
		r.loaded++
		return
	}
	r.curComputed = false
	took := time.Since(r.curStart)
	r.computed++
	r.spent += took
	r.flushLoaded()
	var left time.Duration
	if rest := r.trials - 1 - t; rest > 0 {
		left = r.spent / time.Duration(r.computed) * time.Duration(rest)
	}
	if r.cfg.Progress != nil {
		r.cfg.Progress.TrialDone(t, r.trials, took, left)
		return
	}
	line := fmt.Sprintf("%s: trial %d/%d done in %s", r.name, t+1, r.trials, roundDuration(took))
	if left > 0 {
		line += fmt.Sprintf(" (about %s left)", roundDuration(left))
	}
	r.logf("%s", line)
}

// flushLoaded reports the trials loaded from the journal, once.
func (r *runner) flushLoaded() {
	if r.reported {
		return
	}
	r.reported = true
	if r.loaded == 0 {
		return
	}
	if r.cfg.Progress != nil {
		r.cfg.Progress.Loaded(r.loaded)
		return
	}
	word := "trials"
	if r.loaded == 1 {
		word = "trial"
	}
	from := r.j.ReadPath()
	if r.cfg.journalDir != "" {
		from = "the shards' journals"
	}
	r.logf("%s: %d %s loaded from %s", r.name, r.loaded, word, from)
}

// roundDuration rounds d for a progress line: whole minutes from ten
// minutes, whole seconds from ten seconds, tenths of a second from one
// second, milliseconds below.
func roundDuration(d time.Duration) time.Duration {
	if d >= 10*time.Minute {
		return d.Round(time.Minute)
	}
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
