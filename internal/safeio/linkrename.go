package safeio

import (
	"errors"
	"io/fs"
	"os"
)

// linkRename renames from to to through a hard link, which fails when to
// exists, then removes from.
func linkRename(from, to string) error {
	if err := os.Link(from, to); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fs.ErrExist
		}
		return err
	}
	return os.Remove(from)
}
