package safeio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// commitWithin runs Commit, failing the test if it blocks.
func commitWithin(t *testing.T, p *Plan) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.Commit() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("Commit blocked")
		return nil
	}
}

type fifoRead struct {
	data string
	err  error
	// sawFiles: the regular files' contents when the FIFO's writer
	// appeared.
	sawFiles map[string]string
}

// readFIFO reads a FIFO in a goroutine until its writer closes it. When the
// writer opens it, the files in watch are read (to check Commit's order).
func readFIFO(t *testing.T, path string, watch ...string) <-chan fifoRead {
	t.Helper()
	ch := make(chan fifoRead, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_RDONLY, 0)
		if err != nil {
			ch <- fifoRead{err: err}
			return
		}
		defer f.Close()
		saw := map[string]string{}
		for _, w := range watch {
			b, err := os.ReadFile(w)
			if err != nil {
				saw[w] = "error: " + err.Error()
			} else {
				saw[w] = string(b)
			}
		}
		b, err := io.ReadAll(f)
		ch <- fifoRead{string(b), err, saw}
	}()
	// Unblock the reader if the test ends before a writer came.
	t.Cleanup(func() {
		if f, err := os.OpenFile(path, os.O_RDWR, 0); err == nil {
			f.Close()
		}
	})
	return ch
}

func receive(t *testing.T, ch <-chan fifoRead) fifoRead {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("FIFO reader got nothing")
		return fifoRead{}
	}
}

func TestOutputEmptyAndInputsIgnored(t *testing.T) {
	dir := setup(t)
	p := NewPlan()
	if f := p.Output("", "--json"); f != nil {
		t.Errorf("Output(\"\") = %v, want nil", f)
	}
	p.Input("")
	p.Input("-")
	p.Input(filepath.Join(dir, "missing"))
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := p.Paths(); len(got) != 0 {
		t.Errorf("Paths() = %v", got)
	}
	noLeftovers(t, dir)
}

var tempName = regexp.MustCompile(`^\.out\.txt\.dstein-tmp-[0-9a-f]{12}$`)

func TestNewFile(t *testing.T) {
	dir := setup(t)
	path := filepath.Join(dir, "out.txt")
	p := NewPlan()
	f := p.Output(path, "--out")
	if f.Path != path {
		t.Errorf("Path = %q", f.Path)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	// A temporary file beside the target, with a new file's mode.
	tmps := leftovers(t, dir)
	if len(tmps) != 1 || filepath.Dir(tmps[0]) != dir || !tempName.MatchString(filepath.Base(tmps[0])) {
		t.Fatalf("temporary files after Check: %v", tmps)
	}
	if m := lstatMode(t, tmps[0]); m != newFileMode() {
		t.Errorf("temporary file mode %v, want %v", m, newFileMode())
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("target exists before Commit: %v", err)
	}
	if err := f.Write(fill("hello\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("target exists before Commit: %v", err)
	}
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != "hello\n" {
		t.Errorf("content %q", got)
	}
	if m := lstatMode(t, path); m != newFileMode() {
		t.Errorf("mode %v, want %v", m, newFileMode())
	}
	if got := p.Paths(); len(got) != 1 || got[0] != path {
		t.Errorf("Paths() = %v", got)
	}
	noLeftovers(t, dir)
	// Commit again: nothing happens.
	if err := p.Commit(); err != nil {
		t.Error(err)
	}
}

func TestLargeOutput(t *testing.T) {
	dir := setup(t)
	path := filepath.Join(dir, "big")
	want := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB, over the buffer
	p := NewPlan()
	f := p.Output(path, "--out")
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	if err := f.Write(fill(want)); err != nil {
		t.Fatal(err)
	}
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != want {
		t.Errorf("content of %d bytes, want %d", len(got), len(want))
	}
}

func TestExistingFileKeepsMode(t *testing.T) {
	for _, mode := range []fs.FileMode{0o600, 0o640, 0o644, 0o755, 0o444, 0o700, 0o000} {
		t.Run(mode.String(), func(t *testing.T) {
			if mode&0o400 == 0 && os.Geteuid() != 0 {
				t.Skip("cannot read back an unreadable file unless root")
			}
			dir := setup(t)
			path := filepath.Join(dir, "out.txt")
			writeFile(t, path, "old", mode)
			p := NewPlan()
			f := p.Output(path, "--out")
			if err := p.Check(); err != nil {
				t.Fatal(err)
			}
			if err := f.Write(fill("new")); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, path); got != "old" {
				t.Errorf("target changed before Commit: %q", got)
			}
			if err := p.Commit(); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, path); got != "new" {
				t.Errorf("content %q", got)
			}
			if m := lstatMode(t, path); m != mode {
				t.Errorf("mode %v, want %v", m, mode)
			}
			noLeftovers(t, dir)
		})
	}
}

func TestExistingFileKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can give a file to another owner")
	}
	dir := setup(t)
	path := filepath.Join(dir, "out.txt")
	writeFile(t, path, "old", 0o640)
	if err := os.Chown(path, 12345, 23456); err != nil {
		t.Skipf("chown: %v", err)
	}
	p := NewPlan()
	f := p.Output(path, "--out")
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	f.Write(fill("new"))
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := info.Sys().(*syscall.Stat_t)
	if st.Uid != 12345 || st.Gid != 23456 || info.Mode() != 0o640 {
		t.Errorf("owner %d:%d mode %v, want 12345:23456 -rw-r-----", st.Uid, st.Gid, info.Mode())
	}
}

// physical builds dir/deep/real (a directory), dir/alias -> deep/real,
// dir/deep/target (a file) and dir/deep/real/link -> ../target: the link,
// reached as dir/alias/link, names dir/deep/target, while a lexical
// reading of dir/alias/../target would say dir/target.
func physical(t *testing.T, dir string) (aliasLink, target string) {
	mkdir(t, filepath.Join(dir, "deep", "real"))
	symlink(t, filepath.Join("deep", "real"), filepath.Join(dir, "alias"))
	target = filepath.Join(dir, "deep", "target")
	writeFile(t, target, "target", 0o644)
	symlink(t, filepath.Join("..", "target"), filepath.Join(dir, "deep", "real", "link"))
	return filepath.Join(dir, "alias", "link"), target
}

func TestOutputIsInput(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) (in, out string)
	}{
		{"same path", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "data")
			writeFile(t, p, "input", 0o644)
			return p, p
		}},
		{"./x and x", func(t *testing.T, dir string) (string, string) {
			writeFile(t, filepath.Join(dir, "data"), "input", 0o644)
			t.Chdir(dir)
			return "./data", "data"
		}},
		{"relative and absolute", func(t *testing.T, dir string) (string, string) {
			writeFile(t, filepath.Join(dir, "data"), "input", 0o644)
			t.Chdir(dir)
			return filepath.Join(dir, "data"), "data"
		}},
		{"output is a symlink to the input", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "data")
			writeFile(t, p, "input", 0o644)
			symlink(t, "data", filepath.Join(dir, "link"))
			return p, filepath.Join(dir, "link")
		}},
		{"input is a symlink to the output", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "data")
			writeFile(t, p, "input", 0o644)
			symlink(t, p, filepath.Join(dir, "link"))
			return filepath.Join(dir, "link"), p
		}},
		{"chain of symlinks", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "data")
			writeFile(t, p, "input", 0o644)
			symlink(t, "data", filepath.Join(dir, "l1"))
			mkdir(t, filepath.Join(dir, "sub"))
			symlink(t, "../l1", filepath.Join(dir, "sub", "l2"))
			return p, filepath.Join(dir, "sub", "l2")
		}},
		{"hard link", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "data")
			writeFile(t, p, "input", 0o644)
			if err := os.Link(p, filepath.Join(dir, "hard")); err != nil {
				t.Skipf("link: %v", err)
			}
			return p, filepath.Join(dir, "hard")
		}},
		{"through a symlinked directory", func(t *testing.T, dir string) (string, string) {
			mkdir(t, filepath.Join(dir, "real"))
			writeFile(t, filepath.Join(dir, "real", "data"), "input", 0o644)
			symlink(t, "real", filepath.Join(dir, "alias"))
			return filepath.Join(dir, "real", "data"), filepath.Join(dir, "alias", "data")
		}},
		{"relative symlink in a symlinked directory", func(t *testing.T, dir string) (string, string) {
			link, target := physical(t, dir)
			return target, link
		}},
		{"the same FIFO", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "fifo")
			mkfifo(t, p)
			return p, p
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := setup(t)
			in, out := c.setup(t, dir)
			before := snapshot(t, dir)
			p := NewPlan()
			p.Input(in)
			p.Output(filepath.Join(dir, "other"), "--other")
			p.Output(out, "--out")
			err := p.Check()
			if err == nil || !strings.Contains(err.Error(), "is the input") {
				t.Fatalf("Check() = %v, want an error saying the output is the input", err)
			}
			if !strings.Contains(err.Error(), "--out "+out) {
				t.Errorf("error %q does not name the output", err)
			}
			noLeftovers(t, dir)
			sameSnapshot(t, before, snapshot(t, dir))
			if err := p.Commit(); err != nil {
				t.Error(err)
			}
			sameSnapshot(t, before, snapshot(t, dir))
		})
	}
}

