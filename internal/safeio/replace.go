package safeio

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Replace writes path through a temporary file in the same directory: fill
// writes the content, then the file is synced and renamed over path. It is
// for files that dstein owns inside an output directory: it never follows a
// symbolic link (a link at path is replaced by the file), refuses to replace
// a directory or a non-regular file, and keeps an existing file's mode. On
// any error path is left as it was.
func Replace(path string, fill func(w *bufio.Writer) error) (err error) {
	mode, keep := fs.FileMode(0), false
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("writing %s: %w", path, err)
	case info.Mode().IsRegular():
		mode, keep = info.Mode().Perm(), true
	case info.Mode()&fs.ModeSymlink != 0:
	default:
		return fmt.Errorf("writing %s: it exists and is not a regular file", path)
	}
	f, err := createTemp(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<16)
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
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
