package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/internal/cuda"
	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/internal/suggest"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model/modelfile"
	"github.com/dstein/dstein/report"
)

// Exit codes (README, "Exit codes").
const (
	exitOK          = 0
	exitError       = 1   // the run failed: bad input file, I/O, numerical failure
	exitUsage       = 2   // bad command line
	exitResource    = 3   // refused: the work would exceed a resource limit (--max-memory, exact's limits)
	exitNoGPU       = 4   // a GPU was asked for and none is usable (no driver, no device)
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
	// created are the output directories the command made (outermost
	// first); run removes those still empty when the command fails.
	created []string
	// args is the command line after "dstein".
	args []string
}

// run executes the command line and returns the exit code. It never panics
// on bad input and prints errors as one line on stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	out := &watchedWriter{w: stdout}
	e := &env{ctx: ctx, stdout: out, stderr: stderr, args: args}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		e.terminal = true
	}
	defer func() {
		// A panic is a bug in dstein: say so in one line, not a stack trace
		// (DSTEIN_TRACEBACK=1 shows it).
		if r := recover(); r != nil {
			if os.Getenv("DSTEIN_TRACEBACK") != "" {
				panic(r)
			}
			fmt.Fprintf(stderr, "dstein: internal error: %v (please report it; DSTEIN_TRACEBACK=1 shows where)\n", r)
			code = exitError
		}
	}()
	root := newRoot(e)
	root.SetArgs(args)
	var err error
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && args[0] != "help" {
		// A mistyped command: say so before cobra reads its flags as the
		// root's.
		if c, _, ferr := root.Find(args); ferr == nil && c == root {
			err = root.Args(root, args[:1])
		}
	}
	helpOf := "dstein"
	if err == nil {
		var c *cobra.Command
		c, err = root.ExecuteC()
		if c != nil {
			helpOf = c.CommandPath()
		}
	}
	if err == nil {
		// A table, a message or a pipeline printed to a full disk or a
		// closed standard output is lost: not a success.
		err = out.failed()
	}
	if err == nil {
		return exitOK
	}
	// A refused, failed or interrupted command leaves no directory it
	// created behind, unless something was kept there (a journal).
	defer safeio.RemoveEmpty(e.created)
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, ctx.Err())) {
		err = interrupted{"interrupted; nothing written"}
	}
	msg := oneLine(err.Error())
	var ue usageError
	var fe *modelfile.FlagError
	var in interrupted
	var ex *memlimit.Exceeded
	var tl *safeio.TooLarge
	var tm *report.TooManyRows
	var ng *cuda.Unavailable
	var oom *cuda.OutOfMemory
	var big *exact.TooLarge
	switch {
	case errors.As(err, &in):
		fmt.Fprintf(stderr, "dstein: %s\n", msg)
		return exitInterrupted
	case errors.As(err, &ex), errors.As(err, &tl), errors.As(err, &tm), errors.As(err, &oom), errors.As(err, &big):
		fmt.Fprintf(stderr, "dstein: %s\n", msg)
		return exitResource
	case errors.As(err, &ue), errors.As(err, &fe):
		fmt.Fprintf(stderr, "dstein: %s (see %s --help)\n", msg, helpOf)
		return exitUsage
	case errors.As(err, &ng):
		fmt.Fprintf(stderr, "dstein: %s\n", msg)
		return exitNoGPU
	}
	fmt.Fprintf(stderr, "dstein: %s\n", msg)
	return exitError
}

// watchedWriter passes writes on to w and keeps the first error, so that a
// command whose standard output could not be written (a full disk, a
// closed descriptor) does not exit 0.
type watchedWriter struct {
	w   io.Writer
	mu  sync.Mutex
	err error
}

func (w *watchedWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		w.mu.Lock()
		if w.err == nil {
			w.err = err
		}
		w.mu.Unlock()
	}
	return n, err
}

// failed returns the first write error, or nil.
func (w *watchedWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if errors.Is(w.err, syscall.EPIPE) {
		// dstein … | head: the reader had what it wanted.
		return fmt.Errorf("standard output was closed by its reader before everything was written to it (broken pipe); the command itself finished, and any output files it was given were written")
	}
	if w.err != nil {
		return fmt.Errorf("writing to standard output: %w", w.err)
	}
	return nil
}

// oneLine makes a message one line of text: control characters (a newline
// or an escape sequence in a path, say) are written as Go escapes (\n,
// \x1b), so that a message is always one line that a terminal prints as it
// is.
func oneLine(msg string) string {
	var b strings.Builder
	for i := 0; i < len(msg); {
		r, size := utf8.DecodeRuneInString(msg[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "\\x%02x", msg[i])
		case r == '\t':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(msg[i : i+size])
		}
		i += size
	}
	return b.String()
}

// usageArgs makes the errors of every command's argument check usage
// errors, as flagError does for the flags': cobra's own messages ("accepts
// 1 arg(s)") are then classified by their type, never by their words.
func usageArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			err := check(cmd, args)
			var ue usageError
			if err != nil && !errors.As(err, &ue) {
				err = usageError{err}
			}
			return err
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// version is the module's build information: the VCS revision when built
// from a checkout, "devel" otherwise.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		return v + " " + rev + modified
	}
	return v
}

