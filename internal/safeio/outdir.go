package safeio

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"syscall"

	"github.com/dstein/dstein/internal/strictjson"
)

// ManifestName is the file in which an output directory records the files
// that dstein wrote there: for each, the SHA-256 digest of its content.
const ManifestName = ".dstein-files.json"

// manifestFormat marks a manifest; manifestMax bounds the size read.
const (
	manifestFormat = "dstein.files"
	manifestMax    = 16 << 20
)

// manifest is the JSON of ManifestName.
type manifest struct {
	Format string `json:"format"`
	// Files maps a file name of the directory to the digests its content
	// may have: the last content dstein wrote, and the one before while a
	// replacement is under way (a crash between the record and the rename
	// leaves either content, both dstein's).
	Files map[string]manifestEntry `json:"files"`
}

type manifestEntry struct {
	SHA256 []string `json:"sha256"`
}

// Foreign is the error of a file that dstein will not replace: it exists
// in an output directory and dstein did not write it, or it has changed
// since, or it is not a regular file.
type Foreign struct {
	Path string
	Why  string
}

func (e *Foreign) Error() string {
	return fmt.Sprintf("%s %s; dstein replaces only files it wrote itself and that are unchanged since (move it away, or choose another output directory)", e.Path, e.Why)
}

// Owned returns nil when path may be replaced by Replace: it does not
// exist, or it is a regular file that the directory's manifest records
// with its present content. Otherwise it returns a *Foreign (or an error
// reading the manifest). It never follows a symbolic link.
func Owned(path string) error {
	m, err := readManifest(filepath.Dir(path))
	if err != nil {
		return err
	}
	_, _, err = m.owned(path)
	return err
}

// owned checks path against m and returns the digest of its present
// content (exists false when there is none).
func (m *manifest) owned(path string) (digest string, exists bool, err error) {
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("checking %s: %w", path, err)
	case info.Mode()&fs.ModeSymlink != 0:
		return "", true, &Foreign{path, "exists and is a symbolic link (dstein does not follow links inside its output directories)"}
	case info.IsDir():
		return "", true, &Foreign{path, "exists and is a directory"}
	case !info.Mode().IsRegular():
		return "", true, &Foreign{path, "exists and is " + kind(info.Mode())}
	}
	e, ok := m.Files[filepath.Base(path)]
	if !ok {
		return "", true, &Foreign{path, "exists and was not written by dstein (" + filepath.Join(filepath.Dir(path), ManifestName) + " has no record of it)"}
	}
	digest, err = digestFile(path)
	if err != nil {
		return "", true, fmt.Errorf("checking %s: %w", path, err)
	}
	if !slices.Contains(e.SHA256, digest) {
		return "", true, &Foreign{path, "has changed since dstein wrote it"}
	}
	return digest, true, nil
}

// Replace writes path, a file that dstein owns inside an output directory
// (a table, a figure, a page), through a temporary file in the same
// directory: fill writes the content, then the file is synced and renamed
// over path, and the directory's manifest (ManifestName) records the new
// content's digest. It refuses, before calling fill and again before the
// rename, a path that exists and is not owned (see Owned): a file the user
// put there, a file changed since dstein wrote it, a symbolic link, a
// directory, a device or a FIFO. It keeps an existing file's mode. On any
// error path is left as it was. Replacements in one directory by several
// processes are serialised by a lock on the directory.
func Replace(path string, fill func(w *bufio.Writer) error) error {
	if err := Owned(path); err != nil {
		return err
	}
	f, mode, keep, err := startReplace(path)
	if err != nil {
		return err
	}
	h := sha256.New()
	if err := fillTemp(f, path, mode, keep, h, fill); err != nil {
		return err
	}
	tmp, digest := f.Name(), hex.EncodeToString(h.Sum(nil))
	fail := func(err error) error {
		os.Remove(tmp)
		return err
	}
	dir := filepath.Dir(path)
	critical.RLock()
	defer critical.RUnlock()
	unlock := lockDir(dir)
	defer unlock()
	m, err := readManifest(dir)
	if err != nil {
		return fail(err)
	}
	old, exists, err := m.owned(path)
	if err != nil {
		return fail(err)
	}
	if exists {
		// The mode may have changed since the temporary file was made.
		if info, err := os.Lstat(path); err == nil {
			os.Chmod(tmp, info.Mode().Perm())
		}
	}
	entry := manifestEntry{SHA256: []string{digest}}
	if exists && old != digest {
		entry.SHA256 = []string{old, digest}
	}
	if m.Files == nil {
		m.Files = map[string]manifestEntry{}
	}
	m.Files[filepath.Base(path)] = entry
	if err := writeManifest(dir, m); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(fmt.Errorf("writing %s: %w", path, err))
	}
	return nil
}

