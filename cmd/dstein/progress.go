package main

import "github.com/schollz/progressbar/v3"

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
