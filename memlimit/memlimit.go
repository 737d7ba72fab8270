package memlimit

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Fraction of the available memory that is the default limit.
const Fraction = 0.75

// Base is the resident memory of a pure-Go dstein process before it
// allocates anything of its own (runtime, binary, buffers), measured with
// /usr/bin/time -v on `dstein sample` of a 4×4 grid: 12 to 16 MB; the
// estimates add it to every command's own allocations. What a process
// holds beyond it (a cgo build's C library, a machine that maps more of
// the binary) is measured when a command starts: Budget.Startup.
const Base = 16 << 20

// Exceeded is the error of work whose estimate exceeds the limit.
type Exceeded struct {
	What        string
	Need, Limit int64
}

func (e *Exceeded) Error() string {
	return fmt.Sprintf("%s needs about %s of memory, over the limit of %s (--max-memory raises it)", e.What, Format(e.Need), Format(e.Limit))
}

// Format writes a byte count as the flag reads it: "512MB", "1.5GB".
func Format(n int64) string {
	switch {
	case n >= 1<<40:
		return strconv.FormatFloat(float64(n)/(1<<40), 'f', 1, 64) + "TB"
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', 1, 64) + "GB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 0, 64) + "MB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 0, 64) + "kB"
	}
	return strconv.FormatInt(n, 10) + "B" // --max-memory 10: 10 bytes, not "0kB"
}

// Parse reads a size: a number with an optional unit kB, MB, GB or TB
// (powers of 1024; "B" and lower case accepted), or a percentage of the
// available memory ("50%").
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if strings.HasSuffix(t, "%") {
		p, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
		n := int64(float64(Available()) * p / 100)
		if err != nil || !(p > 0) || p > 100 || n < 1 {
			// n < 1 would be no limit at all (Budget.Limit ≤ 0).
			return 0, fmt.Errorf("memory limit %q: want a percentage in (0, 100]", s)
		}
		return n, nil
	}
	u := strings.ToUpper(t)
	mult := 1.0
	for _, x := range []struct {
		suffix string
		m      float64
	}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(u, x.suffix) {
			u, mult = strings.TrimSuffix(u, x.suffix), x.m
			break
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(u), 64)
	// Under one byte would be no limit at all (Budget.Limit ≤ 0).
	if err != nil || !(v*mult >= 1) || math.IsInf(v*mult, 0) || v*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("memory limit %q: want a size such as 512MB, 4GB or 50%%", s)
	}
	return int64(v * mult), nil
}

// Available returns the memory this process may use: the machine's total
// memory or the container's limit, whichever is smaller (1 TB when neither
// can be read).
func Available() int64 {
	avail := int64(1 << 40)
	if t := memTotal(); t > 0 {
		avail = t
	}
	if c := cgroupLimit(); c > 0 && c < avail {
		avail = c
	}
	return avail
}

// Default returns the default limit: Fraction of Available.
func Default() int64 { return int64(Fraction * float64(Available())) }

func memTotal() int64 { return procKB("/proc/meminfo", "MemTotal:") }

// Resident returns this process's resident memory now (VmRSS), or 0 where
// it cannot be read (outside Linux).
func Resident() int64 { return procKB("/proc/self/status", "VmRSS:") }

// procKB reads the field key, a number of kB, from the /proc file path,
// in bytes; 0 when absent.
func procKB(path, key string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// cgroupLimit reads the memory limit of this process's cgroup (v2, then
// v1), or 0.
func cgroupLimit() int64 {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	best := int64(0)
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			file = filepath.Join("/sys/fs/cgroup", parts[2], "memory.max")
		case strings.Contains(","+parts[1]+",", ",memory,"):
			file = filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes")
			if _, err := os.Stat(file); err != nil {
				file = "/sys/fs/cgroup/memory/memory.limit_in_bytes"
			}
		default:
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || v <= 0 || v >= 1<<60 {
			continue
		}
		if best == 0 || v < best {
			best = v
		}
	}
	return best
}

// Budget is a command's memory limit.
type Budget struct {
	Limit int64
	// Startup is what the process held when it started beyond Base (its
	// binary's pages, the C library and threads of a cgo build: 8 MB
	// more than a pure-Go build on the development machine, about 20 MB
	// on another), measured by the command (StartupNow) and counted in
	// every check on top of the estimates, which count Base.
	Startup int64
}

// StartupNow returns Resident() beyond Base, or 0: a command's Startup,
// measured before it allocates its work.
func StartupNow() int64 { return max(0, Resident()-Base) }

// Total returns need (Base included by the caller) with the budget's
// Startup: the process's estimated peak, the number Check compares with
// the limit.
func (b Budget) Total(need float64) float64 { return need + float64(b.Startup) }

// Check returns *Exceeded when need (bytes, Base included by the caller
// or not) with the budget's Startup is over the limit. A need that
// overflowed (negative or +Inf as a float) counts as over.
func (b Budget) Check(what string, need float64) error {
	if b.Limit <= 0 {
		return nil
	}
	need = b.Total(need)
	if math.IsNaN(need) || need < 0 || need > float64(b.Limit) {
		n := int64(math.MaxInt64)
		if need >= 0 && need < float64(math.MaxInt64) {
			n = int64(need)
		}
		return &Exceeded{What: what, Need: n, Limit: b.Limit}
	}
	return nil
}
