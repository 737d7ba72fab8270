package safeio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// within runs f, failing the test if it has not returned in time (a
// FIFO or device that blocks).
func within[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s blocked", what)
		var zero T
		return zero
	}
}

type readResult struct {
	data []byte
	err  error
}

func TestReadFile(t *testing.T) {
	dir := setup(t)
	path := filepath.Join(dir, "model.json")
	writeFile(t, path, "0123456789", 0o644)
	symlink(t, "model.json", filepath.Join(dir, "link"))
	empty := filepath.Join(dir, "empty")
	writeFile(t, empty, "", 0o644)
	for _, c := range []struct {
		path string
		max  int64
	}{
		{path, 0}, {path, -1}, {path, 10}, {path, 11}, {path, 1 << 40},
		{filepath.Join(dir, "link"), 10}, {empty, 1}, {empty, 0},
	} {
		b, err := ReadFile(c.path, "model", c.max)
		want := "0123456789"
		if c.path == empty {
			want = ""
		}
		if err != nil || string(b) != want {
			t.Errorf("ReadFile(%s, %d) = %q, %v", c.path, c.max, b, err)
		}
	}
}

func TestOpenTooLarge(t *testing.T) {
	dir := setup(t)
	path := filepath.Join(dir, "model.json")
	writeFile(t, path, "0123456789", 0o644)
	for _, max := range []int64{1, 5, 9} {
		b, err := ReadFile(path, "the model", max)
		var tl *TooLarge
		if !errors.As(err, &tl) {
			t.Fatalf("ReadFile(max %d) = %q, %v; want *TooLarge", max, b, err)
		}
		if tl.Size != 10 || tl.Max != max || tl.Streamed || tl.What != "the model "+path || tl.LimitFlags != LimitFlag {
			t.Errorf("max %d: %+v", max, tl)
		}
		if b != nil {
			t.Errorf("data returned with the error: %q", b)
		}
		msg := err.Error()
		for _, w := range []string{"the model " + path, "is 10 bytes", "over the limit of", "--max-memory raises it"} {
			if !strings.Contains(msg, w) {
				t.Errorf("%q lacks %q", msg, w)
			}
		}
	}
}

// TestOpenGrowingFile: a file that grows after Open is stopped by the
// reader's limit.
func TestOpenGrowingFile(t *testing.T) {
	dir := setup(t)
	path := filepath.Join(dir, "log")
	writeFile(t, path, "12345", 0o644)
	r, err := Open(path, "the log", 8)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.Repeat("x", 100))
	f.Close()
	b, err := io.ReadAll(r)
	var tl *TooLarge
	if !errors.As(err, &tl) || !tl.Streamed || tl.Max != 8 {
		t.Fatalf("got %d bytes, %v; want *TooLarge (streamed)", len(b), err)
	}
	if len(b) > 9 {
		t.Errorf("read %d bytes past a limit of 8", len(b))
	}
	if !strings.Contains(err.Error(), "larger than the limit of 8 bytes") {
		t.Errorf("message %q", err)
	}
	// Reading again still fails.
	if _, err := r.Read(make([]byte, 10)); !errors.As(err, &tl) {
		t.Errorf("second read: %v", err)
	}
}