func TestSharedCharDevice(t *testing.T) {
	if info, err := os.Stat(os.DevNull); err != nil || info.Mode()&fs.ModeCharDevice == 0 {
		t.Skipf("%s is not a character device here", os.DevNull)
	}
	dir := setup(t)
	p := NewPlan()
	p.Input(os.DevNull)
	a := p.Output(os.DevNull, "--a")
	b := p.Output(os.DevNull, "--b")
	if err := p.Check(); err != nil {
		t.Fatalf("reading and writing %s refused: %v", os.DevNull, err)
	}
	if err := a.Write(fill("discarded")); err != nil {
		t.Fatal(err)
	}
	if err := b.Write(fill("discarded too")); err != nil {
		t.Fatal(err)
	}
	if err := commitWithin(t, p); err != nil {
		t.Fatal(err)
	}
	if m := lstatMode(t, os.DevNull); m&fs.ModeCharDevice == 0 || m&fs.ModeDevice == 0 {
		t.Errorf("%s is now %v", os.DevNull, m)
	}
	noLeftovers(t, dir)
}

func TestTwoOutputsOneFile(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) (a, b string)
	}{
		{"existing, same path", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "x")
			writeFile(t, p, "x", 0o644)
			return p, p
		}},
		{"existing, ./x and x", func(t *testing.T, dir string) (string, string) {
			writeFile(t, filepath.Join(dir, "x"), "x", 0o644)
			t.Chdir(dir)
			return "./x", "x"
		}},
		{"existing, hard link", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "x")
			writeFile(t, p, "x", 0o644)
			if err := os.Link(p, filepath.Join(dir, "h")); err != nil {
				t.Skipf("link: %v", err)
			}
			return p, filepath.Join(dir, "h")
		}},
		{"existing, symlink", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "x")
			writeFile(t, p, "x", 0o644)
			symlink(t, "x", filepath.Join(dir, "l"))
			return filepath.Join(dir, "l"), p
		}},
		{"existing, through a symlinked directory", func(t *testing.T, dir string) (string, string) {
			mkdir(t, filepath.Join(dir, "real"))
			writeFile(t, filepath.Join(dir, "real", "x"), "x", 0o644)
			symlink(t, "real", filepath.Join(dir, "alias"))
			return filepath.Join(dir, "real", "x"), filepath.Join(dir, "alias", "x")
		}},
		{"existing, relative symlink in a symlinked directory", func(t *testing.T, dir string) (string, string) {
			link, target := physical(t, dir)
			return link, target
		}},
		{"new, same path", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "x")
			return p, p
		}},
		{"new, ./x and x", func(t *testing.T, dir string) (string, string) {
			t.Chdir(dir)
			return "./x", "x"
		}},
		{"new, x and absolute", func(t *testing.T, dir string) (string, string) {
			t.Chdir(dir)
			return "x", filepath.Join(dir, "x")
		}},
		{"new, sub/../x and x", func(t *testing.T, dir string) (string, string) {
			mkdir(t, filepath.Join(dir, "sub"))
			t.Chdir(dir)
			return "sub/../x", "x"
		}},
		{"new, through a symlinked directory", func(t *testing.T, dir string) (string, string) {
			mkdir(t, filepath.Join(dir, "real"))
			symlink(t, "real", filepath.Join(dir, "alias"))
			return filepath.Join(dir, "real", "x"), filepath.Join(dir, "alias", "x")
		}},
		{"new, relative paths through a symlinked directory", func(t *testing.T, dir string) (string, string) {
			mkdir(t, filepath.Join(dir, "real"))
			symlink(t, filepath.Join(dir, "real"), filepath.Join(dir, "alias"))
			t.Chdir(dir)
			return "alias/x", "./real/x"
		}},
		{"new, dangling symlink and its target", func(t *testing.T, dir string) (string, string) {
			symlink(t, "x", filepath.Join(dir, "l"))
			return filepath.Join(dir, "l"), filepath.Join(dir, "x")
		}},
		{"standard output twice", func(t *testing.T, dir string) (string, string) {
			return "-", "-"
		}},
		{"the same FIFO", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "fifo")
			mkfifo(t, p)
			symlink(t, "fifo", filepath.Join(dir, "l"))
			return p, filepath.Join(dir, "l")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := setup(t)
			a, b := c.setup(t, dir)
			before := snapshot(t, dir)
			p := NewPlan()
			p.Output(filepath.Join(dir, "fine"), "--fine")
			p.Output(a, "--a")
			p.Output(b, "--b")
			err := p.Check()
			if err == nil || !strings.Contains(err.Error(), "are the same file") {
				t.Fatalf("Check() = %v, want an error saying they are the same file", err)
			}
			if !strings.Contains(err.Error(), "--a "+a) || !strings.Contains(err.Error(), "--b "+b) {
				t.Errorf("error %q does not name both outputs", err)
			}
			noLeftovers(t, dir)
			sameSnapshot(t, before, snapshot(t, dir))
		})
	}
}