// flagError turns pflag's errors into usage errors with a "did you mean"
// hint for a mistyped flag.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		return usagef("unknown flag --%s for %s%s", name, cmd.CommandPath(), dashed(suggest.Hint(name, names)))
	}
	if m := badNumber.FindStringSubmatch(msg); m != nil {
		want := map[string]string{"ParseUint": "a whole number ≥ 0 in decimal digits", "ParseInt": "a whole number in decimal digits", "ParseFloat": "a number"}[m[3]]
		if strings.Contains(m[4], "value out of range") {
			want += " within range"
		}
		return usagef("%s %s: want %s", m[2], m[1], want)
	}
	return usageError{err}
}

// badNumber matches pflag's error for a number flag given text that is
// not one: the value, the flag, strconv's function and its complaint.
var badNumber = regexp.MustCompile(`^invalid argument "(.*)" for "(--[a-z0-9-]+)" flag: strconv\.(ParseUint|ParseInt|ParseFloat): parsing ".*": (.*)$`)

// dashed puts "--" in front of the names of a hint.
func dashed(h string) string {
	if h == "" {
		return ""
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(h, "; did you mean "), "?")
	parts := strings.Split(inner, " or ")
	for i := range parts {
		parts[i] = "--" + parts[i]
	}
	return "; did you mean " + strings.Join(parts, " or ") + "?"
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "dstein",
		Short: "Stein's method for discrete distributions: sampling, goodness-of-fit tests, binarized-network ensembles",
		Long: `dstein samples discrete models (categorical, Ising, Potts, RBM, UAI and BIF
networks) with gradient-free SVGD and with the baselines that make comparisons
honest (Gibbs, Gibbs-with-Gradients, DMALA, DLMC, discontinuous HMC, exact
sampling), tests whether samples come from a model (dstein gof), diagnoses
anyone's chains (dstein summary), and trains ensembles of binarized networks
(dstein bnn train).

Start with "dstein demo", then "dstein sample --model examples/ising-grid.json";
"dstein methods" lists the sampling methods and presets.`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("dstein {{.Version}}\n")
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(flagError)
	root.CompletionOptions.DisableDefaultCmd = true
	root.SuggestionsMinimumDistance = 2
	root.AddCommand(newSampleCmd(e), newMethodsCmd(e), newGofCmd(e), newCompressCmd(e), newExactCmd(e), newCompareMARCmd(e), newSummaryCmd(e), newDemoCmd(e), newExperimentCmd(e), newMergeCmd(e), newReproduceCmd(e), newBNNCmd(e), newGPUCmd(e))
	for _, c := range append([]*cobra.Command{root}, root.Commands()...) {
		if !c.HasSubCommands() {
			continue
		}
		c.Args = unknownSubcommand
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
	usageArgs(root)
	decimalInts(root)
	// Flag descriptions wrapped to the terminal (100 columns when not one):
	// cobra's template prints each on one line, up to 700 characters.
	cobra.AddTemplateFunc("wrapFlags", flagUsages)
	tmpl := root.UsageTemplate()
	for _, set := range []string{"LocalFlags", "InheritedFlags"} {
		tmpl = strings.Replace(tmpl, "{{."+set+".FlagUsages", "{{wrapFlags ."+set, 1)
	}
	root.SetUsageTemplate(tmpl)
	return root
}

// flagUsages lists a set's flags with their descriptions wrapped to the
// width of the terminal on standard output, or to 100 columns.
func flagUsages(fs *pflag.FlagSet) string {
	cols := 100
	if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w >= 60 {
		cols = w
	}
	return fs.FlagUsagesWrapped(cols)
}

// decimalInts makes every integer flag of pflag's own of c and its
// subcommands read decimal numbers only: pflag reads them in Go's syntax,
// where --draws 0100 is 64 (octal), 0x10 is 16 and 1_000 is 1000. (dstein's
// own flag values read decimals already, with their own messages.)
func decimalInts(c *cobra.Command) {
	for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
		fs.VisitAll(func(f *pflag.Flag) {
			if !strings.HasPrefix(fmt.Sprintf("%T", f.Value), "*pflag.") {
				return
			}
			switch f.Value.Type() {
			case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
				if _, done := f.Value.(decimalValue); !done {
					f.Value = decimalValue{f.Value}
				}
			}
		})
	}
	for _, sub := range c.Commands() {
		decimalInts(sub)
	}
}

// decimalValue is an integer flag that takes decimal digits with an
// optional sign only.
type decimalValue struct{ pflag.Value }

// Set refuses other text as strconv would (flagError words the message).
func (v decimalValue) Set(s string) error {
	t := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if t == "" || strings.Trim(t, "0123456789") != "" || (len(t) > 1 && t[0] == '0') {
		fn := "ParseInt"
		if strings.HasPrefix(v.Type(), "uint") {
			fn = "ParseUint"
		}
		return &strconv.NumError{Func: fn, Num: s, Err: strconv.ErrSyntax}
	}
	return v.Value.Set(s)
}

// unknownSubcommand refuses arguments to a command that only groups
// subcommands, suggesting the closest name.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	var names []string
	for _, c := range cmd.Commands() {
		names = append(names, c.Name())
	}
	return usagef("unknown command %q for %s%s", args[0], cmd.CommandPath(), suggest.Hint(args[0], names))
}