func TestOpenRefuses(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) string
		want  string
	}{
		{"missing", func(t *testing.T, dir string) string {
			return filepath.Join(dir, "missing")
		}, "does not exist"},
		{"missing directory", func(t *testing.T, dir string) string {
			return filepath.Join(dir, "nodir", "x")
		}, "does not exist"},
		{"directory", func(t *testing.T, dir string) string {
			return dir
		}, "is a directory"},
		{"symlink to a directory", func(t *testing.T, dir string) string {
			mkdir(t, filepath.Join(dir, "d"))
			symlink(t, "d", filepath.Join(dir, "l"))
			return filepath.Join(dir, "l")
		}, "is a directory"},
		{"FIFO without a writer", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "fifo")
			mkfifo(t, p)
			return p
		}, "a named pipe"},
		{"FIFO behind a symlink", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "fifo")
			mkfifo(t, p)
			symlink(t, "fifo", filepath.Join(dir, "l"))
			return filepath.Join(dir, "l")
		}, "a named pipe"},
		{"FIFO with a writer", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "fifo")
			mkfifo(t, p)
			// O_RDWR never blocks on Linux and keeps a writer open.
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Skip(err)
			}
			t.Cleanup(func() { f.Close() })
			return p
		}, "a named pipe"},
		{"/dev/zero", func(t *testing.T, dir string) string {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Skip(err)
			}
			return "/dev/zero"
		}, "a character device"},
		{"/dev/null", func(t *testing.T, dir string) string {
			return os.DevNull
		}, "a character device"},
		{"socket", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "sock")
			l, err := net.Listen("unix", p)
			if err != nil {
				t.Skipf("cannot make a unix socket: %v", err)
			}
			t.Cleanup(func() { l.Close() })
			return p
		}, "cannot read"},
		{"file in place of a directory", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "f"), "x", 0o644)
			return filepath.Join(dir, "f", "x")
		}, "not a directory"},
		{"unreadable file", func(t *testing.T, dir string) string {
			if os.Geteuid() == 0 {
				t.Skip("root reads a file of mode 0000")
			}
			p := filepath.Join(dir, "secret")
			writeFile(t, p, "x", 0)
			return p
		}, "permission denied"},
	}
	for _, c := range cases {
		for _, max := range []int64{0, 100} {
			t.Run(fmt.Sprintf("%s/max=%d", c.name, max), func(t *testing.T) {
				dir := setup(t)
				path := c.setup(t, dir)
				res := within(t, "ReadFile", func() readResult {
					b, err := ReadFile(path, "the input", max)
					return readResult{b, err}
				})
				if res.err == nil || !strings.Contains(res.err.Error(), c.want) || !strings.Contains(res.err.Error(), "the input") {
					t.Fatalf("ReadFile(%s) = %d bytes, %v; want an error containing %q", path, len(res.data), res.err, c.want)
				}
				r := within(t, "Open", func() readResult {
					r, err := Open(path, "the input", max)
					if r != nil {
						r.Close()
						return readResult{[]byte("opened"), err}
					}
					return readResult{nil, err}
				})
				if r.err == nil || r.data != nil {
					t.Errorf("Open(%s) = %q, %v", path, r.data, r.err)
				}
			})
		}
	}
}

// withStdin replaces os.Stdin with a pipe that writer fills and closes.
func withStdin(t *testing.T, data string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdin
	os.Stdin = r
	t.Cleanup(func() {
		os.Stdin = saved
		r.Close()
	})
	go func() {
		w.WriteString(data)
		w.Close()
	}()
}

func TestStdin(t *testing.T) {
	data := strings.Repeat("abcdefghij", 10000) // 100000 bytes, over a pipe's buffer
	for _, c := range []struct {
		max     int64
		tooLong bool
	}{
		{0, false}, {-5, false}, {100000, false}, {100001, false}, {1 << 30, false},
		{99999, true}, {1, true}, {65536, true},
	} {
		withStdin(t, data)
		res := within(t, "ReadFile(-)", func() readResult {
			b, err := ReadFile("-", "the model", c.max)
			return readResult{b, err}
		})
		if !c.tooLong {
			if res.err != nil || string(res.data) != data {
				t.Errorf("max %d: %d bytes, %v", c.max, len(res.data), res.err)
			}
			continue
		}
		var tl *TooLarge
		if !errors.As(res.err, &tl) {
			t.Errorf("max %d: %d bytes, %v; want *TooLarge", c.max, len(res.data), res.err)
			continue
		}
		if !tl.Streamed || tl.Max != c.max || tl.What != "the model (standard input)" {
			t.Errorf("max %d: %+v", c.max, tl)
		}
		if int64(len(res.data)) > c.max+1 {
			t.Errorf("max %d: read %d bytes", c.max, len(res.data))
		}
		if !strings.Contains(res.err.Error(), "the model (standard input) is larger than the limit of") {
			t.Errorf("message %q", res.err)
		}
	}
}

