package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dstein/dstein/experiment"
	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/internal/shellquote"
)

// slurmOptions are the flags of dstein experiment --slurm.
type slurmOptions struct {
	on, submit bool
	shards     int
	partition  string
	time       string
	cpus       int
	bin        string
}

// slurmFlags are the flags that only --slurm reads.
var slurmFlags = []string{"shards", "partition", "time", "cpus", "submit", "dstein"}

func (o *slurmOptions) register(fs *pflag.FlagSet) {
	fs.BoolVar(&o.on, "slurm", false, "write a Slurm job array (one task per shard) and a merge job that runs after it, into DIR/slurm; run nothing here")
	fs.IntVar(&o.shards, "shards", 10, "--slurm: the number of shards, one array task each (at most the trials; the default becomes the trials when they are fewer)")
	fs.StringVar(&o.partition, "partition", "", "--slurm: the partition (default: the cluster's)")
	fs.StringVar(&o.time, "time", "04:00:00", "--slurm: the time limit of each task (sbatch --time)")
	fs.IntVar(&o.cpus, "cpus", 2, "--slurm: CPUs per task")
	fs.BoolVar(&o.submit, "submit", false, "--slurm: submit both jobs with sbatch and print their ids")
	fs.StringVar(&o.bin, "dstein", "", "--slurm: the dstein binary the jobs run, on a file system the nodes share (default: this one)")
}

func (o *slurmOptions) changed(cmd *cobra.Command) bool {
	for _, f := range slurmFlags {
		if cmd.Flags().Changed(f) {
			return true
		}
	}
	return false
}

// slurmValue is what a value written into a script may hold: sbatch reads
// #SBATCH lines without a shell, so nothing is quoted there.
var slurmValue = regexp.MustCompile(`^[A-Za-z0-9_.:,+=/-]*$`)

// slurmTime is the time limit sbatch --time reads (man sbatch).
var slurmTime = regexp.MustCompile(`^(?:[0-9]+(?::[0-9]+){0,2}|[0-9]+-[0-9]+(?::[0-9]+){0,2}|(?i:unlimited|infinite))$`)

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return shellquote.Quote(s) }

