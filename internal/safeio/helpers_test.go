package safeio

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

var (
	umaskOnce sync.Once
	umaskVal  fs.FileMode
)

// newFileMode is the mode of a file created with 0666: 0666 less the umask.
func newFileMode() fs.FileMode {
	umaskOnce.Do(func() {
		m := syscall.Umask(0o022)
		syscall.Umask(m)
		umaskVal = fs.FileMode(m)
	})
	return 0o666 &^ umaskVal
}

// fill returns a fill function that writes s.
func fill(s string) func(*bufio.Writer) error {
	return func(w *bufio.Writer) error {
		_, err := w.WriteString(s)
		return err
	}
}

// setup returns a fresh directory for a test and points TMPDIR (where
// stream outputs are buffered) at a subdirectory of it, so that leftovers
// can be looked for there too.
func setup(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	tmp := filepath.Join(dir, ".tmpdir")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	return dir
}

func writeFile(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func symlink(t *testing.T, oldname, newname string) {
	t.Helper()
	if err := os.Symlink(oldname, newname); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// mkfifo makes a FIFO or skips the test when the system cannot.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
}

// leftovers lists temporary files of this package under the roots (and in
// TMPDIR): every name is a leak, since streams' buffers are unlinked at
// once.
func leftovers(t *testing.T, roots ...string) []string {
	t.Helper()
	var out []string
	roots = append(roots, os.TempDir())
	for _, root := range roots {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if n := d.Name(); strings.Contains(n, ".dstein-tmp-") || strings.HasPrefix(n, "dstein-stream-") {
				out = append(out, path)
			}
			return nil
		})
	}
	return out
}

func noLeftovers(t *testing.T, roots ...string) {
	t.Helper()
	if l := leftovers(t, roots...); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

// snapshot records the names, modes and contents of the files under root
// (symbolic links by their destination) so that a test can check that
// nothing changed.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		info, err := os.Lstat(path)
		if err != nil {
			return nil
		}
		v := info.Mode().String()
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			dest, _ := os.Readlink(path)
			v += " -> " + dest
		case info.Mode().IsRegular():
			b, _ := os.ReadFile(path)
			v += " " + string(b)
		}
		out[path] = v
		return nil
	})
	return out
}

func sameSnapshot(t *testing.T, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed: was %q, now %q", k, v, after[k])
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s appeared: %q", k, v)
		}
	}
}

func lstatMode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode()
}