func TestDistinctOutputsAccepted(t *testing.T) {
	dir := setup(t)
	writeFile(t, filepath.Join(dir, "old"), "old", 0o644)
	writeFile(t, filepath.Join(dir, "input"), "input", 0o644)
	mkdir(t, filepath.Join(dir, "sub"))
	p := NewPlan()
	p.Input(filepath.Join(dir, "input"))
	outs := []*File{
		p.Output(filepath.Join(dir, "a"), "--a"),
		p.Output(filepath.Join(dir, "sub", "a"), "--suba"), // same name, another directory
		p.Output(filepath.Join(dir, "old"), "--old"),
		p.Output(filepath.Join(dir, ".a"), "--dota"),
		p.Output("-", "--stdout"),
	}
	var stdout bytes.Buffer
	p.Stdout = &stdout
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	for i, f := range outs {
		if err := f.Write(fill(fmt.Sprint("content ", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	for i, f := range outs[:4] {
		if got := readFile(t, f.Path); got != fmt.Sprint("content ", i) {
			t.Errorf("%s: %q", f.Path, got)
		}
	}
	if stdout.String() != "content 4" {
		t.Errorf("stdout %q", stdout.String())
	}
	if got := readFile(t, filepath.Join(dir, "input")); got != "input" {
		t.Errorf("input changed: %q", got)
	}
	if got := p.Paths(); len(got) != 4 {
		t.Errorf("Paths() = %v", got)
	}
	noLeftovers(t, dir)
}

func TestBadOutputs(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) string
		want  string
	}{
		{"missing directory", func(t *testing.T, dir string) string {
			return filepath.Join(dir, "nodir", "x")
		}, "does not exist"},
		{"missing directories", func(t *testing.T, dir string) string {
			return filepath.Join(dir, "a", "b", "c", "x")
		}, "does not exist"},
		{"parent is a file", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "file"), "f", 0o644)
			return filepath.Join(dir, "file", "x")
		}, "not a directory"},
		{"a directory", func(t *testing.T, dir string) string {
			mkdir(t, filepath.Join(dir, "d"))
			return filepath.Join(dir, "d")
		}, "is a directory"},
		{"a directory with a slash", func(t *testing.T, dir string) string {
			mkdir(t, filepath.Join(dir, "d"))
			return filepath.Join(dir, "d") + "/"
		}, "is a directory"},
		{"dot", func(t *testing.T, dir string) string {
			t.Chdir(dir)
			return "."
		}, "is a directory"},
		{"a symlink to a directory", func(t *testing.T, dir string) string {
			mkdir(t, filepath.Join(dir, "d"))
			symlink(t, "d", filepath.Join(dir, "l"))
			return filepath.Join(dir, "l")
		}, "is a directory"},
		{"a dangling symlink into a missing directory", func(t *testing.T, dir string) string {
			symlink(t, "nodir/x", filepath.Join(dir, "l"))
			return filepath.Join(dir, "l")
		}, "does not exist"},
		{"a symlink loop", func(t *testing.T, dir string) string {
			symlink(t, "l2", filepath.Join(dir, "l1"))
			symlink(t, "l1", filepath.Join(dir, "l2"))
			return filepath.Join(dir, "l1")
		}, "too many levels of symbolic links"},
		{"an unwritable directory", func(t *testing.T, dir string) string {
			if os.Geteuid() == 0 {
				t.Skip("root writes in a directory of mode 0500")
			}
			d := filepath.Join(dir, "ro")
			mkdir(t, d)
			if err := os.Chmod(d, 0o500); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(d, 0o755) })
			return filepath.Join(d, "x")
		}, "cannot write in"},
		{"an existing file in an unwritable directory", func(t *testing.T, dir string) string {
			if os.Geteuid() == 0 {
				t.Skip("root writes in a directory of mode 0500")
			}
			d := filepath.Join(dir, "ro")
			mkdir(t, d)
			writeFile(t, filepath.Join(d, "x"), "x", 0o644)
			if err := os.Chmod(d, 0o500); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(d, 0o755) })
			return filepath.Join(d, "x")
		}, "cannot write in"},
		{"a path in /proc, where no file can be created, even by root", func(t *testing.T, dir string) string {
			// Refused as the kernel's before any temporary file is made
			// (the unwritable directory above fails when its temporary
			// file is created, after the other outputs' were).
			if info, err := os.Stat("/proc/self"); err != nil || !info.IsDir() {
				t.Skip("no /proc")
			}
			return "/proc/dstein-safeio-test"
		}, "is in the kernel's /proc or /sys"},
	}
	for _, c := range cases {
		for _, first := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/first=%v", c.name, first), func(t *testing.T) {
				dir := setup(t)
				bad := c.setup(t, dir)
				writeFile(t, filepath.Join(dir, "keep"), "keep", 0o600)
				before := snapshot(t, dir)
				p := NewPlan()
				var stdout bytes.Buffer
				p.Stdout = &stdout
				if first {
					p.Output(bad, "--bad")
				}
				p.Output(filepath.Join(dir, "new"), "--new")
				p.Output(filepath.Join(dir, "keep"), "--keep")
				p.Output("-", "--stdout")
				if !first {
					p.Output(bad, "--bad")
				}
				err := p.Check()
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("Check() = %v, want an error containing %q", err, c.want)
				}
				if !strings.Contains(err.Error(), "--bad") {
					t.Errorf("error %q does not name the output", err)
				}
				noLeftovers(t, dir)
				if l := leftovers(t, "/proc/dstein-safeio-test"); len(l) > 0 {
					t.Errorf("left %v", l)
				}
				sameSnapshot(t, before, snapshot(t, dir))
				if stdout.Len() != 0 {
					t.Errorf("stdout got %q", stdout.String())
				}
			})
		}
	}
}

