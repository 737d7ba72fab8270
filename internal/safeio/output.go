package safeio

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Why one file of about 600 lines: the output plan (declare, check every path before work,
// write atomically, clean up on error or signal) is one protocol.

// Plan is the set of a command's inputs and outputs.
type Plan struct {
	// Stdout receives the output named "-" (default os.Stdout).
	Stdout io.Writer

	inputs  []named
	outputs []*File
	checked bool
	done    bool
}

type named struct {
	path string
	info os.FileInfo
}

// File is one declared output.
type File struct {
	// Path is as the user gave it; Target the file that will be written
	// (symbolic links resolved).
	Path, Target string
	what         string
	stdout       bool
	stream       bool // written in place at Commit: stdout, a device or a FIFO
	exists       bool
	mode         fs.FileMode
	uid, gid     int
	tmp          *os.File // the content: a temporary file beside Target, or an unlinked one for streams
	written      bool
}

// NewPlan returns an empty plan.
func NewPlan() *Plan { return &Plan{} }

// Input records an input file of the command (its path as given), so that
// no output may be the same file. Empty paths and "-" are ignored. An input
// that cannot be found is left to the reader to report.
func (p *Plan) Input(path string) {
	if path == "" || path == "-" {
		return
	}
	info, err := os.Stat(path)
	if err != nil {
		return
	}
	p.inputs = append(p.inputs, named{path, info})
}

// Output declares an output file; what names it in messages ("--json").
// An empty path declares nothing and returns nil.
func (p *Plan) Output(path, what string) *File {
	if path == "" {
		return nil
	}
	f := &File{Path: path, what: what}
	p.outputs = append(p.outputs, f)
	return f
}

// Check verifies every output and prepares its temporary file. It must be
// called once, before the work; on error nothing was created.
func (p *Plan) Check() error {
	if p.checked {
		panic("safeio: Check called twice")
	}
	p.checked = true
	for _, f := range p.outputs {
		if err := f.resolve(); err != nil {
			p.Abort()
			return err
		}
	}
	for i, f := range p.outputs {
		for _, in := range p.inputs {
			if f.sameAsInput(in) {
				p.Abort()
				return fmt.Errorf("%s %s is the input %s; dstein never writes over its inputs", f.what, f.Path, in.path)
			}
		}
		for _, g := range p.outputs[:i] {
			if f.clashes(g) {
				p.Abort()
				return fmt.Errorf("%s %s and %s %s are the same file; give each output its own path", g.what, g.Path, f.what, f.Path)
			}
		}
	}
	for _, f := range p.outputs {
		if err := f.prepare(); err != nil {
			p.Abort()
			return err
		}
	}
	return nil
}

// resolve follows symbolic links to the file that will be written and
// classifies it.
func (f *File) resolve() error {
	if f.Path == "-" {
		f.stdout, f.stream = true, true
		return nil
	}
	// A name of blanks, or one that breaks a line, is a slip of the
	// shell (an unset variable in quotes, a pasted line), not a file
	// anyone means to write.
	if strings.TrimSpace(filepath.Base(f.Path)) == "" || strings.ContainsAny(f.Path, "\n\r") {
		return fmt.Errorf("%s %q: a file name of blanks only, or with a line break; want a path on one line with a visible name", f.what, f.Path)
	}
	// A path whose links pass through /proc or /dev/fd (/dev/stdout, a
	// process substitution) names an open file of this process: it is
	// written in place, as a stream, never renamed over.
	if sys := kernelFile(f.Path); sys != "" {
		where := "is"
		if abs, err := filepath.Abs(f.Path); err != nil || abs != sys {
			where = "leads to " + sys + ","
		}
		return fmt.Errorf("%s %s %s in the kernel's /proc or /sys; dstein writes no output there (an open file's /dev/fd/N or /proc/self/fd/N is fine)", f.what, f.Path, where)
	}
	if info, err := os.Stat(f.Path); err == nil && !info.IsDir() && (!info.Mode().IsRegular() || throughProc(f.Path)) {
		f.Target, f.exists, f.stream = f.Path, true, true
		// The process's own standard output (/dev/stdout, /proc/self/fd/1)
		// is written like "-", through Plan.Stdout, so that it stays in
		// order with the command's other output.
		if out, err := os.Stdout.Stat(); err == nil && os.SameFile(info, out) && info.Mode()&fs.ModeCharDevice == 0 {
			f.stdout = true
		}
		return nil
	}
	target, err := followLinks(f.Path)
	if err != nil {
		return fmt.Errorf("%s %s: %w", f.what, f.Path, err)
	}
	f.Target = target
	info, err := os.Stat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		dir := parent(target)
		di, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("%s %s: the directory %s does not exist", f.what, f.Path, dir)
		}
		if !di.IsDir() {
			return fmt.Errorf("%s %s: %s is not a directory", f.what, f.Path, dir)
		}
	case err != nil:
		return fmt.Errorf("%s %s: %w", f.what, f.Path, err)
	case info.IsDir():
		return fmt.Errorf("%s %s is a directory; want a file path", f.what, f.Path)
	case info.Mode().IsRegular():
		f.exists, f.mode = true, info.Mode().Perm()
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			f.uid, f.gid = int(st.Uid), int(st.Gid)
		}
		if err := replaceable(target, info); err != nil {
			return fmt.Errorf("%s %s %w; choose another path", f.what, f.Path, err)
		}
	default:
		f.exists, f.stream = true, true
	}
	return nil
}

