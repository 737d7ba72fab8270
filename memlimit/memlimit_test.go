package memlimit

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	const (
		k = int64(1) << 10
		m = int64(1) << 20
		g = int64(1) << 30
		T = int64(1) << 40
	)
	cases := []struct {
		in   string
		want int64
	}{
		{"512MB", 512 * m},
		{"4GB", 4 * g},
		{"1.5g", g + g/2},
		{"1.5G", g + g/2},
		{"1.5gb", g + g/2},
		{"2TB", 2 * T},
		{"2t", 2 * T},
		{"100kB", 100 * k},
		{"100KB", 100 * k},
		{"100k", 100 * k},
		{"100K", 100 * k},
		{"3m", 3 * m},
		{"3mb", 3 * m},
		{"1000", 1000},
		{"1000B", 1000},
		{"1000b", 1000},
		{"1", 1},
		{"1.9", 1}, // whole bytes, rounded down
		{"0.5kB", 512},
		{"1e3", 1000},
		{"1e3MB", 1000 * m},
		{"+2GB", 2 * g},
		{" 512MB ", 512 * m},
		{"512 MB", 512 * m},
		{"\t4 gb\n", 4 * g},
		{"1048576kB", g},
		{"1024TB", 1024 * T},
		{"4194304TB", 1 << 62}, // the largest size Parse takes
		{"1_000", 1000},        // strconv.ParseFloat takes digit separators
		{"0x1p10", 1024},       // and hexadecimal floats
		{"1e-9GB", 1},
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestParsePercent(t *testing.T) {
	avail := Available()
	for _, c := range []struct {
		in string
		p  float64
	}{
		{"50%", 50},
		{"100%", 100},
		{"0.5%", 0.5},
		{"12.5%", 12.5},
		{" 75% ", 75},
		{"1e1%", 10},
	} {
		got, err := Parse(c.in)
		want := int64(float64(avail) * c.p / 100)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d (%g%% of %d)", c.in, got, err, want, c.p, avail)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{
		"", " ", "%", "MB", "GB", "B", "abc", "12XB", "5GBB", "5 G B", "1,5GB", "0x10",
		"0", "0MB", "0.0", "-1", "-1GB", "-0", "NaN", "nan", "NaNGB", "Inf", "+Inf", "-Inf", "infGB",
		"1e30TB", "9e18", "4.7e18", "5000000TB", // over MaxInt64/2 bytes
		"0.4", "0.9B", "1e-12GB", // less than one byte: would be no limit at all
		"0%", "-5%", "101%", "100.1%", "1e3%", "NaN%", "Inf%", "abc%", "%50", "50%%", "5O%",
		"1e-300%", // a share that rounds to zero bytes
	} {
		got, err := Parse(in)
		if err == nil {
			t.Errorf("Parse(%q) = %d, want an error", in, got)
			continue
		}
		if !strings.Contains(err.Error(), "memory limit") || !strings.Contains(err.Error(), "want") {
			t.Errorf("Parse(%q): unhelpful error %q", in, err)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0B"},
		{10, "10B"},
		{1023, "1023B"},
		{1 << 10, "1kB"},
		{1536, "2kB"},
		{100 << 10, "100kB"},
		{1<<20 - 1, "1024kB"},
		{1 << 20, "1MB"},
		{512 << 20, "512MB"},
		{1<<30 - 1, "1024MB"},
		{1 << 30, "1.0GB"},
		{3 << 29, "1.5GB"},
		{4 << 30, "4.0GB"},
		{1 << 40, "1.0TB"},
		{5 << 39, "2.5TB"},
		{math.MaxInt64, "8388608.0TB"},
	} {
		if got := Format(c.n); got != c.want {
			t.Errorf("Format(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// TestFormatParse: Format writes what Parse reads, within Format's
// rounding.
func TestFormatParse(t *testing.T) {
	for _, n := range []int64{10, 1023, 1 << 10, 3 << 10, 999 << 10, 1 << 20, 7 << 20, 1000 << 20, 1 << 30, 5 << 29, 3 << 40, 1 << 50} {
		s := Format(n)
		got, err := Parse(s)
		if err != nil {
			t.Errorf("Parse(Format(%d) = %q): %v", n, s, err)
			continue
		}
		if rel := math.Abs(float64(got-n)) / float64(n); rel > 0.05 {
			t.Errorf("Parse(Format(%d) = %q) = %d, off by %.1f%%", n, s, got, 100*rel)
		}
	}
}

func TestAvailableDefault(t *testing.T) {
	a := Available()
	if a <= 0 || memTotal() == 0 && cgroupLimit() == 0 && a != 1<<40 {
		t.Errorf("Available() = %d", a)
	}
	if mt := memTotal(); mt > 0 && a > mt {
		t.Errorf("Available() = %d over MemTotal %d", a, mt)
	}
	if c := cgroupLimit(); c < 0 {
		t.Errorf("cgroupLimit() = %d", c)
	} else if c > 0 && a > c {
		t.Errorf("Available() = %d over the cgroup's limit %d", a, c)
	}
	d := Default()
	if want := int64(Fraction * float64(a)); d != want || d <= 0 || d > a {
		t.Errorf("Default() = %d, want %d (%g of %d)", d, want, Fraction, a)
	}
	t.Logf("Available %s, Default %s, MemTotal %d, cgroup %d", Format(a), Format(d), memTotal(), cgroupLimit())
}

func TestBudgetCheck(t *testing.T) {
	const limit = 1 << 30
	over := []struct {
		need float64
		want int64 // Exceeded.Need
	}{
		{limit + 1, limit + 1},
		{2 * limit, 2 * limit},
		{1e18, 1e18},
		{1e30, math.MaxInt64},
		{math.MaxInt64, math.MaxInt64},
		{math.Inf(1), math.MaxInt64},
		{math.NaN(), math.MaxInt64},
		// An estimate that overflowed to a negative number counts as over.
		{-1, math.MaxInt64},
		{-1e30, math.MaxInt64},
		{math.Inf(-1), math.MaxInt64},
	}
	b := Budget{Limit: limit}
	for _, c := range over {
		err := b.Check("the table", c.need)
		var e *Exceeded
		if !errors.As(err, &e) {
			t.Errorf("Check(%g) = %v, want *Exceeded", c.need, err)
			continue
		}
		if e.What != "the table" || e.Limit != limit || e.Need != c.want {
			t.Errorf("Check(%g) = %+v, want Need %d", c.need, e, c.want)
		}
		msg := err.Error()
		for _, w := range []string{"the table needs about ", Format(c.want), "over the limit of 1.0GB", "--max-memory"} {
			if !strings.Contains(msg, w) {
				t.Errorf("Check(%g): %q lacks %q", c.need, msg, w)
			}
		}
	}
	for _, need := range []float64{0, 1, limit - 1, limit, math.Copysign(0, -1)} {
		if err := b.Check("x", need); err != nil {
			t.Errorf("Check(%g) = %v, want nil", need, err)
		}
	}
	// No limit.
	for _, lim := range []int64{0, -1, math.MinInt64} {
		for _, need := range []float64{0, 1e30, math.Inf(1), math.NaN(), -1} {
			if err := (Budget{Limit: lim}).Check("x", need); err != nil {
				t.Errorf("Budget{%d}.Check(%g) = %v, want nil", lim, need, err)
			}
		}
	}
	// The largest limit.
	if err := (Budget{Limit: math.MaxInt64}).Check("x", 1e18); err != nil {
		t.Errorf("MaxInt64 limit: %v", err)
	}
	if err := (Budget{Limit: math.MaxInt64}).Check("x", 1e19); err == nil {
		t.Error("MaxInt64 limit: 1e19 accepted")
	}
}

// A budget's Startup counts on top of every need: a need that fits the
// limit alone is over it with the startup, and the refusal names the sum.
func TestBudgetStartup(t *testing.T) {
	b := Budget{Limit: 100 << 20, Startup: 10 << 20}
	if err := b.Check("x", 90<<20); err != nil {
		t.Errorf("90MB with a 10MB startup under a 100MB limit: %v", err)
	}
	err := b.Check("x", 91<<20)
	var e *Exceeded
	if !errors.As(err, &e) || e.Need != 101<<20 {
		t.Errorf("91MB with a 10MB startup: %v, want *Exceeded needing 101MB", err)
	}
	if got := b.Total(5); got != 5+10<<20 {
		t.Errorf("Total(5) = %g", got)
	}
}

// Resident reads this process's resident memory where /proc has it: more
// than a test binary's pages need, less than the machine; StartupNow is
// what is beyond Base.
func TestResident(t *testing.T) {
	r := Resident()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		if r != 0 {
			t.Errorf("no /proc: Resident() = %d, want 0", r)
		}
		t.Skip("no /proc/self/status")
	}
	if r < 1<<20 || (memTotal() > 0 && r > memTotal()) {
		t.Errorf("Resident() = %s, want between 1MB and the machine's %s", Format(r), Format(memTotal()))
	}
	if s := StartupNow(); s < 0 || s > max(0, Resident()-Base)+64<<20 {
		t.Errorf("StartupNow() = %d with Resident %d", s, Resident())
	}
}

func TestExceededError(t *testing.T) {
	e := &Exceeded{What: "sampling", Need: 3 << 30, Limit: 512 << 20}
	want := "sampling needs about 3.0GB of memory, over the limit of 512MB (--max-memory raises it)"
	if e.Error() != want {
		t.Errorf("got %q, want %q", e.Error(), want)
	}
}