// TestStdinNotClosed: closing the reader of "-" leaves standard input open.
func TestStdinNotClosed(t *testing.T) {
	withStdin(t, "first")
	r, err := Open("-", "x", 0)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2)
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(os.Stdin)
	if err != nil || string(rest) != "rst" {
		t.Errorf("standard input after Close: %q, %v", rest, err)
	}
}

func TestWithContext(t *testing.T) {
	t.Run("not canceled", func(t *testing.T) {
		b, err := io.ReadAll(WithContext(context.Background(), strings.NewReader("all of it")))
		if err != nil || string(b) != "all of it" {
			t.Errorf("%q, %v", b, err)
		}
	})
	t.Run("canceled before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		n, err := WithContext(ctx, strings.NewReader("data")).Read(make([]byte, 4))
		if n != 0 || !errors.Is(err, context.Canceled) {
			t.Errorf("%d, %v", n, err)
		}
	})
	t.Run("canceled while reading", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := WithContext(ctx, strings.NewReader(strings.Repeat("x", 100)))
		buf := make([]byte, 10)
		if n, err := r.Read(buf); n != 10 || err != nil {
			t.Fatalf("%d, %v", n, err)
		}
		cancel()
		if n, err := r.Read(buf); n != 0 || !errors.Is(err, context.Canceled) {
			t.Errorf("after cancel: %d, %v", n, err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
		defer cancel()
		<-ctx.Done()
		_, err := io.ReadAll(WithContext(ctx, strings.NewReader("x")))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%v", err)
		}
	})
	t.Run("over a limited file", func(t *testing.T) {
		dir := setup(t)
		path := filepath.Join(dir, "f")
		writeFile(t, path, strings.Repeat("y", 1000), 0o644)
		r, err := Open(path, "f", 2000)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		ctx, cancel := context.WithCancel(context.Background())
		cr := WithContext(ctx, r)
		buf := make([]byte, 100)
		if _, err := cr.Read(buf); err != nil {
			t.Fatal(err)
		}
		cancel()
		if _, err := io.ReadAll(cr); !errors.Is(err, context.Canceled) {
			t.Errorf("%v", err)
		}
	})
}

func TestTooLargeError(t *testing.T) {
	for _, c := range []struct {
		e    TooLarge
		want string
	}{
		{TooLarge{What: "the model m.json", Size: 3 << 20, Max: 1 << 20, LimitFlags: "--max-memory"},
			"the model m.json is 3.0 MB, over the limit of 1.0 MB (--max-memory raises it)"},
		{TooLarge{What: "the model m.json", Size: 3 << 20, Max: 1 << 20},
			"the model m.json is 3.0 MB, over the limit of 1.0 MB"},
		{TooLarge{What: "stdin", Max: 512, Streamed: true, LimitFlags: "--max-bytes"},
			"stdin is larger than the limit of 512 bytes (--max-bytes raises it)"},
		{TooLarge{What: "stdin", Max: 5 << 30, Streamed: true},
			"stdin is larger than the limit of 5.0 GB"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0 bytes"},
		{1023, "1023 bytes"},
		{1024, "1.0 kB"},
		{1536, "1.5 kB"},
		{1<<20 - 1, "1024.0 kB"},
		{1 << 20, "1.0 MB"},
		{12*(1<<20) + 300*(1<<10), "12.3 MB"},
		{1 << 30, "1.0 GB"},
		{5 << 40, "5120.0 GB"},
	} {
		if got := Bytes(c.n); got != c.want {
			t.Errorf("Bytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
