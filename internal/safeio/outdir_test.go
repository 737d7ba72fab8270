package safeio

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// TestReplaceOwnership: Replace writes new files and files it wrote
// itself, and refuses every other file in their place, before fill runs.
func TestReplaceOwnership(t *testing.T) {
	dir := setup(t)
	path := filepath.Join(dir, "table.csv")
	if err := Replace(path, fill("one")); err != nil {
		t.Fatal(err)
	}
	if err := Replace(path, fill("two")); err != nil {
		t.Fatalf("dstein's own file was refused: %v", err)
	}
	if got := readFile(t, path); got != "two" {
		t.Errorf("content %q", got)
	}
	m, err := readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The record keeps the content before the last replacement too (see
	// manifest.Files).
	if e := m.Files["table.csv"]; len(e.SHA256) != 2 || e.SHA256[0] != digest("one") || e.SHA256[1] != digest("two") {
		t.Errorf("record %v", e)
	}
	// The same content again: one digest.
	if err := Replace(path, fill("two")); err != nil {
		t.Fatal(err)
	}
	if m, _ := readManifest(dir); len(m.Files["table.csv"].SHA256) != 1 {
		t.Errorf("record %v after writing the same content", m.Files["table.csv"])
	}
	// Changed by the user since: refused, untouched.
	writeFile(t, path, "my edit", 0o644)
	var f *Foreign
	called := false
	err = Replace(path, func(w *bufio.Writer) error { called = true; return nil })
	if !errors.As(err, &f) || !strings.Contains(err.Error(), "has changed since dstein wrote it") || called {
		t.Errorf("an edited file: %v (fill called: %v)", err, called)
	}
	if got := readFile(t, path); got != "my edit" {
		t.Errorf("the user's edit was replaced by %q", got)
	}
}

func TestReplaceRefusesForeign(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) string
		want  string
	}{
		{"user's file", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "fig.png")
			writeFile(t, p, "mine", 0o644)
			return p
		}, "was not written by dstein"},
		{"user's file beside dstein's", func(t *testing.T, dir string) string {
			if err := Replace(filepath.Join(dir, "a.csv"), fill("a")); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "b.csv")
			writeFile(t, p, "mine", 0o644)
			return p
		}, "was not written by dstein"},
		{"copy of dstein's file under another name", func(t *testing.T, dir string) string {
			if err := Replace(filepath.Join(dir, "a.csv"), fill("a")); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "b.csv")
			writeFile(t, p, "a", 0o644)
			return p
		}, "was not written by dstein"},
		{"symbolic link", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "target"), "precious", 0o644)
			p := filepath.Join(dir, "fig.svg")
			symlink(t, filepath.Join(dir, "target"), p)
			return p
		}, "symbolic link"},
		{"link to dstein's own file", func(t *testing.T, dir string) string {
			if err := Replace(filepath.Join(dir, "fig.svg"), fill("x")); err != nil {
				t.Fatal(err)
			}
			os.Rename(filepath.Join(dir, "fig.svg"), filepath.Join(dir, "kept.svg"))
			symlink(t, "kept.svg", filepath.Join(dir, "fig.svg"))
			return filepath.Join(dir, "fig.svg")
		}, "symbolic link"},
		{"FIFO", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "fifo")
			mkfifo(t, p)
			return p
		}, "named pipe"},
		{"directory", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "d")
			mkdir(t, p)
			return p
		}, "is a directory"},
		{"damaged record", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, ManifestName), `{"format": "dstein.files", "files": {`, 0o644)
			return filepath.Join(dir, "new.csv")
		}, "is damaged"},
		{"record of someone else", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, ManifestName), `{"format": "other", "files": {}}`, 0o644)
			return filepath.Join(dir, "new.csv")
		}, "is damaged"},
		{"record that is a directory", func(t *testing.T, dir string) string {
			mkdir(t, filepath.Join(dir, ManifestName))
			return filepath.Join(dir, "new.csv")
		}, "not a regular file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := setup(t)
			path := c.setup(t, dir)
			before := snapshot(t, dir)
			if err := Owned(path); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Owned() = %v, want %q", err, c.want)
			}
			called := false
			err := Replace(path, func(w *bufio.Writer) error { called = true; return nil })
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), filepath.Dir(path)) {
				t.Errorf("Replace() = %v, want an error naming the path and containing %q", err, c.want)
			}
			if called {
				t.Error("fill was called")
			}
			sameSnapshot(t, before, snapshot(t, dir))
			noLeftovers(t, dir)
		})
	}
}

