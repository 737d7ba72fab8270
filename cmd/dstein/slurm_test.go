package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestShardMergeCLI runs an experiment as 2 shards and merges them with
// the command line, and checks the merged CSV against an unsharded run
// (seconds columns aside) and the error of an incomplete set.
func TestShardMergeCLI(t *testing.T) {
	root := t.TempDir()
	whole := filepath.Join(root, "whole")
	if code, _, errs := dstein(t, "experiment", "ising-n", "--tiny", "--trials", "3", "--out-dir", whole); code != 0 {
		t.Fatal(errs)
	}
	var shards []string
	for _, k := range []string{"1", "2"} {
		d := filepath.Join(root, "s"+k)
		if code, _, errs := dstein(t, "experiment", "ising-n", "--tiny", "--trials", "3", "--shard", k+"/2", "--out-dir", d); code != 0 {
			t.Fatal(errs)
		}
		shards = append(shards, d)
	}
	merged := filepath.Join(root, "merged")
	if code, _, errs := dstein(t, "merge", "ising-n", "--out-dir", merged, shards[0]); code == 0 || !strings.Contains(errs, "no shard holds trial 1 of trials 0 to 2") {
		t.Errorf("an incomplete merge: exit %d, %s", code, errs)
	}
	code, out, errs := dstein(t, append([]string{"merge", "ising-n", "--out-dir", merged}, shards...)...)
	if code != 0 || !strings.Contains(out, "merged 2 shards") {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	a, _ := os.ReadFile(filepath.Join(whole, "ising-n.csv"))
	b, _ := os.ReadFile(filepath.Join(merged, "ising-n.csv"))
	if noSeconds(a) != noSeconds(b) {
		t.Errorf("merged CSV differs from the unsharded one:\n%s\n---\n%s", noSeconds(a), noSeconds(b))
	}
	for _, bad := range [][]string{
		{"experiment", "ising-n", "--tiny", "--shard", "3/2", "--out-dir", root},
		{"experiment", "bnn", "--tiny", "--shard", "1/2", "--out-dir", root},
		{"experiment", "ising-n", "--tiny", "--shards", "3", "--out-dir", root},
		{"experiment", "ising-n", "--tiny", "--slurm", "--shard", "1/2", "--out-dir", root},
		{"experiment", "ising-n", "--tiny", "--slurm", "--partition", "a b", "--out-dir", root},
		{"merge", "ising-n", "--out-dir", root},
	} {
		if code, _, errs := dstein(t, bad...); code != 2 {
			t.Errorf("%v: exit %d, %s", bad, code, errs)
		}
	}
}

func noSeconds(csv []byte) string {
	var keep []string
	for _, l := range strings.Split(string(csv), "\n") {
		if !strings.Contains(l, ",seconds,") && !strings.Contains(l, ",ess_per_s,") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestSlurmScripts writes the array and merge scripts and checks what
// they run: every task its shard into DIR/shard-K with the experiment's
// flags, the merge all shards into DIR; bash -n accepts both.
func TestSlurmScripts(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := dstein(t, "experiment", "ising-n", "--quick", "--field", "0.2", "--slurm", "--shards", "3", "--partition", "short", "--time", "01:00:00", "--cpus", "4", "--out-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "sbatch --dependency=afterok") {
		t.Errorf("no submit instructions: %s", out)
	}
	arr, err := os.ReadFile(filepath.Join(dir, "slurm", "ising-n-array.sbatch"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --array=1-3", "#SBATCH --partition=short", "#SBATCH --time=01:00:00", "#SBATCH --cpus-per-task=4",
		"experiment ising-n --field=0.2 --quick --shard \"$k/3\" --out-dir " + dir + "/shard-\"$k\""} {
		if !strings.Contains(string(arr), want) {
			t.Errorf("the array script lacks %q:\n%s", want, arr)
		}
	}
	merge, _ := os.ReadFile(filepath.Join(dir, "slurm", "ising-n-merge.sbatch"))
	for _, want := range []string{"merge ising-n --out-dir " + dir, dir + "/shard-1", dir + "/shard-3"} {
		if !strings.Contains(string(merge), want) {
			t.Errorf("the merge script lacks %q:\n%s", want, merge)
		}
	}
	if bash, err := exec.LookPath("bash"); err == nil {
		for _, f := range []string{"ising-n-array.sbatch", "ising-n-merge.sbatch"} {
			if out, err := exec.Command(bash, "-n", filepath.Join(dir, "slurm", f)).CombinedOutput(); err != nil {
				t.Errorf("bash -n %s: %v %s", f, err, out)
			}
		}
	}
	// A script there that dstein did not write is refused.
	foreign := t.TempDir()
	os.MkdirAll(filepath.Join(foreign, "slurm"), 0o755)
	os.WriteFile(filepath.Join(foreign, "slurm", "ising-n-merge.sbatch"), []byte("#!/bin/bash\necho mine\n"), 0o644)
	if code, _, errs := dstein(t, "experiment", "ising-n", "--quick", "--slurm", "--out-dir", foreign); code == 0 || !strings.Contains(errs, "not written by dstein") {
		t.Errorf("a foreign merge script: exit %d, %s", code, errs)
	}
	// --submit without sbatch says so and keeps the scripts.
	t.Setenv("PATH", t.TempDir())
	if code, _, errs := dstein(t, "experiment", "ising-n", "--quick", "--slurm", "--submit", "--out-dir", dir); code == 0 || !strings.Contains(errs, "sbatch is not on the PATH") {
		t.Errorf("--submit without sbatch: exit %d, %s", code, errs)
	}
}

// More shards than trials would leave shards of no trials, which write no
// journal, so that the merge after a Slurm array fails: refused, by
// --slurm (exit 2) and by a shard's own run (exit 1), before any file.
func TestShardsBeyondTrialsRefused(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := dstein(t, "experiment", "ising-n", "--tiny", "--trials", "4", "--slurm", "--shards", "5", "--out-dir", filepath.Join(dir, "sl"))
	if code != 2 || !strings.Contains(errs, "--shards 5: ising-n runs 4 trials here, so at most 4 shards hold any") {
		t.Errorf("--slurm --shards 5 of 4 trials: exit %d, %q", code, errs)
	}
	code, _, errs = dstein(t, "experiment", "ising-n", "--tiny", "--shard", "3/3", "--out-dir", filepath.Join(dir, "s3"))
	if code != 1 || !strings.Contains(errs, "shard 3/3 holds no trial: ising-n runs 2 trials") {
		t.Errorf("--shard 3/3 of 2 trials: exit %d, %q", code, errs)
	}
	for _, d := range []string{"sl", "s3"} {
		if _, err := os.Stat(filepath.Join(dir, d)); err == nil {
			t.Errorf("%s was made", d)
		}
	}
	if code, _, errs := dstein(t, "experiment", "ising-n", "--tiny", "--shard", "2/2", "--out-dir", filepath.Join(dir, "s2")); code != 0 {
		t.Errorf("--shard 2/2 of 2 trials: exit %d, %s", code, errs)
	}
}
