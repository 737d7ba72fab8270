package experiment

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CoinSettings and runCoin are the whole of a toy experiment, as
// ARCHITECTURE.md's "How to add an experiment" shows it: a settings
// struct (its options: journal key, flag, help) and a body that records
// each (method, x, trial) unit through the runner and summarizes the
// journal. Registered as it would be in its own file's init.
type CoinSettings struct {
	P float64 `opt:"p" flag:"p,nonnegative" help:"the coin's probability of heads"`
}

func runCoin(r *runner) (*Result, error) {
	p := settingsOf[CoinSettings](r).P
	for tr := range r.trials {
		if !r.inShard(tr) {
			continue
		}
		g := r.trialKey(tr).Rand()
		for _, n := range []int{10, 100} {
			_, err := r.trial("iid", float64(n), tr, func() (map[string]float64, error) {
				heads := 0
				for range n {
					if g.Float64() < p {
						heads++
					}
				}
				return map[string]float64{"error": math.Abs(float64(heads)/float64(n) - p)}, nil
			})
			if err != nil {
				return nil, err
			}
		}
		r.trialDone(tr)
	}
	return &Result{Rows: r.summarize()}, nil
}

// TestExperimentContract registers the toy, runs it with typed settings,
// resumes it and checks that its options reach the journal, the flags and
// the command line's parser with nothing else written for it.
func TestExperimentContract(t *testing.T) {
	register(&Experiment{Name: "coin", Title: "a coin's frequency of heads", Trials: 4, QuickTrials: 2, Setting: "n",
		Settings: CoinSettings{P: 0.5}, body: runCoin})
	defer delete(registry, "coin")
	e, err := Get("coin")
	if err != nil {
		t.Fatal(err)
	}
	set, err := e.ParseSettings(map[string]string{"p": "0.3"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := e.Run(context.Background(), Config{Out: dir, Seed: 1, Mode: Quick, Settings: set})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || res.Rows[0].Trials != 2 {
		t.Fatalf("rows %+v; want 2 settings × 2 trials", res.Rows)
	}
	for _, row := range res.Rows {
		// Hoeffding: P(|p̂ − p| > t) ≤ 2 exp(−2nt²) = 1e-3 at this t, so a
		// mean of 2 trials exceeds t with probability ≤ 2e-3.
		if bound := math.Sqrt(math.Log(2000) / (2 * row.X)); row.Mean > bound {
			t.Errorf("n = %v: mean error %v over %v", row.X, row.Mean, bound)
		}
	}
	side, err := os.ReadFile(filepath.Join(dir, "coin.trials.json"))
	if err != nil || !strings.Contains(string(side), `"p": 0.3`) {
		t.Errorf("the journal's settings do not record p = 0.3 (%v):\n%s", err, side)
	}
	// The same settings resume; other ones are refused.
	if res, err := e.Run(context.Background(), Config{Out: dir, Seed: 1, Mode: Quick, Settings: CoinSettings{P: 0.3}}); err != nil || res.Loaded != 2 {
		t.Errorf("resume: %v, %d trials loaded; want 2", err, res.Loaded)
	}
	if _, err := e.Run(context.Background(), Config{Out: dir, Seed: 1, Mode: Quick}); err == nil || !strings.Contains(err.Error(), "other settings") {
		t.Errorf("the default p = 0.5 on a journal of p = 0.3: %v", err)
	}
	flags, err := OptionFlags()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range flags {
		found = found || (f.Name == "p" && f.Kind == "float" && f.Experiments[0] == "coin")
	}
	if !found {
		t.Errorf("no --p flag for the toy among %+v", flags)
	}
}