// writeSlurm writes DIR/slurm/NAME-array.sbatch, whose task K runs shard
// K of N into DIR/shard-K (resuming its journal when resubmitted), and
// DIR/slurm/NAME-merge.sbatch, which merges the shards into DIR; with
// --submit it submits the array, then the merge with
// --dependency=afterok on it.
func writeSlurm(e *env, cmd *cobra.Command, name, out string, o slurmOptions) error {
	if o.shards < 1 || o.shards > 10000 {
		return usagef("--shards must be between 1 and 10000, got %d", o.shards)
	}
	if o.cpus < 1 {
		return usagef("--cpus must be at least 1, got %d", o.cpus)
	}
	if !slurmValue.MatchString(o.partition) {
		return usagef("--partition %q: want a Slurm partition name (letters, digits and _.:,+=/-)", o.partition)
	}
	if !slurmTime.MatchString(o.time) {
		return usagef("--time %q: want a Slurm time limit: MINUTES, MINUTES:SECONDS, HOURS:MINUTES:SECONDS, DAYS-HOURS, DAYS-HOURS:MINUTES, DAYS-HOURS:MINUTES:SECONDS or UNLIMITED", o.time)
	}
	bin := o.bin
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding this dstein binary for the jobs: %w (give one with --dstein)", err)
		}
		bin = exe
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	if info, err := os.Stat(bin); err != nil || info.IsDir() {
		return usagef("--dstein %s: not a file", bin)
	}
	dir, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	// The experiment's own flags, as given, for every task.
	var args []string
	var bad error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "out-dir", "slurm":
			return
		}
		for _, s := range slurmFlags {
			if f.Name == s {
				return
			}
		}
		v := f.Value.String()
		if f.Name == "uai" {
			abs, err := filepath.Abs(v)
			if err != nil {
				bad = err
			}
			v = abs
		}
		if f.Value.Type() == "bool" {
			if v == "true" {
				args = append(args, "--"+f.Name)
			}
			return
		}
		args = append(args, "--"+f.Name+"="+shellQuote(v))
	})
	if bad != nil {
		return bad
	}
	slurmDir := filepath.Join(dir, "slurm")
	if !slurmValue.MatchString(slurmDir) {
		return usagef("--out-dir %s: Slurm reads the log paths of #SBATCH lines without a shell, so the directory may hold only letters, digits and _.:,+=/- (no spaces or quotes)", dir)
	}
	if err := e.makeOutDir(slurmDir); err != nil {
		return err
	}
	header := func(job string, array bool) string {
		var b strings.Builder
		b.WriteString("#!/bin/bash\n")
		fmt.Fprintf(&b, "#SBATCH --job-name=%s\n", job)
		if array {
			fmt.Fprintf(&b, "#SBATCH --array=1-%d\n", o.shards)
			fmt.Fprintf(&b, "#SBATCH --output=%s/%s-%%a.log\n", slurmDir, name)
		} else {
			fmt.Fprintf(&b, "#SBATCH --output=%s/%s-merge.log\n", slurmDir, name)
		}
		fmt.Fprintf(&b, "#SBATCH --cpus-per-task=%d\n", o.cpus)
		fmt.Fprintf(&b, "#SBATCH --ntasks=1\n")
		if array {
			fmt.Fprintf(&b, "#SBATCH --time=%s\n", o.time)
		}
		if o.partition != "" {
			fmt.Fprintf(&b, "#SBATCH --partition=%s\n", o.partition)
		}
		return b.String()
	}
	flags := strings.Join(args, " ")
	if flags != "" {
		flags = " " + flags
	}
	array := header("dstein-"+name, true) + fmt.Sprintf(`# Written by dstein experiment %s --slurm: task K runs shard K of %d into
# %s/shard-K. A task that failed or ran out of time resumes its shard's
# journal when resubmitted: sbatch --array=K %s/%s-array.sbatch
set -euo pipefail
export GOMAXPROCS=${SLURM_CPUS_PER_TASK:-%d}
k=${SLURM_ARRAY_TASK_ID:?run this script with sbatch, as a job array}
exec %s experiment %s%s --shard "$k/%d" --out-dir %s/shard-"$k"
`, name, o.shards, shellQuote(dir), shellQuote(slurmDir), name, o.cpus, shellQuote(bin), name, flags, o.shards, shellQuote(dir))
	var shardDirs []string
	for k := 1; k <= o.shards; k++ {
		shardDirs = append(shardDirs, shellQuote(filepath.Join(dir, "shard-"+strconv.Itoa(k))))
	}
	uai := ""
	if f := cmd.Flags().Lookup("uai"); f != nil && f.Changed {
		abs, _ := filepath.Abs(f.Value.String())
		uai = " --uai=" + shellQuote(abs)
	}
	merge := header("dstein-"+name+"-merge", false) + fmt.Sprintf(`# Written by dstein experiment %s --slurm: merges the %d shards into %s
# (tables, CSVs, figures as one unsharded run). It refuses an incomplete set
# and names the missing trials; resubmit their tasks, then this script.
set -euo pipefail
export GOMAXPROCS=${SLURM_CPUS_PER_TASK:-%d}
exec %s merge %s --out-dir %s%s \
	%s
`, name, o.shards, shellQuote(dir), o.cpus, shellQuote(bin), name, shellQuote(dir), uai, strings.Join(shardDirs, " \\\n\t"))
	arrayPath := filepath.Join(slurmDir, name+"-array.sbatch")
	mergePath := filepath.Join(slurmDir, name+"-merge.sbatch")
	for _, path := range []string{arrayPath, mergePath} {
		if err := safeio.Owned(path); err != nil {
			return err
		}
	}
	for path, text := range map[string]string{arrayPath: array, mergePath: merge} {
		if err := safeio.Replace(path, func(w *bufio.Writer) error { _, err := w.WriteString(text); return err }); err != nil {
			return err
		}
		if err := os.Chmod(path, 0o755); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stdout, "wrote %s (%d tasks) and %s\n", arrayPath, o.shards, mergePath)
	if !o.submit {
		fmt.Fprintf(e.stdout, "submit them with:\n  jid=$(sbatch --parsable %s)\n  sbatch --dependency=afterok:${jid%%%%;*} %s\n", shellQuote(arrayPath), shellQuote(mergePath))
		return nil
	}
	id, err := sbatch(e, arrayPath)
	if err != nil {
		return err
	}
	mid, err := sbatch(e, "--dependency=afterok:"+id, mergePath)
	if err != nil {
		return fmt.Errorf("%w (the array, job %s, was submitted; submit the merge yourself when it has finished: sbatch %s)", err, id, mergePath)
	}
	fmt.Fprintf(e.stdout, "submitted the array as job %s and the merge as job %s (runs when every task has succeeded)\n", id, mid)
	return nil
}

