package safeio

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// critical is held (shared) while files are renamed into place, so that a
// process that must exit at once (Freeze) never stops between the renames
// of one commit.
var critical sync.RWMutex

// Freeze waits for the renames under way to finish and stops any more from
// starting; it never returns the hold. A command calls it just before it
// exits without returning (a second Ctrl-C, or a phase that did not stop
// in time).
func Freeze() { critical.Lock() }

// Busy is the error of a lock that another process holds.
type Busy struct{ Path string }

func (e *Busy) Error() string { return e.Path + " is held by another process" }

// Lock is a held lock file.
type Lock struct{ f *os.File }

// TryLock takes an exclusive lock on the file path (flock, without
// waiting), creating the file if needed; it returns *Busy when another
// process holds it. The lock ends when Unlock is called or the process
// ends, however it ends. Unlock removes the file; a lock taken on a file
// that its holder removed meanwhile is taken again on the new file, so
// that two processes never both hold the lock of one path. A symbolic
// link or a non-regular file at path is refused.
func TryLock(path string) (*Lock, error) {
	for {
		info, err := os.Lstat(path)
		if err == nil && !info.Mode().IsRegular() {
			return nil, &Foreign{path, "is in the place of a lock file and is " + describeMode(info.Mode())}
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			return nil, fmt.Errorf("creating the lock file %s: %w", path, errors.Unwrap(err))
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, &Busy{path}
			}
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		held, err1 := f.Stat()
		now, err2 := os.Lstat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return &Lock{f}, nil
		}
		f.Close() // removed or replaced since it was opened: try again
	}
}

// Name is the lock file's path.
func (l *Lock) Name() string { return l.f.Name() }

// Unlock removes the lock file and releases the lock.
func (l *Lock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	os.Remove(l.f.Name())
	l.f.Close()
	l.f = nil
}

func describeMode(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	}
	return kind(m)
}
