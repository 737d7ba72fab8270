package safeio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
)

// critical is held (shared) while files are renamed into place, so that a
// process that must exit at once (Freeze) never stops between the renames
// of one commit.
var critical sync.RWMutex

// live holds what a process that exits at once must clean up: the
// temporary files not yet renamed or removed, and the locks held.
var live struct {
	sync.Mutex
	temps map[string]bool
	dirs  map[string]bool
	locks map[*Lock]bool
}

// TempDir makes a scratch directory (os.MkdirTemp) that Freeze removes
// with all it holds; RemoveTempDir removes it otherwise.
func TempDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", err
	}
	live.Lock()
	if live.dirs == nil {
		live.dirs = map[string]bool{}
	}
	live.dirs[dir] = true
	live.Unlock()
	return dir, nil
}

// RemoveTempDir removes a directory made by TempDir and all it holds.
func RemoveTempDir(dir string) {
	live.Lock()
	delete(live.dirs, dir)
	live.Unlock()
	os.RemoveAll(dir)
}

func keepTemp(name string) {
	live.Lock()
	if live.temps == nil {
		live.temps = map[string]bool{}
	}
	live.temps[name] = true
	live.Unlock()
}

func forgetTemp(name string) {
	live.Lock()
	delete(live.temps, name)
	live.Unlock()
}

// Freeze waits for the renames under way to finish and stops any more from
// starting (it never gives the hold back), then removes the temporary
// files of outputs not yet in place and gives up the locks held (removing
// their files). A command calls it just before it exits without returning
// (a second Ctrl-C, or a phase that did not stop in time): what it had not
// committed is not written, and nothing of it is left behind.
func Freeze() {
	critical.Lock()
	live.Lock()
	defer live.Unlock()
	for name := range live.temps {
		os.Remove(name)
	}
	live.temps = nil
	for dir := range live.dirs {
		os.RemoveAll(dir)
	}
	live.dirs = nil
	for l := range live.locks {
		l.release()
	}
	live.locks = nil
}

// Busy is the error of a lock that another process holds.
type Busy struct{ Path string }

func (e *Busy) Error() string { return e.Path + " is held by another process" }

// Lock is a held lock file.
type Lock struct{ f *os.File }

// lockMark starts the content of the lock files dstein writes.
const lockMark = "dstein lock"

// TryLock takes an exclusive lock on the file path (flock, without
// waiting), creating the file if needed; it returns *Busy when another
// process holds it. The lock ends when Unlock is called or the process
// ends, however it ends. The file holds "dstein lock" and the process id
// while held; Unlock removes it. A lock taken on a file that its holder
// removed meanwhile is taken again on the new file, so that two processes
// never both hold the lock of one path. An existing file at path is used
// only when it is empty or a lock file of dstein's (left by a process that
// was killed); anything else there (a file of the user's, a symbolic link,
// a directory) is refused as *Foreign.
func TryLock(path string) (*Lock, error) {
	for {
		info, err := os.Lstat(path)
		if err == nil {
			if !info.Mode().IsRegular() {
				return nil, &Foreign{path, "is in the place of a lock file and is " + describeMode(info.Mode())}
			}
			if info.Size() > 0 && !isLockFile(path) {
				return nil, &Foreign{path, "is in the place of a lock file and is not one of dstein's"}
			}
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
		if err1 != nil || err2 != nil || !os.SameFile(held, now) {
			f.Close() // removed or replaced since it was opened: try again
			continue
		}
		if held.Size() > 0 && !isLockFile(path) {
			f.Close()
			return nil, &Foreign{path, "is in the place of a lock file and is not one of dstein's"}
		}
		f.Truncate(0)
		f.WriteAt([]byte(fmt.Sprintf("%s, pid %d\n", lockMark, os.Getpid())), 0)
		l := &Lock{f}
		live.Lock()
		if live.locks == nil {
			live.locks = map[*Lock]bool{}
		}
		live.locks[l] = true
		live.Unlock()
		return l, nil
	}
}

// isLockFile reports whether path starts as dstein's lock files do.
func isLockFile(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(lockMark))
	n, _ := io.ReadFull(f, head)
	return string(head[:n]) == lockMark
}

// Name is the lock file's path.
func (l *Lock) Name() string { return l.f.Name() }

// Unlock removes the lock file (when it is still the one held) and
// releases the lock.
func (l *Lock) Unlock() {
	if l == nil {
		return
	}
	live.Lock()
	delete(live.locks, l)
	live.Unlock()
	l.release()
}

func (l *Lock) release() {
	if l.f == nil {
		return
	}
	if held, err := l.f.Stat(); err == nil {
		if now, err := os.Lstat(l.f.Name()); err == nil && os.SameFile(held, now) {
			os.Remove(l.f.Name())
		}
	}
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
