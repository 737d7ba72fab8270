package safeio

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// linkRename renames from to to through a hard link, which fails when to
// exists, then removes from. On a file system without hard links it checks
// that to does not exist, then renames (a file that appears between the
// check and the rename would be replaced: the best such a file system
// allows).
func linkRename(from, to string) error {
	err := os.Link(from, to)
	switch {
	case err == nil:
		return os.Remove(from)
	case errors.Is(err, fs.ErrExist):
		return fs.ErrExist
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.ENOSYS):
		if _, err := os.Lstat(to); err == nil {
			return fs.ErrExist
		}
		return os.Rename(from, to)
	}
	return err
}