// replaceable reports why the regular file at path (info its Stat) may
// not be replaced by renaming a new file over it, when the rename would
// succeed where writing the file would not: a file the user may not write
// (the shell's "permission denied" on > file; root may write any), or
// another user's file in a sticky directory such as /tmp, which the
// rename would fail on after the work.
func replaceable(path string, info fs.FileInfo) error {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if err := syscall.Access(path, 2 /* W_OK */); err != nil {
		return fmt.Errorf("exists and you may not write it (%s, owner uid %d): dstein replaces only a file you could write", info.Mode().Perm(), st.Uid)
	}
	euid := os.Geteuid()
	if euid == 0 || int(st.Uid) == euid {
		return nil
	}
	dir := parent(path)
	di, err := os.Stat(dir)
	if err != nil {
		return nil // the temporary file's creation reports it
	}
	if ds, ok := di.Sys().(*syscall.Stat_t); ok && di.Mode()&fs.ModeSticky != 0 && int(ds.Uid) != euid {
		return fmt.Errorf("is another user's file (owner uid %d) in the sticky directory %s, where only its owner may replace it", st.Uid, dir)
	}
	return nil
}

// kernelFile returns the path that path leads to in /proc (other than a
// process's open file, /proc/N/fd/M) or /sys, or "" when it leads to
// neither: files of the kernel's state and settings, which no output
// should be written into (as root, /proc/sys's settings would take it).
func kernelFile(path string) string {
	for range 40 {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		if strings.HasPrefix(path, "/dev/fd/") || openFileInProc(path) {
			return ""
		}
		if strings.HasPrefix(path, "/proc/") || strings.HasPrefix(path, "/sys/") {
			return path
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return ""
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return ""
}

// openFileInProc reports whether path is /proc/P/fd/N or
// /proc/P/task/T/fd/N (P a process id, self or thread-self), a process's
// open file.
func openFileInProc(path string) bool {
	rest, ok := strings.CutPrefix(path, "/proc/")
	if !ok {
		return false
	}
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) == 3 && parts[1] == "fd":
	case len(parts) == 5 && parts[1] == "task" && parts[3] == "fd":
	default:
		return false
	}
	return parts[len(parts)-1] != "" && strings.Trim(parts[len(parts)-1], "0123456789") == ""
}

