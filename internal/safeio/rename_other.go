//go:build !linux

package safeio

// renameNoReplace renames from to to, failing with an error that matches
// fs.ErrExist when to exists (a hard link, then an unlink).
func renameNoReplace(from, to string) error { return linkRename(from, to) }
