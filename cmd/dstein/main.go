package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/dstein/dstein/internal/safeio"
)

// signalGrace is how long a command may take to stop after Ctrl-C or
// SIGTERM before the process exits on its own (every phase polls its
// context and normally stops within milliseconds; this bounds the rest).
// DSTEIN_SIGNAL_GRACE (a Go duration; "off" for none) changes it, for the
// measurements of scripts/signal-latency.sh.
const signalGrace = 800 * time.Millisecond

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	// SIGHUP (a closed terminal, a dropped ssh session) stops the work as
	// Ctrl-C does; Go's default would end the process at once and leave
	// the outputs' temporary files. Under nohup, which ignores it, it stays
	// ignored: Notify would otherwise turn it back on. (SIGINT is caught
	// even where a script's background job ignores it, as before: kill
	// -INT stops such a run.)
	if !signal.Ignored(syscall.SIGHUP) {
		signal.Notify(sigs, syscall.SIGHUP)
	}
	go watchdog(sigs, cancel, finishedStays(os.Args[1:]))
	// A reader of standard output that goes away (dstein … | head -1)
	// would end the process by SIGPIPE in the middle of its work, leaving
	// temporary files. With SIGPIPE caught (never delivered to the channel's
	// reader: there is none) the write fails with EPIPE instead, and the
	// command handles it as any failed write: its regular outputs are
	// committed or not written, its temporary files removed, exit 1.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	setRuntimeLimit = true
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	os.Exit(code)
}

// watchdog cancels the command's context at the first signal, and ends the
// process with exit code 130 at a second signal or when the command has
// not returned within the grace period. It waits for renames under way to
// finish (safeio.Freeze), so that no commit of several files stops half
// done; what the command had not committed is not written, and its
// temporary files, locks and empty new directories are removed.
func watchdog(sigs <-chan os.Signal, cancel func(), stays string) {
	<-sigs
	cancel()
	grace := signalGrace
	limit := (<-chan time.Time)(nil)
	if v := os.Getenv("DSTEIN_SIGNAL_GRACE"); v == "off" {
		grace = 0
	} else if d, err := time.ParseDuration(v); err == nil && d > 0 {
		grace = d
	}
	if grace > 0 {
		limit = time.After(grace)
	}
	select {
	case <-sigs:
	case <-limit:
	}
	safeio.Freeze()
	madeDirs.Lock()
	safeio.RemoveEmpty(madeDirs.list)
	fmt.Fprintln(os.Stderr, "dstein: interrupted; the work under way was stopped and not written"+stays)
	os.Exit(exitInterrupted)
}

// finishedStays is what the watchdog's message adds for a command that
// keeps finished work across an interruption (args without the program's
// name); "" for the others, which write nothing.
func finishedStays(args []string) string {
	var words []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			words = append(words, a)
		}
	}
	switch {
	case len(words) > 0 && (words[0] == "experiment" || words[0] == "reproduce"):
		return " (the journal of the trials finished before stays; the same command continues from it)"
	case len(words) > 1 && words[0] == "bnn" && words[1] == "train":
		return " (the checkpoint of the epochs finished before stays; bnn train --resume continues from it)"
	}
	return ""
}
