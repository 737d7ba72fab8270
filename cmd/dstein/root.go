package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// Exit codes.
const (
	exitOK          = 0
	exitError       = 1   // the run failed: bad input, I/O, numerical failure
	exitUsage       = 2   // bad command line
	exitInterrupted = 130 // canceled by a signal
)

// usageError marks errors in the command line itself.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// interrupted is returned when a signal stops a run.
type interrupted struct{ msg string }

func (i interrupted) Error() string { return i.msg }

// env is what a command needs from the outside world, injected so that
// commands can be tested without a process.
type env struct {
	ctx      context.Context
	stdout   io.Writer
	stderr   io.Writer
	terminal bool // stderr is a terminal: show progress bars
}

// run executes the command line and returns the exit code. It never panics
// on bad input and prints errors as one line on stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	e := &env{ctx: ctx, stdout: stdout, stderr: stderr}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		e.terminal = true
	}
	root := newRoot(e)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	var ue usageError
	var in interrupted
	switch {
	case errors.As(err, &in):
		fmt.Fprintf(stderr, "dstein: %s\n", msg)
		return exitInterrupted
	case errors.As(err, &ue), isCobraUsage(err):
		fmt.Fprintf(stderr, "dstein: %s (see dstein --help)\n", msg)
		return exitUsage
	}
	fmt.Fprintf(stderr, "dstein: %s\n", msg)
	return exitError
}

// isCobraUsage recognises cobra's own command-line errors.
func isCobraUsage(err error) bool {
	m := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "invalid argument", "flag needs an argument", "required flag", "accepts ", "bad flag syntax"} {
		if strings.Contains(m, p) {
			return true
		}
	}
	return false
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "dstein",
		Short: "Stein's method for discrete distributions: GF-SVGD sampling and goodness-of-fit tests",
		Long: `dstein samples discrete models (categorical, Ising, RBM) with gradient-free
Stein variational gradient descent on their continuous parameterization, and
tests whether samples come from a model (dstein gof).

Start with "dstein demo", then "dstein sample --model examples/ising-grid.json".`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(newSampleCmd(e), newGofCmd(e), newExactCmd(e), newCompareMARCmd(e), newDemoCmd(e), newExperimentCmd(e), newBNNCmd(e))
	return root
}
