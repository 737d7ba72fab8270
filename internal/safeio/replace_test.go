package safeio

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRewrite(t *testing.T) {
	cases := []struct {
		name string
		// setup returns the path to replace and its mode after (0: a new
		// file's).
		setup func(t *testing.T, dir string) (path string, mode fs.FileMode)
	}{
		{"new file", func(t *testing.T, dir string) (string, fs.FileMode) {
			return filepath.Join(dir, "journal"), 0
		}},
		{"existing 0600", func(t *testing.T, dir string) (string, fs.FileMode) {
			p := filepath.Join(dir, "journal")
			writeFile(t, p, "old", 0o600)
			return p, 0o600
		}},
		{"existing 0755", func(t *testing.T, dir string) (string, fs.FileMode) {
			p := filepath.Join(dir, "journal")
			writeFile(t, p, "old", 0o755)
			return p, 0o755
		}},
		{"existing 0444", func(t *testing.T, dir string) (string, fs.FileMode) {
			p := filepath.Join(dir, "journal")
			writeFile(t, p, "old", 0o444)
			return p, 0o444
		}},
		{"existing 0000", func(t *testing.T, dir string) (string, fs.FileMode) {
			if os.Geteuid() != 0 {
				t.Skip("cannot read back an unreadable file unless root")
			}
			p := filepath.Join(dir, "journal")
			writeFile(t, p, "old", 0)
			return p, 0
		}},
		{"empty existing file", func(t *testing.T, dir string) (string, fs.FileMode) {
			p := filepath.Join(dir, "journal")
			writeFile(t, p, "", 0o640)
			return p, 0o640
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := setup(t)
			path, mode := c.setup(t, dir)
			existed := true
			if _, err := os.Lstat(path); err != nil {
				existed = false
			}
			if !existed {
				mode = newFileMode()
			}
			if err := Rewrite(path, fill("new")); err != nil {
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

func TestRewriteSymlink(t *testing.T) {
	for _, dangling := range []bool{false, true} {
		name := "link to a file"
		if dangling {
			name = "dangling link"
		}
		t.Run(name, func(t *testing.T) {
			dir := setup(t)
			target := filepath.Join(dir, "elsewhere")
			if !dangling {
				writeFile(t, target, "precious", 0o600)
			}
			path := filepath.Join(dir, "journal")
			symlink(t, target, path)
			if err := Rewrite(path, fill("new")); err != nil {
				t.Fatal(err)
			}
			if m := lstatMode(t, path); !m.IsRegular() {
				t.Errorf("%s is now %v, want a regular file", path, m)
			}
			if m := lstatMode(t, path); m != newFileMode() {
				t.Errorf("mode %v, want a new file's %v", m, newFileMode())
			}
			if got := readFile(t, path); got != "new" {
				t.Errorf("content %q", got)
			}
			if dangling {
				if _, err := os.Lstat(target); err == nil {
					t.Error("the link's target was created")
				}
			} else {
				if got := readFile(t, target); got != "precious" {
					t.Errorf("the link's target changed to %q", got)
				}
				if m := lstatMode(t, target); m != 0o600 {
					t.Errorf("the link's target mode changed to %v", m)
				}
			}
			noLeftovers(t, dir)
		})
	}
}

func TestRewriteRefuses(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) string
		want  string
	}{
		{"FIFO", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "fifo")
			mkfifo(t, p)
			return p
		}, "not a regular file"},
		{"directory", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "d")
			mkdir(t, p)
			writeFile(t, filepath.Join(p, "inside"), "x", 0o644)
			return p
		}, "not a regular file"},
		{"missing directory", func(t *testing.T, dir string) string {
			return filepath.Join(dir, "nodir", "journal")
		}, "no such file or directory"},
		{"parent is a file", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "file"), "f", 0o644)
			return filepath.Join(dir, "file", "journal")
		}, "not a directory"},
		{"unwritable directory", func(t *testing.T, dir string) string {
			if os.Geteuid() == 0 {
				t.Skip("root writes in a directory of mode 0500")
			}
			d := filepath.Join(dir, "ro")
			mkdir(t, d)
			writeFile(t, filepath.Join(d, "journal"), "old", 0o644)
			os.Chmod(d, 0o500)
			t.Cleanup(func() { os.Chmod(d, 0o755) })
			return filepath.Join(d, "journal")
		}, "permission denied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := setup(t)
			path := c.setup(t, dir)
			before := snapshot(t, dir)
			called := false
			err := Rewrite(path, func(w *bufio.Writer) error {
				called = true
				_, err := w.WriteString("new")
				return err
			})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Rewrite() = %v, want an error naming %s and containing %q", err, path, c.want)
			}
			if called {
				t.Error("fill was called")
			}
			sameSnapshot(t, before, snapshot(t, dir))
			noLeftovers(t, dir)
		})
	}
}

func TestRewriteFillError(t *testing.T) {
	dir := setup(t)
	path := filepath.Join(dir, "journal")
	writeFile(t, path, "old", 0o600)
	symlink(t, "journal", filepath.Join(dir, "link"))
	before := snapshot(t, dir)
	boom := errors.New("boom")
	for _, p := range []string{path, filepath.Join(dir, "link"), filepath.Join(dir, "new")} {
		err := Rewrite(p, func(w *bufio.Writer) error {
			w.WriteString(strings.Repeat("partial", 1<<14))
			return boom
		})
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), p) {
			t.Errorf("Rewrite(%s) = %v, want boom naming the path", p, err)
		}
	}
	sameSnapshot(t, before, snapshot(t, dir))
	noLeftovers(t, dir)
}