func TestStdout(t *testing.T) {
	dir := setup(t)
	var stdout bytes.Buffer
	p := NewPlan()
	p.Stdout = &stdout
	f := p.Output("-", "--out")
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat("-"); err == nil {
		t.Error(`a file named "-" exists`)
	}
	if err := f.Write(fill("to stdout\n")); err != nil {
		t.Fatal(err)
	}
	if stdout.Len() != 0 {
		t.Fatalf("stdout written before Commit: %q", stdout.String())
	}
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "to stdout\n" {
		t.Errorf("stdout %q", stdout.String())
	}
	if got := p.Paths(); len(got) != 0 {
		t.Errorf("Paths() = %v, want none for standard output", got)
	}
	noLeftovers(t, dir)
}

// TestStdoutDefault: a nil Plan.Stdout means os.Stdout.
func TestStdoutDefault(t *testing.T) {
	setup(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	saved := os.Stdout
	os.Stdout = w
	defer func() { os.Stdout = saved }()
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		got <- string(b)
	}()
	p := NewPlan()
	f := p.Output("-", "--out")
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	f.Write(fill("via os.Stdout"))
	err = p.Commit()
	os.Stdout = saved
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "via os.Stdout" {
		t.Errorf("got %q", s)
	}
}

func TestFIFOOutput(t *testing.T) {
	dir := setup(t)
	path := filepath.Join(dir, "fifo")
	mkfifo(t, path)
	p := NewPlan()
	f := p.Output(path, "--out")
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	noLeftovers(t, dir) // the buffer is an unlinked file
	// Over a pipe's buffer: Commit must stream it.
	want := strings.Repeat("line through the fifo\n", 10000)
	if err := f.Write(fill(want)); err != nil {
		t.Fatal(err)
	}
	ch := readFIFO(t, path)
	if err := commitWithin(t, p); err != nil {
		t.Fatal(err)
	}
	r := receive(t, ch)
	if r.err != nil || r.data != want {
		t.Errorf("read %d bytes, %v; want %d bytes", len(r.data), r.err, len(want))
	}
	if m := lstatMode(t, path); m&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is now %v", m)
	}
	if got := p.Paths(); len(got) != 1 || got[0] != path {
		t.Errorf("Paths() = %v", got)
	}
	noLeftovers(t, dir)
}

func TestDevNullOutput(t *testing.T) {
	info, err := os.Lstat(os.DevNull)
	if err != nil || info.Mode()&fs.ModeCharDevice == 0 {
		t.Skipf("%s is not a character device here", os.DevNull)
	}
	dir := setup(t)
	p := NewPlan()
	f := p.Output(os.DevNull, "--out")
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	noLeftovers(t, dir, "/dev")
	f.Write(fill("nothing"))
	if err := commitWithin(t, p); err != nil {
		t.Fatal(err)
	}
	after, err := os.Lstat(os.DevNull)
	if err != nil || after.Mode() != info.Mode() || !os.SameFile(info, after) {
		t.Errorf("%s was %v, now %v (%v)", os.DevNull, info.Mode(), after.Mode(), err)
	}
	noLeftovers(t, dir, "/dev")
}

