package journal

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/dstein/dstein/memlimit"
)

// BytesPerByte is the memory that reading a journal takes per byte
// of the file: the file itself, and each trial's metrics in maps (11 bytes
// per byte for a journal of 100,000 trials of 7 metrics, measured with
// /usr/bin/time -v; 16 here).
const BytesPerByte = 16

// Memory estimates the memory of reading the journals at paths
// (each plain, or else packed: then by the size it unpacks to).
func Memory(paths ...string) float64 {
	var size int64
	for _, p := range paths {
		if info, err := os.Lstat(p); err == nil && info.Mode().IsRegular() {
			size += info.Size()
		} else if n, err := unpackedSize(p + PackedSuffix); err == nil {
			size += n
		}
	}
	return memlimit.Base + BytesPerByte*float64(size)
}

// CheckMemory refuses journals whose reading would not fit b.
func CheckMemory(b memlimit.Budget, paths ...string) error {
	what := "reading the trial journal " + paths[0]
	if len(paths) > 1 {
		what = fmt.Sprintf("reading the %d shards' journals", len(paths))
	}
	return b.Check(what, Memory(paths...))
}

// read loads the rows of data (the CSV after any legacy comment line) and
// returns the length of its prefix that ends with the last complete line,
// and whether it holds rows of trials that were never closed.
func (j *Journal) read(data []byte) (keep int, incomplete bool, err error) {
	keep = len(data)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		// The last row was cut short by a crash: drop it.
		keep = bytes.LastIndexByte(data, '\n') + 1
	}
	body := data[:keep]
	first, body, _ := bytes.Cut(body, []byte("\n"))
	if strings.TrimSuffix(string(first), "\r") != Columns {
		return 0, false, fmt.Errorf("line 1: want the columns %s", Columns)
	}
	type open struct {
		vals map[string]float64
		sum  uint32
	}
	pending := map[Key]*open{}
	// Methods and metrics repeat on every row: one string each.
	names := map[string]string{}
	intern := func(s string) string {
		if v, ok := names[s]; ok {
			return v
		}
		names[s] = s
		return s
	}
	for no := 2; len(body) > 0; no++ {
		raw, rest, _ := bytes.Cut(body, []byte("\n"))
		body = rest
		text := strings.TrimSuffix(string(raw), "\r")
		if text == "" {
			if len(body) == 0 {
				break // the final newline
			}
			return 0, false, fmt.Errorf("line %d: empty line", no)
		}
		var rec []string
		if strings.IndexByte(text, '"') < 0 {
			rec = strings.Split(text, ",") // what the CSV reader gives a row without quotes
		} else {
			var err error
			rec, err = csv.NewReader(strings.NewReader(text)).Read()
			if err != nil && !errors.Is(err, io.EOF) {
				return 0, false, fmt.Errorf("line %d: %v", no, err)
			}
		}
		if len(rec) != 5 {
			return 0, false, fmt.Errorf("line %d: %d fields, want 5 (%s)", no, len(rec), Columns)
		}
		x, err := strconv.ParseFloat(rec[1], 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, false, fmt.Errorf("line %d: x = %q is not a finite number", no, rec[1])
		}
		t, err := strconv.Atoi(rec[2])
		if err != nil || t < 0 || t >= 1<<30 {
			return 0, false, fmt.Errorf("line %d: trial %q is not a whole number ≥ 0", no, rec[2])
		}
		if rec[0] == "" || rec[3] == "" {
			return 0, false, fmt.Errorf("line %d: empty method or metric", no)
		}
		k := Key{intern(rec[0]), x, t}
		if _, dup := j.done[k]; dup {
			return 0, false, fmt.Errorf("line %d: trial %d of %s at %s is recorded twice", no, t, k.Method, rec[1])
		}
		p := pending[k]
		if p == nil {
			p = &open{vals: map[string]float64{}}
			pending[k] = p
		}
		if rec[3] == DoneMarker {
			if j.checksums {
				sum, err := strconv.ParseUint(rec[4], 10, 32)
				if err != nil {
					return 0, false, fmt.Errorf("line %d: the checksum %q of trial %d of %s at %s is not a whole number below 2³²", no, rec[4], t, k.Method, rec[1])
				}
				if uint32(sum) != p.sum {
					return 0, false, fmt.Errorf("line %d: trial %d of %s at %s does not match its checksum (the rows before this line were changed or damaged after they were written)", no, t, k.Method, rec[1])
				}
			} else if rec[4] != "1" {
				return 0, false, fmt.Errorf("line %d: the closing row of trial %d of %s has value %q, want 1", no, t, k.Method, rec[4])
			}
			j.done[k] = p.vals
			j.order = append(j.order, k)
			delete(pending, k)
			continue
		}
		v, err := strconv.ParseFloat(rec[4], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, false, fmt.Errorf("line %d: value %q of metric %s is not a finite number", no, rec[4], rec[3])
		}
		if err := checkMetric(rec[3], v); err != nil {
			return 0, false, fmt.Errorf("line %d: %w", no, err)
		}
		p.vals[intern(rec[3])] = v
		p.sum = RowSum(p.sum, text)
	}
	return keep, len(pending) > 0, nil
}

// castagnoli is the CRC-32C table of the trials' checksums.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Check reads a journal's bytes (after any first-round header) as Open
// would: keep is the length of the complete rows, incomplete whether a
// trial was left without its closing row; checksums for format 3.
func Check(data []byte, checksums bool) (keep int, incomplete bool, err error) {
	j := &Journal{done: map[Key]map[string]float64{}, checksums: checksums}
	return j.read(data)
}

// RowSum adds one row (its text without the line end) to a trial's
// checksum: the CRC-32C of the rows, each followed by LF.
func RowSum(sum uint32, text string) uint32 {
	sum = crc32.Update(sum, castagnoli, []byte(text))
	return crc32.Update(sum, castagnoli, []byte{'\n'})
}

// checkMetric refuses values outside a metric's range: errors, times,
// counts and sizes are ≥ 0; rates, probabilities, p-values and accuracies
// lie in [0, 1]. Metrics not listed here (a signed statistic, an unbiased
// MMD²) only need to be finite.
func checkMetric(name string, v float64) error {
	unit := name == "reject" || name == "p_value" || name == "ks_uniform" || name == "tv" || name == "max_error" || name == "energy_tv" || name == "mode_mass" ||
		strings.HasPrefix(name, "accuracy") || name == "member_accuracy" || strings.HasPrefix(name, "freq:")
	nonneg := unit || name == "mse" || name == "mmd2" || name == "seconds" || name == "evaluations" || name == "eff_n" ||
		name == "ess_per_s" || name == "weight_ess" || name == "repulsion" || name == "importance_ess" ||
		name == "pair_rmse" || name == "mode_err2" || name == "mmd2_first"
	switch {
	case unit && (v < 0 || v > 1):
		return fmt.Errorf("%s = %v; want a value in [0, 1]", name, v)
	case nonneg && v < 0:
		return fmt.Errorf("%s = %v; want a value ≥ 0", name, v)
	}
	return nil
}