// sbatch submits with sbatch --parsable and returns the job id.
func sbatch(e *env, args ...string) (string, error) {
	path, err := exec.LookPath("sbatch")
	if err != nil {
		return "", fmt.Errorf("--submit: sbatch is not on the PATH (is this a Slurm login node?); the scripts are written, submit them there")
	}
	var stdout, stderr bytes.Buffer
	c := exec.CommandContext(e.ctx, path, append([]string{"--parsable"}, args...)...)
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return "", fmt.Errorf("sbatch %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	// --parsable prints "id" or "id;cluster".
	id, _, _ := strings.Cut(strings.TrimSpace(stdout.String()), ";")
	if _, err := strconv.Atoi(id); err != nil {
		return "", fmt.Errorf("sbatch printed %q, not a job id", stdout.String())
	}
	return id, nil
}

func newMergeCmd(e *env) *cobra.Command {
	var out, uaiDir string
	var mem memoryFlag
	cmd := &cobra.Command{
		Use:   "merge NAME --out-dir DIR SHARD_DIR...",
		Short: "Join the trial journals of an experiment's shards (--shard K/N) and write its tables, CSVs and figures",
		Long: `Join the trial journals that "dstein experiment NAME --shard K/N" wrote
into the given directories, check that every shard was made with the same
settings that change results, that no trial is in two shards and that none
is missing (the missing trials are named), and write into DIR the journal
and the same tables, CSVs and figures as one unsharded run. Nothing is
computed. The suite on UAI networks needs --uai DIR again.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usagef("merge needs NAME and at least one shard directory")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ex, err := experiment.Get(args[0])
			if err != nil {
				return usageError{err}
			}
			if out == "" {
				return usagef("--out-dir DIR is required")
			}
			if err := e.makeOutDir(out); err != nil {
				return err
			}
			budget, err := mem.budget()
			if err != nil {
				return err
			}
			cfg := experiment.Config{Out: out, UAIDir: uaiDir, Log: e.stderr, Budget: budget, Version: version()}
			res, err := ex.Merge(e.ctx, cfg, args[1:])
			if err != nil {
				if e.ctx.Err() != nil {
					return interrupted{"interrupted; run the same command again"}
				}
				return err
			}
			fmt.Fprintf(e.stdout, "%s: %s\n\n", ex.Name, ex.Title)
			experiment.PrintTable(e.stdout, res)
			fmt.Fprintf(e.stdout, "\nmerged %d shards; wrote %s\n", len(args)-1, strings.Join(res.Files, ", "))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out-dir", "", "output directory of the merged run (created if missing)")
	cmd.Flags().StringVar(&uaiDir, "uai", "", "suite: the directory of UAI networks the shards scored")
	mem.register(cmd.Flags())
	return cmd
}