func TestSymlinkOutput(t *testing.T) {
	cases := []struct {
		name string
		// setup returns the output (a link), its final target, and the
		// target's mode (0: it does not exist yet).
		setup func(t *testing.T, dir string) (out, target string, mode fs.FileMode)
	}{
		{"relative link to an existing file", func(t *testing.T, dir string) (string, string, fs.FileMode) {
			target := filepath.Join(dir, "target")
			writeFile(t, target, "old", 0o640)
			symlink(t, "target", filepath.Join(dir, "link"))
			return filepath.Join(dir, "link"), target, 0o640
		}},
		{"absolute link to an existing file", func(t *testing.T, dir string) (string, string, fs.FileMode) {
			target := filepath.Join(dir, "target")
			writeFile(t, target, "old", 0o600)
			symlink(t, target, filepath.Join(dir, "link"))
			return filepath.Join(dir, "link"), target, 0o600
		}},
		{"link into another directory", func(t *testing.T, dir string) (string, string, fs.FileMode) {
			mkdir(t, filepath.Join(dir, "a"))
			mkdir(t, filepath.Join(dir, "b"))
			target := filepath.Join(dir, "b", "target")
			writeFile(t, target, "old", 0o604)
			symlink(t, "../b/target", filepath.Join(dir, "a", "link"))
			return filepath.Join(dir, "a", "link"), target, 0o604
		}},
		{"chain of links", func(t *testing.T, dir string) (string, string, fs.FileMode) {
			mkdir(t, filepath.Join(dir, "sub"))
			target := filepath.Join(dir, "sub", "target")
			writeFile(t, target, "old", 0o755)
			symlink(t, "sub/target", filepath.Join(dir, "l1"))
			symlink(t, "../l1", filepath.Join(dir, "sub", "l2"))
			symlink(t, filepath.Join(dir, "sub", "l2"), filepath.Join(dir, "l3"))
			return filepath.Join(dir, "l3"), target, 0o755
		}},
		{"dangling link", func(t *testing.T, dir string) (string, string, fs.FileMode) {
			symlink(t, "new", filepath.Join(dir, "link"))
			return filepath.Join(dir, "link"), filepath.Join(dir, "new"), 0
		}},
		{"relative link reached through a symlinked directory", func(t *testing.T, dir string) (string, string, fs.FileMode) {
			out, target := physical(t, dir)
			return out, target, 0o644
		}},
		{"dangling relative link reached through a symlinked directory", func(t *testing.T, dir string) (string, string, fs.FileMode) {
			mkdir(t, filepath.Join(dir, "deep", "real"))
			symlink(t, filepath.Join("deep", "real"), filepath.Join(dir, "alias"))
			symlink(t, filepath.Join("..", "new"), filepath.Join(dir, "deep", "real", "link"))
			return filepath.Join(dir, "alias", "link"), filepath.Join(dir, "deep", "new"), 0
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := setup(t)
			out, target, mode := c.setup(t, dir)
			before := snapshot(t, dir)
			dest, err := os.Readlink(out)
			if err != nil {
				t.Fatal(err)
			}
			p := NewPlan()
			f := p.Output(out, "--out")
			if err := p.Check(); err != nil {
				t.Fatal(err)
			}
			// The temporary file is beside the target.
			tmps := leftovers(t, dir)
			if len(tmps) != 1 || filepath.Dir(tmps[0]) != filepath.Dir(target) {
				t.Errorf("temporary files %v, want one in %s", tmps, filepath.Dir(target))
			}
			if err := f.Write(fill("new content")); err != nil {
				t.Fatal(err)
			}
			if err := p.Commit(); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, target); got != "new content" {
				t.Errorf("target %q", got)
			}
			if mode == 0 {
				mode = newFileMode()
			}
			if m := lstatMode(t, target); m != mode {
				t.Errorf("target mode %v, want %v", m, mode)
			}
			if m := lstatMode(t, out); m&fs.ModeSymlink == 0 {
				t.Errorf("the link is now %v", m)
			}
			if d, err := os.Readlink(out); err != nil || d != dest {
				t.Errorf("the link now points to %q (%v), was %q", d, err, dest)
			}
			// Nothing else changed.
			after := snapshot(t, dir)
			delete(before, target)
			delete(after, target)
			sameSnapshot(t, before, after)
			noLeftovers(t, dir)
		})
	}
}

// TestTempBesidePhysicalTarget: a path with ".." after a symlinked
// directory names a file where the system finds it, not where a lexical
// reading would put it.
func TestTempBesidePhysicalTarget(t *testing.T) {
	dir := setup(t)
	mkdir(t, filepath.Join(dir, "deep", "real"))
	mkdir(t, filepath.Join(dir, "deep", "sub"))
	symlink(t, filepath.Join("deep", "real"), filepath.Join(dir, "alias"))
	t.Chdir(dir)
	// Clashes are found between such paths.
	symlink(t, "new.txt", "deep/new.txt.link") // names dir/deep/new.txt
	p := NewPlan()
	p.Output("alias/../new.txt", "--a") // dir/deep/new.txt
	p.Output("deep/new.txt.link", "--c")
	err := p.Check()
	if err == nil || !strings.Contains(err.Error(), "are the same file") {
		t.Errorf("Check() = %v, want --a and --c refused as the same file", err)
	}
	noLeftovers(t, dir)

	p = NewPlan()
	a := p.Output("alias/../new.txt", "--a")   // dir/deep/new.txt
	b := p.Output("alias/../sub/other", "--b") // dir/deep/sub/other; dir/sub does not exist
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	tmps := leftovers(t, dir)
	for _, tmp := range tmps {
		if d := filepath.Dir(tmp); d != filepath.Join(dir, "deep") && d != filepath.Join(dir, "deep", "sub") {
			t.Errorf("temporary file %s is not beside its target", tmp)
		}
	}
	if len(tmps) != 2 {
		t.Errorf("temporary files %v, want 2", tmps)
	}
	a.Write(fill("a"))
	b.Write(fill("b"))
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "deep", "new.txt")); got != "a" {
		t.Errorf("deep/new.txt: %q", got)
	}
	if got := readFile(t, filepath.Join(dir, "deep", "sub", "other")); got != "b" {
		t.Errorf("deep/sub/other: %q", got)
	}
	for _, wrong := range []string{"new.txt", "sub"} {
		if _, err := os.Lstat(filepath.Join(dir, wrong)); err == nil {
			t.Errorf("%s was created", wrong)
		}
	}
	noLeftovers(t, dir)
}

