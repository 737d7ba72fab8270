package safeio

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames from to to, failing with an error that matches
// fs.ErrExist when to exists. It uses renameat2(RENAME_NOREPLACE), or a
// hard link and an unlink where the file system lacks it.
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST):
		return fs.ErrExist
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		return linkRename(from, to)
	}
	return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
}
