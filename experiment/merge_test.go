package experiment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShardsMerge runs experiments whole and as N shards (N = 1, 2, 3, and
// 5 trials over 3 shards: an uneven split), merges the shards and checks
// that the merged CSV equals the unsharded one apart from the seconds
// columns, and that the merged journal computes nothing on a resume.
func TestShardsMerge(t *testing.T) {
	for _, tc := range []struct {
		name   string
		trials int
		shards []int
	}{
		{"ising-n", 4, []int{1, 2, 3}},
		{"categorical", 5, []int{3}},
		{"gof-level", 5, []int{2}},
	} {
		e, _ := Get(tc.name)
		root := t.TempDir()
		whole := filepath.Join(root, "whole")
		cfg := Config{Out: whole, Seed: 2, Mode: Tiny, Trials: tc.trials}
		if _, err := e.Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(filepath.Join(whole, tc.name+".csv"))
		for _, n := range tc.shards {
			var dirs []string
			for k := 1; k <= n; k++ {
				d := filepath.Join(root, fmt.Sprintf("n%d-shard%d", n, k))
				c := cfg
				c.Out, c.Shard = d, Shard{K: k, N: n}
				if _, err := e.Run(context.Background(), c); err != nil {
					t.Fatalf("%s shard %d/%d: %v", tc.name, k, n, err)
				}
				dirs = append(dirs, d)
			}
			out := filepath.Join(root, fmt.Sprintf("merged%d", n))
			if _, err := e.Merge(context.Background(), Config{Out: out}, dirs); err != nil {
				t.Fatalf("%s, %d shards: %v", tc.name, n, err)
			}
			got, _ := os.ReadFile(filepath.Join(out, tc.name+".csv"))
			if a, b := withoutTiming(want), withoutTiming(got); a != b {
				t.Errorf("%s, %d shards: the merged CSV differs from the unsharded one:\n%s\n---\n%s", tc.name, n, a, b)
			}
			for _, f := range []string{".png", ".svg", ".trials.csv", ".trials.json"} {
				if _, err := os.Stat(filepath.Join(out, tc.name+f)); err != nil {
					t.Errorf("%s, %d shards: %v", tc.name, n, err)
				}
			}
			// Merging again into the same directory is allowed (a rerun
			// of the merge job).
			if _, err := e.Merge(context.Background(), Config{Out: out}, dirs); err != nil {
				t.Errorf("%s, %d shards: a second merge: %v", tc.name, n, err)
			}
		}
	}
}

// TestMergeRefuses checks the refusals: a missing shard (naming its
// trials), a shard given twice, a trial in two shards, shards of other
// settings, and replacing a journal that a merge did not write.
func TestMergeRefuses(t *testing.T) {
	e, _ := Get("ising-n")
	root := t.TempDir()
	cfg := Config{Seed: 2, Mode: Tiny, Trials: 5}
	shard := func(name string, k, n int, seed uint64) string {
		c := cfg
		c.Out, c.Shard, c.Seed = filepath.Join(root, name), Shard{K: k, N: n}, seed
		if _, err := e.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		return c.Out
	}
	a, b, c := shard("a", 1, 3, 2), shard("b", 2, 3, 2), shard("c", 3, 3, 2)
	other := shard("other", 3, 3, 9)
	whole := filepath.Join(root, "whole")
	wc := cfg
	wc.Out = whole
	if _, err := e.Run(context.Background(), wc); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "out")
	for _, tc := range []struct {
		dirs []string
		out  string
		want string
	}{
		{[]string{a, c}, out, "no shard holds trial 1, 4 of trials 0 to 4"},
		{[]string{a, b, b}, out, "given twice"},
		{[]string{a, b, c, whole}, out, "in two shards"},
		{[]string{a, b, other}, out, "different settings"},
		{[]string{a, b, c}, whole, "not one that dstein merge wrote"},
		{[]string{a, b, c}, a, "one of the shards' directories"},
		{[]string{a, filepath.Join(root, "nothing")}, out, "no ising-n.trials.csv there"},
	} {
		_, err := e.Merge(context.Background(), Config{Out: tc.out}, tc.dirs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("merge of %v into %s: %v; want an error with %q", tc.dirs, tc.out, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "ising-n.trials.csv")); err == nil {
		t.Error("a refused merge wrote a journal")
	}
	// A shard's journal resumes only as that shard.
	c2 := cfg
	c2.Out, c2.Shard = a, Shard{K: 2, N: 3}
	if _, err := e.Run(context.Background(), c2); err == nil || !strings.Contains(err.Error(), "shard 1/3") {
		t.Errorf("shard 1/3's journal resumed as shard 2/3: %v", err)
	}
	for _, bad := range []string{"0/3", "4/3", "1/0", "x", "1/2/3"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("shard %q accepted", bad)
		}
	}
	bnn, _ := Get("bnn")
	if _, err := bnn.Merge(context.Background(), Config{Out: out}, []string{a}); err == nil || !strings.Contains(err.Error(), "not sharded") {
		t.Errorf("bnn merge: %v", err)
	}
}