func TestAbort(t *testing.T) {
	dir := setup(t)
	existing := filepath.Join(dir, "existing")
	writeFile(t, existing, "old", 0o600)
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo)
	symlink(t, "existing", filepath.Join(dir, "link"))
	before := snapshot(t, dir)
	var stdout bytes.Buffer
	p := NewPlan()
	p.Stdout = &stdout
	outs := []*File{
		p.Output(filepath.Join(dir, "new"), "--new"),
		p.Output(filepath.Join(dir, "link"), "--link"),
		p.Output("-", "--stdout"),
		p.Output(fifo, "--fifo"),
		p.Output(os.DevNull, "--null"),
		p.Output(filepath.Join(dir, "unwritten"), "--unwritten"),
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	for _, f := range outs[:5] {
		if err := f.Write(fill("new")); err != nil {
			t.Fatal(err)
		}
	}
	p.Abort()
	sameSnapshot(t, before, snapshot(t, dir))
	noLeftovers(t, dir)
	if stdout.Len() != 0 {
		t.Errorf("stdout %q", stdout.String())
	}
	// Commit after Abort does nothing; Abort again is harmless.
	if err := p.Commit(); err != nil {
		t.Error(err)
	}
	p.Abort()
	sameSnapshot(t, before, snapshot(t, dir))
	noLeftovers(t, dir)
	if stdout.Len() != 0 {
		t.Errorf("stdout %q", stdout.String())
	}
}

func TestAbortBeforeWrite(t *testing.T) {
	dir := setup(t)
	p := NewPlan()
	p.Output(filepath.Join(dir, "a"), "--a")
	p.Output("-", "--b")
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	p.Abort()
	noLeftovers(t, dir)
	if _, err := os.Lstat(filepath.Join(dir, "a")); err == nil {
		t.Error("a was created")
	}
}

// orderWriter checks, when first written, that the regular files are
// already in place.
type orderWriter struct {
	t     *testing.T
	files map[string]string
	buf   bytes.Buffer
	saw   bool
}

func (w *orderWriter) Write(b []byte) (int, error) {
	if !w.saw {
		w.saw = true
		for path, want := range w.files {
			got, err := os.ReadFile(path)
			if err != nil || string(got) != want {
				w.t.Errorf("stdout written while %s is %q (%v), want %q", path, got, err, want)
			}
		}
	}
	return w.buf.Write(b)
}

func TestCommitOrder(t *testing.T) {
	dir := setup(t)
	a := filepath.Join(dir, "a")
	b := filepath.Join(dir, "b")
	writeFile(t, b, "old b", 0o644)
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo)
	w := &orderWriter{t: t, files: map[string]string{a: "new a", b: "new b"}}
	p := NewPlan()
	p.Stdout = w
	// Streams declared first: still written last.
	fo := p.Output("-", "--stdout")
	ff := p.Output(fifo, "--fifo")
	fa := p.Output(a, "--a")
	fb := p.Output(b, "--b")
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	for f, s := range map[*File]string{fo: "stdout", ff: "fifo", fa: "new a", fb: "new b"} {
		if err := f.Write(fill(s)); err != nil {
			t.Fatal(err)
		}
	}
	ch := readFIFO(t, fifo, a, b)
	if err := commitWithin(t, p); err != nil {
		t.Fatal(err)
	}
	if w.buf.String() != "stdout" {
		t.Errorf("stdout %q", w.buf.String())
	}
	r := receive(t, ch)
	if r.data != "fifo" {
		t.Errorf("fifo %q %v", r.data, r.err)
	}
	for path, want := range w.files {
		if r.sawFiles[path] != want {
			t.Errorf("FIFO opened while %s was %q, want %q", path, r.sawFiles[path], want)
		}
	}
	noLeftovers(t, dir)
}