// TestReplaceRaceWithUser: a file put in place after the first check
// (while the content was being written) is still not replaced.
func TestReplaceRaceWithUser(t *testing.T) {
	dir := setup(t)
	path := filepath.Join(dir, "fig.png")
	err := Replace(path, func(w *bufio.Writer) error {
		writeFile(t, path, "mine", 0o644)
		_, err := w.WriteString("dstein's")
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "was not written by dstein") {
		t.Errorf("Replace() = %v", err)
	}
	if got := readFile(t, path); got != "mine" {
		t.Errorf("content %q", got)
	}
	noLeftovers(t, dir)
}

// TestReplaceConcurrent: many replacements in one directory at once keep
// a record of every file (the directory lock serialises the record).
func TestReplaceConcurrent(t *testing.T) {
	dir := setup(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for k := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 4 {
				if err := Replace(filepath.Join(dir, fmt.Sprintf("f%d", k)), fill(fmt.Sprint(k, r))); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for k := range 16 {
		if err := Owned(filepath.Join(dir, fmt.Sprintf("f%d", k))); err != nil {
			t.Error(err)
		}
	}
}

// TestManifestBytes: the record lists files in sorted order, so the same
// files give the same bytes, and it is read back strictly.
func TestManifestBytes(t *testing.T) {
	a, b := setup(t), setup(t)
	for _, n := range []string{"z", "a", "m"} {
		Replace(filepath.Join(a, n), fill(n))
	}
	for _, n := range []string{"m", "z", "a"} {
		Replace(filepath.Join(b, n), fill(n))
	}
	if x, y := readFile(t, filepath.Join(a, ManifestName)), readFile(t, filepath.Join(b, ManifestName)); x != y {
		t.Errorf("records differ:\n%s\n%s", x, y)
	}
}

func TestSetAside(t *testing.T) {
	dir := setup(t)
	p, side := filepath.Join(dir, "j.csv"), filepath.Join(dir, "j.json")
	writeFile(t, filepath.Join(dir, "j.csv.old"), "user's", 0o644)
	for k, want := range []string{".old.2", ".old.3"} {
		writeFile(t, p, fmt.Sprint("journal ", k), 0o644)
		writeFile(t, side, fmt.Sprint("settings ", k), 0o644)
		got, err := SetAside(p, side)
		if err != nil || len(got) != 2 || got[0] != p+want || got[1] != side+want {
			t.Fatalf("SetAside() = %v, %v; want the suffix %s for both", got, err, want)
		}
		if readFile(t, got[0]) != fmt.Sprint("journal ", k) || readFile(t, got[1]) != fmt.Sprint("settings ", k) {
			t.Error("wrong content set aside")
		}
	}
	if readFile(t, filepath.Join(dir, "j.csv.old")) != "user's" {
		t.Error("an existing .old was replaced")
	}
	if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Error("the file is still in place")
	}
	// A missing file of the pair is skipped.
	writeFile(t, p, "alone", 0o644)
	if got, err := SetAside(p, side); err != nil || len(got) != 1 || got[0] != p+".old.4" {
		t.Errorf("SetAside() of one file = %v, %v", got, err)
	}
}

func TestMakeDirRemoveEmpty(t *testing.T) {
	dir := setup(t)
	created, err := MakeDir(filepath.Join(dir, "a", "b", "c"))
	if err != nil || len(created) != 3 || created[0] != filepath.Join(dir, "a") {
		t.Fatalf("MakeDir() = %v, %v", created, err)
	}
	writeFile(t, filepath.Join(dir, "a", "kept"), "x", 0o644)
	RemoveEmpty(created)
	if _, err := os.Stat(filepath.Join(dir, "a", "b")); err == nil {
		t.Error("empty a/b was not removed")
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "kept")); err != nil {
		t.Error("a directory that holds a file was removed")
	}
	if c, err := MakeDir(filepath.Join(dir, "a")); err != nil || len(c) != 0 {
		t.Errorf("an existing directory: %v, %v", c, err)
	}
	if _, err := MakeDir(filepath.Join(dir, "a", "kept", "x")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("under a file: %v", err)
	}
}

func TestTryLock(t *testing.T) {
	dir := setup(t)
	p := filepath.Join(dir, "x.lock")
	l, err := TryLock(p)
	if err != nil {
		t.Fatal(err)
	}
	var busy *Busy
	if _, err := TryLock(p); !errors.As(err, &busy) {
		t.Errorf("a held lock was taken again: %v", err)
	}
	l.Unlock()
	if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Error("the lock file was left")
	}
	l2, err := TryLock(p)
	if err != nil {
		t.Fatal(err)
	}
	l2.Unlock()
	symlink(t, filepath.Join(dir, "elsewhere"), p)
	if _, err := TryLock(p); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a link in place of the lock: %v", err)
	}
}

