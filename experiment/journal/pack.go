package journal

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/dstein/dstein/internal/safeio"
)

// PackedSuffix names a packed journal: NAME.trials.csv.gz.
const PackedSuffix = ".gz"

// maxJournalBytes bounds what a packed journal may unpack to (a plain
// journal is bounded by the memory check of its size).
const maxJournalBytes = 1 << 34

// unpackedSize reads the size that the packed journal at path unpacks to
// from gzip's trailer (its last four bytes: the size modulo 2³², exact for
// the journals of one gzip member under 4 GiB that pack writes).
func unpackedSize(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || info.Size() < 18 {
		return 0, fmt.Errorf("%s is not a gzip file", path)
	}
	var tail [4]byte
	if _, err := f.ReadAt(tail[:], info.Size()-4); err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint32(tail[:])), nil
}

// ReadFile returns the journal's bytes: path's, or where path does
// not exist, those its packed journal unpacks to.
func ReadFile(path string) ([]byte, error) {
	exists, err := NoLink(path)
	if err != nil {
		return nil, err
	}
	if exists {
		return safeio.ReadFile(path, "trial journal", 0)
	}
	gzPath := path + PackedSuffix
	f, err := safeio.Open(gzPath, "packed trial journal", 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gzPath, err)
	}
	data, err := io.ReadAll(io.LimitReader(zr, maxJournalBytes+1))
	if err == nil && len(data) > maxJournalBytes {
		err = fmt.Errorf("it unpacks to more than %d bytes", int64(maxJournalBytes))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w (a damaged packed journal: restore it, or rerun with --restart to start over)", gzPath, err)
	}
	return data, nil
}

// Pack replaces the packed journal path+".gz" with the plain one
// at path, compressed (written whole, then renamed over the old), and
// removes the plain one. gzip's header carries no name or time, so the
// same journal packs to the same bytes.
func Pack(path string) error {
	data, err := safeio.ReadFile(path, "trial journal", 0)
	if err != nil {
		return err
	}
	if err := safeio.Rewrite(path+PackedSuffix, func(w *bufio.Writer) error {
		zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
		if err != nil {
			return err
		}
		if _, err := zw.Write(data); err != nil {
			return err
		}
		return zw.Close()
	}); err != nil {
		return err
	}
	return os.Remove(path)
}

// PackNow, for a run that packs its journal (Spec.Pack) and has written
// its outputs, closes the plain journal and packs it in place of the
// packed one; a journal read packed and left unchanged stays as it is.
func (j *Journal) PackNow() error {
	if !j.pack {
		return nil
	}
	if j.f != nil {
		err := j.f.Close()
		j.f, j.w = nil, nil
		if err != nil {
			return err
		}
	}
	exists, err := NoLink(j.path)
	if err != nil || !exists {
		return err
	}
	return Pack(j.path)
}

// CheckPacked refuses a file in the place of a packed journal that is not
// one: it must unpack to a journal's header (today's, or the first
// round's comment line).
func CheckPacked(path string) error {
	f, err := safeio.Open(path, "packed trial journal", 0)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, len(Columns))
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err == nil {
		_, err = io.ReadFull(zr, head)
	}
	if err != nil || !strings.HasPrefix(string(head), Columns) && !strings.HasPrefix(string(head), "# dstein") {
		return fmt.Errorf("%s is not a packed trial journal, and this run would replace it (move it, or use another --out-dir)", path)
	}
	return nil
}

// ReadPath returns the file the journal's rows were read from: the
// packed journal (Path + ".gz") when that is where they came from, else
// Path.
func (j *Journal) ReadPath() string {
	if j.readPath != "" {
		return j.readPath
	}
	return j.path
}
