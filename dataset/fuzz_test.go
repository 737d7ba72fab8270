package dataset

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// allocated returns the bytes that f allocates (garbage included).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// fuzzLimit is the memory budget the fuzz targets pass to the readers: the
// most pixels ReadIDXLimit may allocate (a caller's limit, as Info.Load
// passes it from the headers that Probe read).
const fuzzLimit = 64 << 20

// fuzzFixed is what a reading costs whatever its file declares, garbage
// included: two files opened, each with bufio's 4 kB buffer (CIFAR-10:
// 64 kB) and, gzip-compressed, a gzip reader with its 32 kB window and
// Huffman tables (about 45 kB each), and an error's message. Measured:
// 92 kB for an IDX set of two gzip files beyond its pixels and labels
// (10 kB raw), 137 kB for CIFAR-10 batches in two files beyond their
// records; 512 kB leaves room.
const fuzzFixed = 512 << 10

// idxCap is the most bytes an IDX file of n bytes can give after a header
// of hdr bytes: its size, or maxInflate times it when it is read as gzip.
func idxCap(n int, gz bool, hdr int64) int64 {
	c := int64(n)
	if gz {
		c *= maxInflate
	}
	return max(c-hdr, 0)
}

// idxAllocBound is the most that ReadIDXLimit (or probeIDX) may allocate
// for an image file of ni bytes and a label file of nl bytes under the
// limit lim: the pixels, at most lim and what the image file can hold
// (the header is checked against both before they are allocated); the
// labels, at most one a pixel and what the label file can hold; and
// fuzzFixed. A reader that sized an allocation from a header alone, or a
// gzip file's claim beyond maxInflate, fails it.
func idxAllocBound(ni, nl int, mode uint8, lim int64) uint64 {
	px := min(lim, idxCap(ni, mode&1 != 0, 16))
	lab := min(px, idxCap(nl, mode&2 != 0, 8))
	return uint64(px) + uint64(lab) + fuzzFixed
}

func idxBytes(magic uint32, dims []uint32, body []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, magic)
	binary.Write(&b, binary.BigEndian, dims)
	b.Write(body)
	return b.Bytes()
}

func gzipBytes(b []byte) []byte {
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return z.Bytes()
}

