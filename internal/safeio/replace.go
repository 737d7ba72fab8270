package safeio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Rewrite writes path through a temporary file in the same directory: fill
// writes the content, then the file is synced and renamed over path. It is
// for files inside an output directory whose content the caller has read
// and recognised as its own (a trial journal and its settings, a training
// checkpoint): it does not consult the directory's record of dstein's
// files (see Replace). It never follows a symbolic link (a link at path is
// replaced by the file), refuses to replace a directory or a non-regular
// file, and keeps an existing file's mode. On any error path is left as it
// was.
func Rewrite(path string, fill func(w *bufio.Writer) error) error {
	return rewrite(path, fill, true)
}

// rewrite is Rewrite; hold says whether to take the critical section
// around the rename (not when the caller holds it already: a read lock
// taken twice would wait on a pending Freeze).
func rewrite(path string, fill func(w *bufio.Writer) error, hold bool) error {
	f, mode, keep, err := startReplace(path)
	if err != nil {
		return err
	}
	if err := fillTemp(f, path, mode, keep, nil, fill); err != nil {
		return err
	}
	if hold {
		critical.RLock()
		defer critical.RUnlock()
	}
	defer forgetTemp(f.Name())
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// startReplace examines path (never following a link) and creates the
// temporary file beside it: mode and keep say whether an existing regular
// file's mode is to be kept.
func startReplace(path string) (f *os.File, mode fs.FileMode, keep bool, err error) {
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, 0, false, fmt.Errorf("writing %s: %w", path, err)
	case info.Mode().IsRegular():
		if err := replaceable(path, info); err != nil {
			return nil, 0, false, fmt.Errorf("writing %s: it %w", path, err)
		}
		mode, keep = info.Mode().Perm(), true
	case info.Mode()&fs.ModeSymlink != 0:
	default:
		return nil, 0, false, fmt.Errorf("writing %s: it exists and is not a regular file", path)
	}
	f, err = createTemp(path)
	if err != nil {
		return nil, 0, false, fmt.Errorf("writing %s: %w", path, err)
	}
	return f, mode, keep, nil
}

// fillTemp writes the content into the temporary file f (also into h when
// it is not nil), sets the kept mode, syncs and closes it; on error it
// removes f.
func fillTemp(f *os.File, path string, mode fs.FileMode, keep bool, h io.Writer, fill func(w *bufio.Writer) error) (err error) {
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			forgetTemp(f.Name())
		}
	}()
	var dst io.Writer = f
	if h != nil {
		dst = io.MultiWriter(f, h)
	}
	w := bufio.NewWriterSize(dst, 1<<16)
	if err = fill(w); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = w.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if keep { // mode 0 too
		if err = f.Chmod(mode); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
