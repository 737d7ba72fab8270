package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model/modelfile"
)

// memoryFlag is --max-memory, shared by the commands that allocate in
// proportion to their input.
type memoryFlag struct{ raw string }

func (m *memoryFlag) register(fs *pflag.FlagSet) {
	fs.StringVar(&m.raw, "max-memory", "", fmt.Sprintf("refuse work estimated to need more memory than this: a size (512MB, 4GB) or a share of the machine's or container's memory (50%%) (default %s, %.0f%% of %s)", memlimit.Format(memlimit.Default()), 100*memlimit.Fraction, memlimit.Format(memlimit.Available())))
}

// budget returns the memory budget. In the dstein process (not in tests
// that call run, whose process holds the tests' memory), what the process
// holds already beyond memlimit.Base is measured (the budget's Startup,
// which every check counts), and the limit less the memory that is not
// Go's becomes the Go runtime's soft memory limit, unless GOMEMLIMIT is
// set: the
// collector then works to keep the heap under it, so that the process's
// peak stays near what the estimates count rather than twice the live
// heap.
func (m *memoryFlag) budget() (memlimit.Budget, error) {
	b := memlimit.Budget{Limit: memlimit.Default()}
	if m.raw != "" {
		v, err := memlimit.Parse(m.raw)
		if err != nil {
			return memlimit.Budget{}, usagef("--max-memory: %v", err)
		}
		b.Limit = v
	}
	if setRuntimeLimit {
		b.Startup = memlimit.StartupNow()
	}
	if setRuntimeLimit && os.Getenv("GOMEMLIMIT") == "" {
		// The runtime's limit counts the Go memory only: the binary's
		// resident pages come on top, within memlimit.Base (the
		// resident memory of a process that has allocated nothing),
		// which every estimate adds to the work's own memory, and the
		// Startup measured beyond it, which every check adds.
		debug.SetMemoryLimit(max(b.Limit-memlimit.Base-b.Startup, b.Limit/2))
	}
	return b, nil
}

// madeDirs are the output directories this process made, for main's
// watchdog, which removes those still empty when it ends the process.
var madeDirs struct {
	sync.Mutex
	list []string
}

// setRuntimeLimit is set by main: the memory budget of a command is then
// the runtime's soft limit too (see memoryFlag.budget).
var setRuntimeLimit bool

// openModel reads a model file (JSON, UAI or BIF, with evidence) within
// o's limits, stopping at Ctrl-C, and prints what is odd about the file
// (modelfile.Loaded.Warnings) to standard error, before any work.
func openModel(e *env, path, evidence string, o modelfile.Options) (*modelfile.Loaded, error) {
	lm, err := cancelable(e, func() (*modelfile.Loaded, error) { return modelfile.OpenOptions(e.ctx, path, evidence, o) })
	if err != nil {
		return nil, err
	}
	for _, w := range lm.Warnings {
		fmt.Fprintf(e.stderr, "dstein: warning: %s\n", w)
	}
	return lm, nil
}

// cancelable runs f and returns its result, or an interrupted error as soon
// as the command's context is canceled (f then finishes in the background
// while the process exits).
func cancelable[T any](e *env, f func() (T, error)) (T, error) {
	type res struct {
		v   T
		err error
	}
	done := make(chan res, 1)
	go func() {
		v, err := f()
		done <- res{v, err}
	}()
	select {
	case r := <-done:
		if e.ctx.Err() != nil {
			var zero T
			return zero, interrupted{"interrupted; nothing written"}
		}
		return r.v, r.err
	case <-e.ctx.Done():
		var zero T
		return zero, interrupted{"interrupted; nothing written"}
	}
}

// newPlan starts the output plan of a command: its inputs, so that no
// output may overwrite them.
func newPlan(e *env, inputs ...string) *safeio.Plan {
	p := safeio.NewPlan()
	p.Stdout = e.stdout
	for _, in := range inputs {
		p.Input(in)
	}
	return p
}

// outputs are a command's checked output files and where its messages go.
type outputs struct {
	plan  *safeio.Plan
	files map[string]*safeio.File
	// say receives the command's messages: standard error when an output
	// is standard output, else standard output.
	say io.Writer
}

// startOutputs declares the outputs (flag name, path; empty paths are not
// asked for) of a command with the given inputs and checks them all before
// any work. The caller defers o.plan.Abort() and ends with o.commit.
func startOutputs(e *env, inputs []string, flagPaths ...string) (*outputs, error) {
	o := &outputs{plan: newPlan(e, inputs...), files: map[string]*safeio.File{}, say: e.stdout}
	for k := 0; k+1 < len(flagPaths); k += 2 {
		o.files[flagPaths[k]] = o.plan.Output(flagPaths[k+1], flagPaths[k])
	}
	if err := o.plan.Check(); err != nil {
		return nil, err
	}
	if o.plan.UsesStdout() {
		o.say = e.stderr
	}
	return o, nil
}

// write fills the output of a flag when it was asked for.
func (o *outputs) write(flag string, fill func(w *bufio.Writer) error) error {
	if f := o.files[flag]; f != nil {
		return f.Write(fill)
	}
	return nil
}

// commit puts the outputs in place (see commit) and says what was written.
func (o *outputs) commit(e *env) error {
	return commit(e, o.plan, func(format string, a ...any) { fmt.Fprintf(o.say, format, a...) })
}

// commit puts the plan's outputs in place unless the run was interrupted,
// and says what it wrote on w.
func commit(e *env, p *safeio.Plan, say func(format string, a ...any)) error {
	if err := e.ctx.Err(); err != nil {
		p.Abort()
		return interrupted{"interrupted; nothing written"}
	}
	if err := p.CommitContext(e.ctx); err != nil {
		if e.ctx.Err() != nil {
			return interrupted{"interrupted while writing to a FIFO, a device or standard output; the outputs that are regular files, if any, were written before it"}
		}
		return err
	}
	if paths := p.Paths(); len(paths) > 0 && say != nil {
		say("wrote %s\n", strings.Join(paths, ", "))
	}
	return nil
}

// rangeErr checks that a counted flag is at least lo.
func atLeast(name string, v, lo int) error {
	if v < lo {
		return usagef("--%s must be at least %d, got %d", name, lo, v)
	}
	return nil
}

// makeOutDir creates an output directory (and its parents), or checks that
// an existing one is a directory, and that files can be created in it, so
// that a long run does not fail at its first write. The directories it
// creates are removed again, if they are still empty, when the command
// fails or is interrupted (run).
func (e *env) makeOutDir(dir string) error {
	if dir == "" {
		return usagef("--out-dir needs a directory")
	}
	info, err := os.Stat(dir)
	switch {
	case err == nil && !info.IsDir():
		return usagef("--out-dir %s exists and is not a directory", dir)
	case err != nil:
		created, err := safeio.MakeDir(dir)
		e.created = append(e.created, created...)
		madeDirs.Lock()
		madeDirs.list = append(madeDirs.list, created...)
		madeDirs.Unlock()
		if err != nil {
			return fmt.Errorf("--out-dir %s: %w", dir, err)
		}
	}
	probe, err := os.CreateTemp(dir, ".dstein-probe-*")
	if err != nil {
		return fmt.Errorf("--out-dir %s: cannot create files in it: %w", dir, errors.Unwrap(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}