func TestUnwrittenOutputsLeftAlone(t *testing.T) {
	dir := setup(t)
	existing := filepath.Join(dir, "existing")
	writeFile(t, existing, "old", 0o644)
	var stdout bytes.Buffer
	p := NewPlan()
	p.Stdout = &stdout
	p.Output(filepath.Join(dir, "new"), "--new")
	p.Output(existing, "--existing")
	p.Output("-", "--stdout")
	written := p.Output(filepath.Join(dir, "written"), "--written")
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	written.Write(fill("w"))
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "new")); err == nil {
		t.Error("an unwritten new output was created")
	}
	if got := readFile(t, existing); got != "old" {
		t.Errorf("an unwritten existing output changed to %q", got)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q", stdout.String())
	}
	if got := p.Paths(); len(got) != 1 || got[0] != written.Path {
		t.Errorf("Paths() = %v", got)
	}
	noLeftovers(t, dir)
}

func TestWriteError(t *testing.T) {
	dir := setup(t)
	path := filepath.Join(dir, "out")
	writeFile(t, path, "old", 0o644)
	p := NewPlan()
	f := p.Output(path, "--out")
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := f.Write(func(w *bufio.Writer) error {
		w.WriteString("partial")
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
		t.Errorf("Write() = %v, want boom naming %s", err, path)
	}
	p.Abort()
	if got := readFile(t, path); got != "old" {
		t.Errorf("target %q", got)
	}
	noLeftovers(t, dir)
}

func TestCommitErrors(t *testing.T) {
	t.Run("temporary file removed", func(t *testing.T) {
		dir := setup(t)
		a, b, c := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")
		var stdout bytes.Buffer
		p := NewPlan()
		p.Stdout = &stdout
		fa := p.Output(a, "--a")
		fb := p.Output(b, "--b")
		fc := p.Output(c, "--c")
		fo := p.Output("-", "--stdout")
		if err := p.Check(); err != nil {
			t.Fatal(err)
		}
		for _, f := range []*File{fa, fb, fc, fo} {
			f.Write(fill("x"))
		}
		tmps, _ := filepath.Glob(filepath.Join(dir, ".b.dstein-tmp-*"))
		if len(tmps) != 1 {
			t.Fatalf("temporary files of b: %v", tmps)
		}
		os.Remove(tmps[0])
		err := p.Commit()
		if err == nil || !strings.Contains(err.Error(), b) {
			t.Fatalf("Commit() = %v, want an error about %s", err, b)
		}
		if got := readFile(t, a); got != "x" {
			t.Errorf("a, committed before the error: %q", got)
		}
		for _, p := range []string{b, c} {
			if _, err := os.Lstat(p); err == nil {
				t.Errorf("%s exists", p)
			}
		}
		if stdout.Len() != 0 {
			t.Errorf("stdout written after an error: %q", stdout.String())
		}
		noLeftovers(t, dir)
	})
	t.Run("stream fails", func(t *testing.T) {
		dir := setup(t)
		a := filepath.Join(dir, "a")
		p := NewPlan()
		p.Stdout = failWriter{}
		fa := p.Output(a, "--a")
		fo := p.Output("-", "--stdout")
		if err := p.Check(); err != nil {
			t.Fatal(err)
		}
		fa.Write(fill("a"))
		fo.Write(fill("s"))
		err := p.Commit()
		if err == nil || !strings.Contains(err.Error(), "broken pipe") {
			t.Errorf("Commit() = %v", err)
		}
		if got := readFile(t, a); got != "a" {
			t.Errorf("a: %q", got)
		}
		noLeftovers(t, dir)
	})
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }

func TestMisusePanics(t *testing.T) {
	dir := setup(t)
	panics := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", name)
			}
		}()
		f()
	}
	p := NewPlan()
	f := p.Output(filepath.Join(dir, "a"), "--a")
	panics("Write before Check", func() { f.Write(fill("x")) })
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	panics("Check twice", func() { p.Check() })
	if err := f.Write(fill("x")); err != nil {
		t.Fatal(err)
	}
	panics("Write twice", func() { f.Write(fill("y")) })
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	panics("Write after Commit", func() { f.Write(fill("z")) })
	if got := readFile(t, filepath.Join(dir, "a")); got != "x" {
		t.Errorf("a: %q", got)
	}
	noLeftovers(t, dir)
}

// TestBlankOrBrokenNamesRefused: a name of blanks or one with a line
// break is refused before anything is created.
func TestBlankOrBrokenNamesRefused(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{" ", "\t", "a\nb.json", "a.json\r", filepath.Join("sub", "  ")} {
		p := NewPlan()
		p.Output(filepath.Join(dir, name), "--json")
		if err := p.Check(); err == nil || !strings.Contains(err.Error(), "blanks only, or with a line break") {
			t.Errorf("%q: error %v", name, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files created: %v", entries)
	}
	p := NewPlan()
	p.Output(filepath.Join(dir, "a b.json"), "--json") // a blank inside a name is fine
	if err := p.Check(); err != nil {
		t.Errorf("a b.json: %v", err)
	}
	p.Abort()
}
