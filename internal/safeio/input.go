package safeio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// TooLarge is the error of an input over its size limit.
type TooLarge struct {
	What       string
	Size, Max  int64
	Streamed   bool // Size is a lower bound: the input was read until the limit
	LimitFlags string
}

func (e *TooLarge) Error() string {
	if e.Streamed {
		return fmt.Sprintf("%s is larger than the limit of %s%s", e.What, Bytes(e.Max), e.hint())
	}
	return fmt.Sprintf("%s is %s, over the limit of %s%s", e.What, Bytes(e.Size), Bytes(e.Max), e.hint())
}

func (e *TooLarge) hint() string {
	if e.LimitFlags == "" {
		return ""
	}
	return " (" + e.LimitFlags + " raises it)"
}

// Bytes formats a byte count for messages ("12.3 MB").
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// LimitFlag is the flag named in size refusals.
var LimitFlag = "--max-memory"

// Open opens an input file for reading at most max bytes (max ≤ 0: no
// limit): a regular file, or standard input for "-". It refuses
// directories, FIFOs, devices and sockets without blocking on them. Reading
// more than max bytes from the returned reader fails with *TooLarge.
func Open(path, what string, max int64) (io.ReadCloser, error) {
	if path == "-" {
		return &limited{r: os.Stdin, max: max, what: what + " (standard input)"}, nil
	}
	// O_NONBLOCK: opening a FIFO must not wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s %s does not exist", what, path)
		}
		return nil, fmt.Errorf("cannot read %s %s: %w", what, path, errors.Unwrap(err))
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot read %s %s: %w", what, path, err)
	}
	switch {
	case info.IsDir():
		f.Close()
		return nil, fmt.Errorf("%s %s is a directory; want a file", what, path)
	case !info.Mode().IsRegular():
		f.Close()
		return nil, fmt.Errorf("%s %s is not a regular file (%s); dstein reads inputs from regular files only", what, path, kind(info.Mode()))
	case max > 0 && info.Size() > max:
		f.Close()
		return nil, &TooLarge{What: fmt.Sprintf("%s %s", what, path), Size: info.Size(), Max: max, LimitFlags: LimitFlag}
	}
	return &limited{r: f, c: f, max: max, what: fmt.Sprintf("%s %s", what, path)}, nil
}

// ReadFile reads a whole input file with Open's checks and limit.
func ReadFile(path, what string, max int64) ([]byte, error) {
	r, err := Open(path, what, max)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

type limited struct {
	r    io.Reader
	c    io.Closer
	max  int64
	n    int64
	what string
}

func (l *limited) Read(p []byte) (int, error) {
	if l.max > 0 {
		if l.n > l.max {
			return 0, &TooLarge{What: l.what, Max: l.max, Streamed: true, LimitFlags: LimitFlag}
		}
		if rem := l.max + 1 - l.n; int64(len(p)) > rem {
			p = p[:rem]
		}
	}
	k, err := l.r.Read(p)
	l.n += int64(k)
	if l.max > 0 && l.n > l.max {
		return k, &TooLarge{What: l.what, Max: l.max, Streamed: true, LimitFlags: LimitFlag}
	}
	return k, err
}

func (l *limited) Close() error {
	if l.c != nil {
		return l.c.Close()
	}
	return nil
}

// WithContext returns a reader that fails with ctx's error once ctx is
// canceled, so that a long parse of an input stops on Ctrl-C.
func WithContext(ctx context.Context, r io.Reader) io.Reader { return &ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
