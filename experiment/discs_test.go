package experiment

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dstein/dstein/memlimit"
)

// A run of one target (--target) gives that target the rows of the run of
// all four, bit for bit (its model, reference state and chains keep their
// streams), and no other target's; --length multiplies the iterations the
// journal records, warm-up included; an unknown target is refused.
func TestDISCSTargetAndLength(t *testing.T) {
	e, _ := Get("discs")
	run := func(set DISCSSettings) (*Result, string) {
		dir := t.TempDir()
		res, err := e.Run(context.Background(), Config{Out: dir, Seed: 5, Mode: Tiny, Methods: []string{"dlmc-ratio"}, Settings: set})
		if err != nil {
			t.Fatal(err)
		}
		js, err := os.ReadFile(filepath.Join(dir, "discs.trials.json"))
		if err != nil {
			t.Fatal(err)
		}
		return res, string(js)
	}
	value := func(rows []Row, x float64, metric string) (float64, int) {
		v, k := -1.0, 0
		for _, r := range rows {
			if r.Method == "dlmc-ratio" && r.Metric == metric {
				k++
				if r.X == x {
					v = r.Mean
				}
			}
		}
		return v, k
	}
	all, js := run(DISCSSettings{})
	if !strings.Contains(js, `"iterations": 8,`) || !strings.Contains(js, `"adapt": 4`) {
		t.Errorf("the tiny run's journal does not record 8 iterations with 4 of warm-up:\n%s", js)
	}
	one, _ := run(DISCSSettings{Target: 2})
	a, na := value(all.Rows, 2, "ess_per_step")
	b, nb := value(one.Rows, 2, "ess_per_step")
	if na != 4 || nb != 1 || a != b || a < 0 {
		t.Errorf("target 2: ESS per step %v in the run of all %d targets, %v in the run of %d", a, na, b, nb)
	}
	long, js := run(DISCSSettings{Target: 2, Length: 3})
	if !strings.Contains(js, `"iterations": 24,`) || !strings.Contains(js, `"adapt": 12`) || !strings.Contains(js, `"length": 3`) {
		t.Errorf("--length 3: the journal does not record 24 iterations with 12 of warm-up:\n%s", js)
	}
	if k, _ := value(long.Rows, 2, "kept_iterations"); k != 12 {
		t.Errorf("--length 3 kept %v iterations; want 12", k)
	}
	if _, err := e.Run(context.Background(), Config{Out: t.TempDir(), Seed: 5, Mode: Tiny, Methods: []string{"dlmc-ratio"}, Settings: DISCSSettings{Target: 5}}); err == nil || !strings.Contains(err.Error(), "no DISCS target 5") {
		t.Errorf("target 5: %v", err)
	}
	// A length whose traces would not fit the memory limit is refused
	// before any work, and leaves no output directory.
	out := filepath.Join(t.TempDir(), "out")
	_, err := e.Run(context.Background(), Config{Out: out, Seed: 5, Mode: Tiny, Methods: []string{"dlmc-ratio"},
		Settings: DISCSSettings{Length: 1 << 30}, Budget: memlimit.Budget{Limit: 1 << 30}})
	var over *memlimit.Exceeded
	if !errors.As(err, &over) {
		t.Errorf("--length 2^30 under a 1 GiB limit: %v; want *memlimit.Exceeded", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the refused run left its output directory: %v", err)
	}
}
