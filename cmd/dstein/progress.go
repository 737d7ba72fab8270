package main

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/dstein/dstein/report"
)

// bar shows a progress bar on a terminal and nothing elsewhere, so that logs
// stay clean.
type bar struct{ pb *progressbar.ProgressBar }

func newBar(e *env, total int, what string) *bar {
	if !e.terminal || total < 1 {
		return nil
	}
	return &bar{pb: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(e.stderr),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
	)}
}

// Update implements sampler.Progress.
func (b *bar) Update(done, total int) {
	if b != nil {
		b.pb.Set(done)
	}
}

func (b *bar) finish() {
	if b != nil {
		b.pb.Finish()
	}
}

// expProgress shows an experiment's progress on a terminal: a bar over its
// trials whose description names the trial, the method and the setting
// being computed and the time left (the mean time of the trials computed
// so far times those to come; trials loaded from the journal take none).
// Lines that the experiment logs meanwhile are written above the bar.
type expProgress struct {
	w    io.Writer
	name string
	pb   *progressbar.ProgressBar
	left time.Duration
}

// newExpProgress returns nil when stderr is not a terminal: the
// experiment then writes plain progress lines.
func newExpProgress(e *env, name string) *expProgress {
	if !e.terminal {
		return nil
	}
	return &expProgress{w: e.stderr, name: name}
}

func (p *expProgress) bar(trials int) *progressbar.ProgressBar {
	if p.pb == nil {
		p.pb = progressbar.NewOptions(trials,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(p.name),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(20),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	return p.pb
}

// Loaded implements experiment.Progress.
func (p *expProgress) Loaded(trials int) {
	word := "trials"
	if trials == 1 {
		word = "trial"
	}
	p.Write([]byte(fmt.Sprintf("%s: %d %s loaded from the journal\n", p.name, trials, word)))
}

// Unit implements experiment.Progress.
func (p *expProgress) Unit(trial, trials int, method, setting string, x float64) {
	b := p.bar(trials)
	b.Set(trial)
	d := fmt.Sprintf("%s trial %d/%d · %s at %s = %s", p.name, trial+1, trials, method, setting, report.FormatValue(x))
	if p.left > 0 {
		d += fmt.Sprintf(" · about %s left", roundLeft(p.left))
	}
	b.Describe(d)
}

// TrialDone implements experiment.Progress.
func (p *expProgress) TrialDone(trial, trials int, took, left time.Duration) {
	p.left = left
	p.bar(trials).Set(trial + 1)
}

// Write writes a logged line above the bar.
func (p *expProgress) Write(b []byte) (int, error) {
	if p.pb != nil {
		p.pb.Clear()
	}
	n, err := p.w.Write(b)
	if p.pb != nil {
		p.pb.RenderBlank()
	}
	return n, err
}

// Finish ends the bar (experiment.ResultProgress).
func (p *expProgress) Finish() {
	if p != nil && p.pb != nil {
		p.pb.Finish()
	}
}

// roundLeft rounds a time left for display.
func roundLeft(d time.Duration) time.Duration {
	if d >= 10*time.Minute {
		return d.Round(time.Minute)
	}
	return d.Round(time.Second)
}