// readManifest reads dir's manifest; a directory without one has an empty
// manifest.
func readManifest(dir string) (*manifest, error) {
	path := filepath.Join(dir, ManifestName)
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &manifest{Format: manifestFormat}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file, so it is not dstein's record of the files it wrote there; remove it, or choose another output directory", path)
	}
	data, err := ReadFile(path, "record of dstein's files", manifestMax)
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := strictjson.Unmarshal(data, &m); err != nil || m.Format != manifestFormat {
		why := "it is not dstein's record of the files it wrote there"
		if err != nil {
			why = err.Error()
		}
		return nil, fmt.Errorf("%s is damaged (%s); dstein will not replace files there that it cannot recognise as its own: remove the record, or choose another output directory", path, why)
	}
	for name, e := range m.Files {
		for _, d := range e.SHA256 {
			if b, err := hex.DecodeString(d); err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("%s is damaged (the digest of %s is not a SHA-256); remove the record, or choose another output directory", path, name)
			}
		}
	}
	return &m, nil
}

// writeManifest replaces dir's manifest, with its files in sorted order
// so that the same files give the same bytes.
func writeManifest(dir string, m *manifest) error {
	names := make([]string, 0, len(m.Files))
	for k := range m.Files {
		names = append(names, k)
	}
	sort.Strings(names)
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"format\": %q,\n  \"files\": {", manifestFormat)
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(k)
		digests, _ := json.Marshal(m.Files[k].SHA256)
		fmt.Fprintf(&b, "\n    %s: {\"sha256\": %s}", name, digests)
	}
	if len(names) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("}\n}\n")
	return rewrite(filepath.Join(dir, ManifestName), func(w *bufio.Writer) error {
		_, err := w.Write(b.Bytes())
		return err
	}, false) // the caller, Replace, holds the critical section
}

// digestFile returns the hex SHA-256 of a file's content.
func digestFile(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// lockDir takes an exclusive lock on the directory (flock on its file
// descriptor) and returns the function that releases it. Where the file
// system offers no such lock, it proceeds without one.
func lockDir(dir string) func() {
	f, err := os.Open(dir)
	if err != nil {
		return func() {}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() }
}

// MakeDir creates the directory dir and any missing parents (mode 0755
// less the umask), and returns the directories it created, outermost
// first, so that a command that fails can remove them again (RemoveEmpty).
// An existing directory is not an error; an existing file is.
func MakeDir(dir string) (created []string, err error) {
	var missing []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		info, err := os.Stat(p)
		if err == nil {
			if !info.IsDir() {
				return nil, fmt.Errorf("%s exists and is not a directory", p)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil {
			if errors.Is(err, fs.ErrExist) {
				if info, serr := os.Stat(missing[i]); serr == nil && info.IsDir() {
					continue // made by another process meanwhile: not ours
				}
			}
			RemoveEmpty(created)
			return nil, fmt.Errorf("creating %s: %w", missing[i], errors.Unwrap(err))
		}
		created = append(created, missing[i])
	}
	return created, nil
}

// RemoveEmpty removes the directories of created (as MakeDir returns them)
// that are empty, innermost first; a directory that holds anything stays.
func RemoveEmpty(created []string) {
	for i := len(created) - 1; i >= 0; i-- {
		os.Remove(created[i]) // fails, harmlessly, on a directory that is not empty
	}
}

// SetAside renames path to the first of path+".old", path+".old.2",
// path+".old.3", … that does not exist, never replacing a file, and
// returns the new name. It is for a file that dstein starts over from (a
// trial journal on --restart).
func SetAside(path string) (string, error) {
	for k := 1; k < 10000; k++ {
		to := path + ".old"
		if k > 1 {
			to = fmt.Sprintf("%s.old.%d", path, k)
		}
		err := renameNoReplace(path, to)
		if err == nil {
			return to, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("setting %s aside as %s: %w", path, to, err)
		}
	}
	return "", fmt.Errorf("setting %s aside: %s.old to %s.old.9999 all exist", path, path, path)
}