// TestFIFOWithoutReaderCanceled: a FIFO output that nobody reads does not
// hold Commit past the context's end, and stays a FIFO.
func TestFIFOWithoutReaderCanceled(t *testing.T) {
	dir := setup(t)
	path := filepath.Join(dir, "fifo")
	mkfifo(t, path)
	p := NewPlan()
	f := p.Output(path, "--out")
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	if err := f.Write(fill("data")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() { done <- p.CommitContext(ctx) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("CommitContext() = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second): // generous: busy machines
		t.Fatal("CommitContext still waits on the FIFO 10 s after the cancel")
	}
	if m := lstatMode(t, path); m&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is now %v", m)
	}
	noLeftovers(t, dir)
}

// TestFIFOReaderStopsReading: a reader that opens the FIFO and never
// reads does not hold Commit past the context's end either.
func TestFIFOReaderStopsReading(t *testing.T) {
	dir := setup(t)
	path := filepath.Join(dir, "fifo")
	mkfifo(t, path)
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := NewPlan()
	f := p.Output(path, "--out")
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	if err := f.Write(fill(strings.Repeat("x", 1<<20))); err != nil { // over the pipe's buffer
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() { done <- p.CommitContext(ctx) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("CommitContext() = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("CommitContext still writes to the FIFO 10 s after the cancel")
	}
}

// TestBatchCanceled: a batch whose context ends before its commit writes
// nothing, and leaves no temporary file.
func TestBatchCanceled(t *testing.T) {
	dir := setup(t)
	if err := Replace(filepath.Join(dir, "a.csv"), fill("old a")); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	var b Batch
	for _, n := range []string{"a.csv", "b.png", "c.svg"} {
		if err := b.Replace(filepath.Join(dir, n), fill("new "+n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Rewrite(filepath.Join(dir, "j.csv"), fill("journal")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.Commit(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Commit() = %v, want context.Canceled", err)
	}
	sameSnapshot(t, before, snapshot(t, dir))
	noLeftovers(t, dir)
}

// TestBatchWaitsForTheDirectoryLock: a commit waits while another process
// (here another descriptor) holds the directory's lock, stops when its
// context ends, and writes nothing then.
func TestBatchWaitsForTheDirectoryLock(t *testing.T) {
	dir := setup(t)
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX); err != nil {
		t.Skipf("no flock on directories here: %v", err)
	}
	var b Batch
	if err := b.Replace(filepath.Join(dir, "a.csv"), fill("a")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() { done <- b.Commit(ctx) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Commit() = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Commit still waits 10 s after its context ended")
	}
	if _, err := os.Lstat(filepath.Join(dir, "a.csv")); err == nil {
		t.Error("a.csv was written")
	}
	noLeftovers(t, dir)
	// Once the lock is free, a commit goes through.
	syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
	if err := Replace(filepath.Join(dir, "a.csv"), fill("a")); err != nil {
		t.Fatal(err)
	}
}

// TestBatchRemove: an owned file is removed with its record; a changed
// one is refused.
func TestBatchRemove(t *testing.T) {
	dir := setup(t)
	for _, n := range []string{"a", "b"} {
		if err := Replace(filepath.Join(dir, n), fill(n)); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, "b"), "edited", 0o644)
	var b Batch
	if err := b.Remove(filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	if err := b.Remove(filepath.Join(dir, "b")); err == nil {
		t.Error("an edited file may be removed")
	}
	if err := b.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "a")); err == nil {
		t.Error("a was not removed")
	}
	if m, _ := readManifest(dir); m.Files["a"].SHA256 != nil {
		t.Error("a's record was kept")
	}
	if readFile(t, filepath.Join(dir, "b")) != "edited" {
		t.Error("b changed")
	}
}

// TestTryLockForeignContent: a user's file in the place of a lock is
// refused and kept; an empty one or a stale dstein lock is taken and
// removed after.
func TestTryLockForeignContent(t *testing.T) {
	dir := setup(t)
	p := filepath.Join(dir, "x.lock")
	writeFile(t, p, "my notes", 0o644)
	var f *Foreign
	if _, err := TryLock(p); !errors.As(err, &f) {
		t.Errorf("TryLock over a user's file = %v", err)
	}
	if readFile(t, p) != "my notes" {
		t.Error("the user's file changed")
	}
	for _, stale := range []string{"", "dstein lock, pid 1\n"} {
		writeFile(t, p, stale, 0o644)
		l, err := TryLock(p)
		if err != nil {
			t.Fatalf("TryLock over %q: %v", stale, err)
		}
		if !strings.HasPrefix(readFile(t, p), "dstein lock") {
			t.Error("the lock file does not say whose it is")
		}
		l.Unlock()
		if _, err := os.Lstat(p); err == nil {
			t.Error("the lock file was left")
		}
	}
}