// throughProc reports whether path, or a symbolic link it leads through,
// lies in /proc or /dev/fd.
func throughProc(path string) bool {
	for range 40 {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		if strings.HasPrefix(path, "/proc/") || strings.HasPrefix(path, "/dev/fd/") {
			return true
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return false
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return false
}

// followLinks resolves symbolic links in the last element of path, up to
// 40 levels, returning the path of the final target (which may not exist).
func followLinks(path string) (string, error) {
	for range 40 {
		info, err := os.Lstat(path)
		if err != nil || info.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			// Relative to the link's directory as the system finds it:
			// joined lexically, "alias/../x" in a link reached through a
			// symlinked directory would name another file.
			dir, _ := filepath.Split(path)
			if dir == "" {
				dir = "."
			}
			linkDir, err := filepath.EvalSymlinks(dir)
			if err != nil {
				return "", err
			}
			dest = filepath.Join(linkDir, dest)
		}
		path = dest
	}
	return "", fmt.Errorf("too many levels of symbolic links")
}

func (f *File) sameAsInput(in named) bool {
	if f.stdout || !f.exists {
		return false
	}
	info, err := os.Stat(f.Target)
	if err != nil || !os.SameFile(info, in.info) {
		return false
	}
	// Reading and writing the same character device (/dev/null) is
	// harmless; the same regular file or FIFO is not.
	return info.Mode()&fs.ModeCharDevice == 0
}

func (f *File) clashes(g *File) bool {
	if f.stdout || g.stdout {
		return f.stdout && g.stdout
	}
	if f.exists && g.exists {
		a, err1 := os.Stat(f.Target)
		b, err2 := os.Stat(g.Target)
		if err1 == nil && err2 == nil && os.SameFile(a, b) {
			return a.Mode()&fs.ModeCharDevice == 0
		}
		return false
	}
	if f.exists != g.exists {
		return false
	}
	return canonical(f.Target) == canonical(g.Target)
}

// canonical returns an absolute path of a file that does not exist yet,
// with its directory's symbolic links resolved.
func canonical(path string) string {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	if d, err := filepath.Abs(dir); err == nil {
		dir = d
	}
	return filepath.Join(dir, base)
}

// prepare creates the temporary file that receives the content.
func (f *File) prepare() error {
	if f.stream {
		tmp, err := os.CreateTemp("", "dstein-stream-*")
		if err != nil {
			return fmt.Errorf("%s %s: cannot buffer the output: %w", f.what, f.Path, err)
		}
		os.Remove(tmp.Name()) // unlinked: gone when closed, whatever happens
		f.tmp = tmp
		return nil
	}
	tmp, err := createTemp(f.Target)
	if err != nil {
		return fmt.Errorf("%s %s: cannot write in %s: %w", f.what, f.Path, parent(f.Target), errors.Unwrap(err))
	}
	f.tmp = tmp
	return nil
}

// parent returns the directory of path as the system finds it: unlike
// filepath.Dir, it does not take "link/.." away lexically.
func parent(path string) string {
	dir, _ := filepath.Split(path)
	if dir == "" {
		return "."
	}
	if len(dir) > 1 {
		dir = strings.TrimRight(dir, string(filepath.Separator))
		if dir == "" {
			dir = string(filepath.Separator)
		}
	}
	return dir
}

// createTemp creates a new file beside path with the permissions a new
// file gets (0666 less the umask).
func createTemp(path string) (*os.File, error) {
	// Not filepath.Join, which would clean "link/../" lexically and put the
	// file in another directory than path's.
	dir, base := filepath.Split(path)
	var b [6]byte
	for range 100 {
		rand.Read(b[:])
		name := dir + "." + base + ".dstein-tmp-" + hex.EncodeToString(b[:])
		tmp, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil {
			keepTemp(name)
		}
		return tmp, err
	}
	return nil, fmt.Errorf("cannot find a free temporary name beside %s", path)
}

// Write fills the output's content. It may be called once, after Check.
func (f *File) Write(fill func(w *bufio.Writer) error) error {
	if f.tmp == nil {
		panic("safeio: Write before Check, or after Commit or Abort")
	}
	if f.written {
		panic("safeio: Write called twice on " + f.Path)
	}
	f.written = true
	w := bufio.NewWriterSize(f.tmp, 1<<16)
	if err := fill(w); err != nil {
		return fmt.Errorf("writing %s: %w", f.Path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", f.Path, err)
	}
	return nil
}

// Commit puts every written output in place: regular files first (renamed
// over their targets, keeping an existing file's mode and owner), then
// streams. Outputs that were never written are left alone. It returns the
// first error; outputs already in place stay.
func (p *Plan) Commit() error { return p.CommitContext(context.Background()) }

// CommitContext is Commit, with streams that give up when ctx is canceled:
// a FIFO is opened without waiting for a reader (it is retried until one
// comes or ctx ends), and a write that blocks on a full pipe stops when
// ctx ends. Regular files are not affected: once renaming starts, every
// file is renamed.
func (p *Plan) CommitContext(ctx context.Context) error {
	if p.done {
		return nil
	}
	p.done = true
	defer p.cleanup()
	critical.RLock()
	for _, f := range p.outputs {
		if f.stream || !f.written {
			continue
		}
		if err := f.commitFile(); err != nil {
			critical.RUnlock()
			return err
		}
	}
	critical.RUnlock()
	for _, f := range p.outputs {
		if !f.stream || !f.written {
			continue
		}
		if err := f.commitStream(ctx, p.Stdout); err != nil {
			return err
		}
	}
	return nil
}

func (f *File) commitFile() error {
	tmp := f.tmp
	name := tmp.Name()
	if f.exists {
		if err := tmp.Chmod(f.mode); err != nil {
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
		if os.Geteuid() == 0 {
			tmp.Chown(f.uid, f.gid)
		}
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", f.Path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", f.Path, err)
	}
	f.tmp = nil
	if err := os.Rename(name, f.Target); err != nil {
		os.Remove(name)
		forgetTemp(name)
		return fmt.Errorf("writing %s: %w", f.Path, err)
	}
	forgetTemp(name)
	return nil
}

func (f *File) commitStream(ctx context.Context, stdout io.Writer) error {
	tmp := f.tmp
	defer func() { tmp.Close(); f.tmp = nil }()
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("writing %s: %w", f.Path, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.stdout {
		w := stdout
		if w == nil {
			w = os.Stdout
		}
		if _, err := io.Copy(w, tmp); err != nil {
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
		return nil
	}
	out, err := openStream(ctx, f.Target)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("writing %s: %w", f.Path, err)
	}
	// Closing the file from another goroutine ends a write blocked on a
	// pipe that nobody reads.
	stop := context.AfterFunc(ctx, func() { out.Close() })
	_, err = io.Copy(out, tmp)
	if stop() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", f.Path, err)
	}
	return nil
}

// openStream opens a device or FIFO for writing without blocking: a FIFO
// without a reader (ENXIO) is tried again every 20 ms until one comes or
// ctx ends. The file is put back in blocking mode for the write unless it
// is a FIFO, which Go's poller then serves (so that Close unblocks it).
func openStream(ctx context.Context, path string) (*os.File, error) {
	for {
		out, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|syscall.O_NONBLOCK, 0)
		if err == nil {
			if info, serr := out.Stat(); serr == nil && info.Mode()&fs.ModeNamedPipe == 0 {
				// A device written in non-blocking mode could fail with
				// EAGAIN; reopen it normally.
				out.Close()
				return os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			}
			return out, nil
		}
		if !errors.Is(err, syscall.ENXIO) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Abort removes the temporary files; no target changes.
func (p *Plan) Abort() {
	p.done = true
	p.cleanup()
}

func (p *Plan) cleanup() {
	for _, f := range p.outputs {
		if f.tmp != nil {
			name := f.tmp.Name()
			f.tmp.Close()
			if !f.stream {
				os.Remove(name)
				forgetTemp(name)
			}
			f.tmp = nil
		}
	}
}

// UsesStdout reports whether an output goes to standard output (after
// Check), so that a command can print its messages elsewhere.
func (p *Plan) UsesStdout() bool {
	for _, f := range p.outputs {
		if f.stdout {
			return true
		}
	}
	return false
}

// Paths returns the paths of the written outputs, as the user gave them.
func (p *Plan) Paths() []string {
	var out []string
	for _, f := range p.outputs {
		if f.written && !f.stdout {
			out = append(out, f.Path)
		}
	}
	return out
}
