package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/dstein/dstein/memlimit"
)

// The memory limit of every command whose memory grows with its input
// (--max-memory): for each, an input sized so that dstein's estimate is
// about 80% of a small limit runs, and the child process's peak resident
// memory (getrusage's ru_maxrss, which counts the runtime and the binary
// too) stays under the limit; an input whose estimate is over the limit is
// refused with exit code 3 before it is read, at no more than the memory
// of a process that has not allocated (refusedRSS). The inputs are sized
// from the same per-byte constants the commands use, so a constant that
// undercounts makes the first check fail, and one that is not applied
// makes the second fail.

// refusedRSS returns the most a refused command may hold: what a dstein
// that stops at a missing model holds (the runtime, the binary's pages,
// the C library of a cgo build: 16 MB to 35 MB measured on different
// machines), measured once, and 16 MB for the parsed command line, the
// refusal and a busy machine; an input read before the refusal is over
// 100 MB in these tests.
func refusedRSS(t *testing.T, bin string) int64 {
	t.Helper()
	bareOnce.Do(func() {
		_, bare.rss, _ = peakRun(t, bin, "sample", "--model", filepath.Join(t.TempDir(), "missing.json"))
		t.Logf("a dstein that stops at a missing model: peak RSS %s", memlimit.Format(bare.rss))
	})
	if bare.rss <= 0 {
		t.Fatal("no peak RSS measured for a bare dstein")
	}
	return bare.rss + 16<<20
}

var (
	bareOnce sync.Once
	bare     struct{ rss int64 }
)

// peakRun runs the built dstein with args and returns its exit code, its
// peak resident memory in bytes, and its standard error.
func peakRun(t *testing.T, bin string, args ...string) (int, int64, string) {
	t.Helper()
	if err := resetPeakRSS(); err != nil {
		t.Skipf("cannot reset this process's peak RSS (%v): the children's would include it", err)
	}
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Run()
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no rusage on this system")
	}
	return cmd.ProcessState.ExitCode(), ru.Maxrss << 10, stderr.String()
}

// resetPeakRSS returns what this process no longer uses to the system and
// resets its peak resident memory to the present one (Linux 4.0 and later;
// elsewhere it changes nothing). A child that os/exec starts shares its
// parent's memory until it executes, and Linux then records that memory's
// peak in the child's (ru_maxrss): the tests that ran in this process
// before (some train networks) would count in the peak of every dstein
// that peakRun measures. (Found by measuring: every child reported the
// test process's 200 MB.)
func resetPeakRSS() error {
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// buildDstein builds the binary once per test.
func buildDstein(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dstein")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// limitCase is one command at one input size.
type limitCase struct {
	name string
	// args runs the command with inputs whose estimate is about need
	// bytes (setup writes them into dir).
	args func(t *testing.T, dir string, need int64) []string
	// afterLoad marks a command that reads its input (a model, within its
	// own estimate) before it estimates the work it does with it: its
	// refusal comes before the work is allocated, at under half the
	// limit, not before the input is read.
	afterLoad bool
}

// checkLimit runs c with an input of 80% of limit (it must succeed under
// the limit) and with one of 130% (it must be refused before reading).
func checkLimit(t *testing.T, bin string, c limitCase, limit int64) {
	t.Run(c.name, func(t *testing.T) {
		flag := "--max-memory=" + memlimit.Format(limit)
		small := append(c.args(t, t.TempDir(), limit*8/10), flag)
		code, rss, errs := peakRun(t, bin, small...)
		t.Logf("80%% of %s: exit %d, peak RSS %s", memlimit.Format(limit), code, memlimit.Format(rss))
		if code != 0 {
			t.Fatalf("an input at 80%% of the limit: exit %d: %s", code, errs)
		}
		if rss > limit {
			t.Errorf("peak RSS %s over the limit %s", memlimit.Format(rss), memlimit.Format(limit))
		}
		large := append(c.args(t, t.TempDir(), limit*13/10), flag)
		code, rss, errs = peakRun(t, bin, large...)
		t.Logf("130%% of the limit: exit %d, peak RSS %s: %s", code, memlimit.Format(rss), strings.TrimSpace(errs))
		if code != exitResource || !strings.Contains(errs, "--max-memory") {
			t.Errorf("an input at 130%% of the limit: exit %d, want %d: %s", code, exitResource, errs)
		}
		switch {
		case c.afterLoad && rss > limit/2:
			t.Errorf("refused at a peak RSS of %s, over half the limit: the work was allocated before the refusal", memlimit.Format(rss))
		case !c.afterLoad && rss > refusedRSS(t, bin):
			t.Errorf("refused at a peak RSS of %s: the input was read before the refusal", memlimit.Format(rss))
		}
	})
}

// writeMAR writes a MAR file of about size bytes: variables of two states
// with one-digit probabilities, the most numbers per byte.
func writeMAR(t *testing.T, path string, size int64) {
	t.Helper()
	n := size / 6
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "MAR\n%d", n)
	for range n {
		w.WriteString(" 2 0 1")
	}
	w.WriteString("\n")
	w.Flush()
	f.Close()
}

// writeJournal writes dir/NAME.trials.csv with trials of one method (any
// number of trials, indices from first on), sized to about size bytes, and
// the settings file of a tiny run of the experiment (copied from one).
func writeJournal(t *testing.T, bin, dir, exp, method string, first int, size int64, extra ...string) {
	t.Helper()
	args := append([]string{"experiment", exp, "--tiny", "--out-dir", dir}, extra...)
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v %s", args, err, out)
	}
	path := filepath.Join(dir, exp+".trials.csv")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	info, _ := f.Stat()
	tab := crc32.MakeTable(crc32.Castagnoli)
	for t := first; info.Size()+int64(w.Buffered()) < size; t++ {
		if w.Available() < 4096 {
			w.Flush()
			info, _ = f.Stat()
		}
		var sum uint32
		for _, m := range []string{"a", "b", "c", "d", "e", "f", "g"} {
			line := fmt.Sprintf("%s,0,%d,%s,0.1\n", method, t, m)
			sum = crc32.Update(sum, tab, []byte(line))
			w.WriteString(line)
		}
		fmt.Fprintf(w, "%s,0,%d,_done,%d\n", method, t, sum)
	}
	w.Flush()
	f.Close()
}

func TestMaxMemoryPeakRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and measures its processes")
	}
	bin := buildDstein(t)
	// The per-byte constants of the commands (compare-mar's and the
	// journals'), and the base every estimate starts from.
	base := int64(memlimit.Base)
	cases := []limitCase{
		{name: "compare-mar", args: func(t *testing.T, dir string, need int64) []string {
			each := (need - base) / marBytesPerByte / 2
			a, b := filepath.Join(dir, "a.MAR"), filepath.Join(dir, "b.MAR")
			writeMAR(t, a, each)
			writeMAR(t, b, each)
			return []string{"compare-mar", a, b}
		}},
		{name: "experiment (resume)", args: func(t *testing.T, dir string, need int64) []string {
			out := filepath.Join(dir, "e")
			writeJournal(t, bin, out, "categorical", "gfsvgd-paper", 2, (need-base)/16)
			return []string{"experiment", "categorical", "--tiny", "--out-dir", out}
		}},
		{name: "merge", args: func(t *testing.T, dir string, need int64) []string {
			s1, s2 := filepath.Join(dir, "s1"), filepath.Join(dir, "s2")
			each := (need - base) / 16 / 2
			// Trials beyond the run's 2 are read and kept, not used.
			writeJournal(t, bin, s1, "ising-n", "exact", 2, each, "--shard", "1/2")
			writeJournal(t, bin, s2, "ising-n", "exact", 1<<28, each, "--shard", "2/2")
			return []string{"merge", "ising-n", "--out-dir", filepath.Join(dir, "m"), s1, s2}
		}},
		{name: "reproduce", args: func(t *testing.T, dir string, need int64) []string {
			out := filepath.Join(dir, "r")
			if out, err := exec.Command(bin, "reproduce", "--tiny", "--only", "categorical", "--out-dir", out).CombinedOutput(); err != nil {
				t.Fatalf("%v %s", err, out)
			}
			j := filepath.Join(out, "categorical")
			os.Remove(filepath.Join(j, "categorical.trials.csv.gz")) // reproduce leaves it packed
			os.Remove(filepath.Join(j, "categorical.trials.csv"))
			writeJournal(t, bin, j, "categorical", "gfsvgd-paper", 2, (need-base)/16)
			return []string{"reproduce", "--tiny", "--only", "categorical", "--out-dir", out}
		}},
		{name: "reproduce (packed journal)", args: func(t *testing.T, dir string, need int64) []string {
			// The packed journal is checked by the size it unpacks to
			// (gzip's trailer), not by its own, some hundred times smaller.
			out := filepath.Join(dir, "r")
			j := filepath.Join(out, "categorical")
			writeJournal(t, bin, j, "categorical", "gfsvgd-paper", 2, (need-base)/16)
			plain := filepath.Join(j, "categorical.trials.csv")
			data, err := os.ReadFile(plain)
			if err != nil {
				t.Fatal(err)
			}
			var gz bytes.Buffer
			zw := gzip.NewWriter(&gz)
			zw.Write(data)
			zw.Close()
			if err := os.WriteFile(plain+".gz", gz.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Remove(plain)
			return []string{"reproduce", "--tiny", "--only", "categorical", "--out-dir", out}
		}},
	}
	for _, c := range cases {
		checkLimit(t, bin, c, 160<<20)
	}
}