// FuzzReadIDX feeds ReadIDXLimit an image file and a label file, each read
// as gzip when its bit of mode is set (1: images, 2: labels), under a limit
// of at most fuzzLimit (limit, or fuzzLimit when it is 0 or larger): it
// must not panic, must allocate at most idxAllocBound, errors must be one
// line, and a set it returns must be whole (N·H·W pixels, N labels of
// 0–9) and agree with what probeIDX reads from the headers.
func FuzzReadIDX(f *testing.F) {
	// A valid set of 3 images of 2×2 with labels 0, 1, 2.
	px := []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	img := idxBytes(2051, []uint32{3, 2, 2}, px)
	lab := idxBytes(2049, []uint32{3}, []byte{0, 1, 2})
	for mode := range uint8(4) {
		i, l := img, lab
		if mode&1 != 0 {
			i = gzipBytes(i)
		}
		if mode&2 != 0 {
			l = gzipBytes(l)
		}
		f.Add(i, l, mode, uint32(0))
	}
	// The limit at and just under the pixels (12 bytes).
	f.Add(img, lab, uint8(0), uint32(12))
	f.Add(img, lab, uint8(0), uint32(11))
	// Truncated: inside the header, inside the pixels, inside the labels,
	// and a gzip stream cut short.
	f.Add(img[:10], lab, uint8(0), uint32(0))
	f.Add(img[:20], lab, uint8(0), uint32(0))
	f.Add(img, lab[:9], uint8(0), uint32(0))
	f.Add(gzipBytes(img)[:20], lab, uint8(1), uint32(0))
	f.Add([]byte{}, []byte{}, uint8(0), uint32(0))
	// Wrong magic numbers: swapped, zero, little-endian, and labels that
	// disagree with the images or are out of range.
	f.Add(lab, img, uint8(0), uint32(0))
	f.Add(idxBytes(0, []uint32{3, 2, 2}, px), lab, uint8(0), uint32(0))
	f.Add(idxBytes(0x03080000, []uint32{0x03000000, 0x02000000, 0x02000000}, px), lab, uint8(0), uint32(0))
	f.Add(img, idxBytes(2049, []uint32{4}, []byte{0, 1, 2, 3}), uint8(0), uint32(0))
	f.Add(img, idxBytes(2049, []uint32{3}, []byte{0, 1, 10}), uint8(0), uint32(0))
	f.Add(img, idxBytes(2049, []uint32{3}, []byte{255, 1, 2}), uint8(0), uint32(0))
	// Headers that claim huge sets in a few bytes: 2³¹ images of 1×1 (at
	// the 2 GB cap), 2³² − 1 images, images of 2¹⁶×2¹⁶ (past the cap in
	// one image) and of 2¹⁵×2¹⁵ (two at the cap), zero or 2³² − 1 in each
	// dimension, and 64 MB (the fuzzing limit) and an image more; raw and
	// gzip-compressed, with a label file claiming as many.
	for _, d := range [][]uint32{
		{1 << 31, 1, 1}, {1<<32 - 1, 1, 1}, {1<<31 - 1, 1, 1},
		{1, 1 << 16, 1 << 16}, {3, 1 << 16, 1 << 16}, {1, 1 << 15, 1 << 15}, {2, 1 << 15, 1 << 15},
		{0, 2, 2}, {3, 0, 2}, {3, 2, 0}, {1<<32 - 1, 1<<32 - 1, 1<<32 - 1},
		{1 << 20, 8, 8}, {1<<20 + 1, 8, 8},
	} {
		claim := idxBytes(2051, d, px)
		labs := idxBytes(2049, d[:1], []byte{0, 1, 2})
		f.Add(claim, labs, uint8(0), uint32(0))
		f.Add(gzipBytes(claim), gzipBytes(labs), uint8(3), uint32(0))
	}
	// Gzip bombs, small: 64 kB of zeros after a header claiming them
	// (65,536 images of 1×1) packed in about 100 bytes, whose labels
	// (zeros too) are as small: a real bomb that the limit allows, read
	// whole, and refused by a limit a byte under it; a header claiming
	// 32 kB over only 1 kB of zeros (40 bytes, which could inflate to
	// 41 kB, so the pixels are allocated before the stream ends early);
	// and headers claiming 64 kB, 64 MB (the limit) and 2 GB over 1 kB
	// of zeros, beyond what 1032 bytes a byte can give.
	zeros := make([]byte, 1<<16)
	bombImg := idxBytes(2051, []uint32{1 << 16, 1, 1}, zeros)
	bombLab := idxBytes(2049, []uint32{1 << 16}, zeros)
	f.Add(gzipBytes(bombImg), gzipBytes(bombLab), uint8(3), uint32(0))
	f.Add(gzipBytes(bombImg), gzipBytes(bombLab), uint8(3), uint32(1<<16-1))
	f.Add(gzipBytes(idxBytes(2051, []uint32{1 << 15, 1, 1}, zeros[:1<<10])), gzipBytes(idxBytes(2049, []uint32{1 << 15}, zeros[:1<<15])), uint8(3), uint32(0))
	f.Add(gzipBytes(bombImg[:16+1<<10]), gzipBytes(bombLab), uint8(3), uint32(0))
	f.Add(gzipBytes(idxBytes(2051, []uint32{1 << 20, 8, 8}, zeros[:1<<10])), gzipBytes(bombLab), uint8(3), uint32(0))
	f.Add(gzipBytes(idxBytes(2051, []uint32{1 << 21, 32, 32}, zeros[:1<<10])), gzipBytes(bombLab), uint8(3), uint32(0))
	// Two gzip members one after the other (gzip reads them as one
	// stream), and a gzip file whose name says raw.
	f.Add(append(gzipBytes(img[:16]), gzipBytes(px)...), lab, uint8(1), uint32(0))
	f.Add(gzipBytes(img), lab, uint8(0), uint32(0))

	// One folder for every input of this process: t.TempDir is made and
	// removed for each input, which would cost more than the reading.
	dir := f.TempDir()
	names := [2][2]string{
		{filepath.Join(dir, "images"), filepath.Join(dir, "images.gz")},
		{filepath.Join(dir, "labels"), filepath.Join(dir, "labels.gz")},
	}
	f.Fuzz(func(t *testing.T, images, labels []byte, mode uint8, limit uint32) {
		mode &= 3
		ip, lp := names[0][mode&1], names[1][mode>>1]
		if err := os.WriteFile(ip, images, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(lp, labels, 0o600); err != nil {
			t.Fatal(err)
		}
		lim := int64(limit)
		if lim == 0 || lim > fuzzLimit {
			lim = fuzzLimit
		}
		bound := idxAllocBound(len(images), len(labels), mode, lim)
		var s *Set
		var err error
		if n := allocated(func() { s, err = ReadIDXLimit("fuzz", ip, lp, lim) }); n > bound {
			t.Fatalf("ReadIDXLimit of %d and %d bytes (mode %d, limit %d) allocated %d bytes; want at most %d", len(images), len(labels), mode, lim, n, bound)
		}
		var pn, ph, pw int
		var perr error
		// probeIDX allocates nothing for the pixels: fuzzFixed.
		if n := allocated(func() { pn, ph, pw, perr = probeIDX(ip, lp) }); n > fuzzFixed {
			t.Fatalf("probeIDX of %d and %d bytes allocated %d bytes; want at most %d", len(images), len(labels), n, fuzzFixed)
		}
		if perr != nil && strings.Contains(perr.Error(), "\n") {
			t.Fatalf("probeIDX's error spans lines: %q", perr)
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		if s.N < 1 || s.H < 1 || s.W < 1 || s.C != 1 || len(s.Pixels) != s.N*s.H*s.W || len(s.Labels) != s.N || int64(len(s.Pixels)) > lim {
			t.Fatalf("set of %d images of %d×%d×%d with %d pixels and %d labels (limit %d)", s.N, s.H, s.W, s.C, len(s.Pixels), len(s.Labels), lim)
		}
		for i, l := range s.Labels {
			if l >= 10 {
				t.Fatalf("label %d of example %d accepted", l, i)
			}
		}
		if perr != nil || pn != s.N || ph != s.H || pw != s.W {
			t.Fatalf("probeIDX says %d images of %d×%d (%v); ReadIDXLimit read %d of %d×%d", pn, ph, pw, perr, s.N, s.H, s.W)
		}
	})
}

// cifarRecordsOf makes n CIFAR-10 records, record i of label labels[i]
// with its red, green and blue planes at i, 2i and 3i.
func cifarRecordsOf(labels ...byte) []byte {
	var out []byte
	for i, l := range labels {
		out = append(out, l)
		for c := 1; c <= 3; c++ {
			out = append(out, bytes.Repeat([]byte{byte(c * i)}, 1024)...)
		}
	}
	return out
}

// FuzzReadCIFAR feeds readCIFAR a CIFAR-10 batch cut in two files at cut
// (one file when cut is 0 or past the end), refused beyond max records
// when max > 0: it must not panic, must allocate at most the files' size
// (the pixels and labels of every record) plus fuzzFixed, errors must be
// one line, and a set it returns must hold every record, in NHWC order.
func FuzzReadCIFAR(f *testing.F) {
	three := cifarRecordsOf(0, 9, 4)
	f.Add(three, uint32(0), uint8(0))
	f.Add(three, uint32(CIFARRecord), uint8(0))
	f.Add(three, uint32(2*CIFARRecord), uint8(3))
	f.Add(three, uint32(0), uint8(2)) // more records than allowed
	f.Add(three[:CIFARRecord], uint32(0), uint8(1))
	// Truncated: inside the first record, in the second file's record,
	// one byte short, and nothing at all.
	f.Add(three[:3000], uint32(0), uint8(0))
	f.Add(three[:2*CIFARRecord+5], uint32(CIFARRecord+5), uint8(0))
	f.Add(three[:len(three)-1], uint32(0), uint8(0))
	f.Add([]byte{}, uint32(0), uint8(0))
	f.Add([]byte{1}, uint32(0), uint8(0))
	// Labels out of range.
	f.Add(cifarRecordsOf(10), uint32(0), uint8(0))
	f.Add(cifarRecordsOf(1, 255), uint32(CIFARRecord), uint8(0))
	f.Add(cifarRecordsOf(1, 2, 3, 4, 5, 6, 7, 8), uint32(1<<31), uint8(0))

	dir := f.TempDir()
	a, b := filepath.Join(dir, "data_batch_1.bin"), filepath.Join(dir, "data_batch_2.bin")
	f.Fuzz(func(t *testing.T, data []byte, cut uint32, maxRecords uint8) {
		files := []string{a}
		if cut == 0 || int64(cut) >= int64(len(data)) {
			cut = uint32(len(data))
		} else {
			files = append(files, b)
			if err := os.WriteFile(b, data[cut:], 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(a, data[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		bound := uint64(len(data)) + fuzzFixed
		var s *Set
		var err error
		if n := allocated(func() { s, err = readCIFAR(int(maxRecords), files...) }); n > bound {
			t.Fatalf("readCIFAR of %d bytes in %d files allocated %d bytes; want at most %d", len(data), len(files), n, bound)
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		n := len(data) / CIFARRecord
		if len(data)%CIFARRecord != 0 || s.N != n || len(s.Labels) != n || len(s.Pixels) != n*(CIFARRecord-1) || s.H != 32 || s.W != 32 || s.C != 3 {
			t.Fatalf("%d bytes read as %d records of %d×%d×%d, %d labels and %d pixels", len(data), s.N, s.H, s.W, s.C, len(s.Labels), len(s.Pixels))
		}
		if maxRecords > 0 && n > int(maxRecords) {
			t.Fatalf("%d records read, over the limit of %d", n, maxRecords)
		}
		for i := range n {
			rec := data[i*CIFARRecord : (i+1)*CIFARRecord]
			if s.Labels[i] != rec[0] || rec[0] >= 10 {
				t.Fatalf("record %d: label %d read as %d", i, rec[0], s.Labels[i])
			}
			px := s.Pixels[i*(CIFARRecord-1):]
			for p := range 32 * 32 {
				for c := range 3 {
					if px[3*p+c] != rec[1+1024*c+p] {
						t.Fatalf("record %d, pixel %d, channel %d: %d read as %d", i, p, c, rec[1+1024*c+p], px[3*p+c])
					}
				}
			}
		}
	})
}
