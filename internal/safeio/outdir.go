package safeio

import (
	"bufio"
	"bytes"
	"context"
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
	"time"

	"github.com/dstein/dstein/internal/strictjson"
)

// Why one file of about 500 lines: ownership records of an output directory
// (.dstein-files.json) and the checks that use them are one protocol.

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

// Recorded reports whether the manifest of path's directory records a file
// of path's name: one that dstein wrote there and that its next run may
// check or replace.
func Recorded(path string) (bool, error) {
	m, err := readManifest(filepath.Dir(path))
	if err != nil {
		return false, err
	}
	_, ok := m.Files[filepath.Base(path)]
	return ok, nil
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
// directory, a device or a FIFO; a new file is renamed into place only if
// nothing appeared there meanwhile. It keeps an existing file's mode. On
// any error path is left as it was. Replacements in one directory by
// several processes are serialised by a lock on the directory. Several
// files that belong together are written with a Batch.
func Replace(path string, fill func(w *bufio.Writer) error) error {
	var b Batch
	if err := b.Replace(path, fill); err != nil {
		return err
	}
	return b.Commit(context.Background())
}

// Batch is a set of files written into output directories together: each
// is filled into a temporary file beside its target when it is added, and
// Commit puts them all in place, or none of them when its context ends
// first. Replace adds a file that dstein owns (checked against and recorded
// in its directory's manifest, see the function Replace); Rewrite one whose
// content the caller has recognised as its own (see the function Rewrite);
// Remove takes an owned file away. A Batch that is not committed must be
// aborted.
type Batch struct {
	items []*batchItem
	done  bool
}

type batchItem struct {
	path, tmp, digest string
	record            bool // checked against and recorded in the manifest
	remove            bool // remove path instead of writing it
}

// Replace adds path with the content fill writes (see the function
// Replace). A refusal is reported at once, before fill is called.
func (b *Batch) Replace(path string, fill func(w *bufio.Writer) error) error {
	return b.add(path, fill, true)
}

// Rewrite adds path with the content fill writes, without consulting the
// manifest (see the function Rewrite).
func (b *Batch) Rewrite(path string, fill func(w *bufio.Writer) error) error {
	return b.add(path, fill, false)
}

// Remove adds the removal of path, which must be owned (see Owned); its
// record is dropped from the manifest. A path that does not exist is left
// alone.
func (b *Batch) Remove(path string) error {
	if err := Owned(path); err != nil {
		return err
	}
	b.items = append(b.items, &batchItem{path: path, record: true, remove: true})
	return nil
}

func (b *Batch) add(path string, fill func(w *bufio.Writer) error, record bool) error {
	if b.done {
		panic("safeio: Batch used after Commit or Abort")
	}
	if record {
		if err := Owned(path); err != nil {
			return err
		}
	}
	f, mode, keep, err := startReplace(path)
	if err != nil {
		return err
	}
	h := sha256.New()
	if err := fillTemp(f, path, mode, keep, h, fill); err != nil {
		return err
	}
	b.items = append(b.items, &batchItem{path: path, tmp: f.Name(), digest: hex.EncodeToString(h.Sum(nil)), record: record})
	return nil
}

// Abort removes the temporary files; nothing changes.
func (b *Batch) Abort() {
	b.done = true
	for _, it := range b.items {
		if it.tmp != "" {
			os.Remove(it.tmp)
			forgetTemp(it.tmp)
			it.tmp = ""
		}
	}
}

// Commit puts every file of the batch in place: it takes the lock of each
// directory (waiting while another process holds it, until ctx ends),
// checks ctx once more, checks every owned file again, records the new
// digests and renames every file (removing those to remove), so that a
// signal either stops the batch before its first rename or lets it finish.
// On an error before the renames nothing changes; the temporary files are
// removed whatever happens.
func (b *Batch) Commit(ctx context.Context) (err error) {
	if b.done {
		panic("safeio: Batch committed twice or after Abort")
	}
	defer b.Abort()
	var dirs []string
	byDir := map[string][]*batchItem{}
	for _, it := range b.items {
		d := filepath.Dir(it.path)
		if byDir[d] == nil {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], it)
	}
	sort.Strings(dirs) // one order for every process: no deadlock
	for _, d := range dirs {
		unlock, err := lockDir(ctx, d)
		if err != nil {
			return err
		}
		defer unlock()
	}
	critical.RLock()
	defer critical.RUnlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	// Check everything and write the records first; rename after.
	fresh := map[*batchItem]bool{}
	for _, d := range dirs {
		var m *manifest
		for _, it := range byDir[d] {
			if !it.record {
				continue
			}
			if m == nil {
				if m, err = readManifest(d); err != nil {
					return err
				}
				if m.Files == nil {
					m.Files = map[string]manifestEntry{}
				}
			}
			old, exists, err := m.owned(it.path)
			if err != nil {
				return err
			}
			name := filepath.Base(it.path)
			switch {
			case it.remove:
				delete(m.Files, name)
			case exists && old != it.digest:
				m.Files[name] = manifestEntry{SHA256: []string{old, it.digest}}
			default:
				m.Files[name] = manifestEntry{SHA256: []string{it.digest}}
			}
			if !exists {
				fresh[it] = true
			}
			if exists && !it.remove {
				// The mode may have changed since the temporary file
				// was made.
				if info, err := os.Lstat(it.path); err == nil {
					os.Chmod(it.tmp, info.Mode().Perm())
				}
			}
		}
		if m != nil {
			if err := writeManifest(d, m); err != nil {
				return err
			}
		}
	}
	for _, it := range b.items {
		switch {
		case it.remove:
			if err := os.Remove(it.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("removing %s: %w", it.path, err)
			}
			continue
		case fresh[it]:
			// Nothing was there at the check: a file that appeared since
			// is not replaced.
			err = renameNoReplace(it.tmp, it.path)
			if errors.Is(err, fs.ErrExist) {
				return &Foreign{it.path, "appeared while dstein was writing it"}
			}
		default:
			err = os.Rename(it.tmp, it.path)
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", it.path, err)
		}
		forgetTemp(it.tmp)
		it.tmp = ""
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

// lockWait bounds how long lockDir waits for another process's lock on a
// directory (its holders keep it for the milliseconds of a commit).
var lockWait = time.Minute

// lockDir takes an exclusive lock on the directory (flock on its file
// descriptor, tried every 10 ms until ctx ends or lockWait has passed) and
// returns the function that releases it. Where the file system offers no
// such lock, it proceeds without one.
func lockDir(ctx context.Context, dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return func() {}, nil
	}
	deadline := time.Now().Add(lockWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return func() {}, nil
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%s is locked by another process (flock) for more than %v; dstein waits for it only while another dstein writes there", dir, lockWait)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
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

// SetAside renames each of paths that exists to its name with the first
// suffix of ".old", ".old.2", ".old.3", … that none of them has yet, never
// replacing a file, and returns the new names of those it moved (in the
// order given). It is for files that dstein starts over from (a trial
// journal and its settings, on --restart): they keep one suffix, as a pair.
func SetAside(paths ...string) ([]string, error) {
	suffix := func(k int) string {
		if k == 1 {
			return ".old"
		}
		return fmt.Sprintf(".old.%d", k)
	}
	for k := 1; k < 10000; k++ {
		free := true
		for _, p := range paths {
			if _, err := os.Lstat(p + suffix(k)); err == nil {
				free = false
				break
			}
		}
		if !free {
			continue
		}
		var moved []string
		for _, p := range paths {
			if _, err := os.Lstat(p); err != nil {
				continue
			}
			to := p + suffix(k)
			if err := renameNoReplace(p, to); err != nil {
				if errors.Is(err, fs.ErrExist) {
					return moved, fmt.Errorf("setting %s aside: %s appeared meanwhile", p, to)
				}
				return moved, fmt.Errorf("setting %s aside as %s: %w", p, to, err)
			}
			moved = append(moved, to)
		}
		return moved, nil
	}
	return nil, fmt.Errorf("setting %s aside: the suffixes .old to .old.9999 are all taken", paths[0])
}
