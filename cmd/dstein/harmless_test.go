package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/dstein/dstein/experiment"
	"github.com/dstein/dstein/internal/safeio"
)

// The second round of abusive cases (issue "harmless everywhere, round
// two"), through run with the harness of abuse_test.go: files inside
// output directories, work after a signal, refusals that leave nothing
// behind, exit codes and messages, and damaged journals.

// expDir runs a tiny experiment into dir/name and returns that directory.
func expDir(t *testing.T, dir, name, exp string, extra ...string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	args := append([]string{"experiment", exp, "--tiny", "--out-dir", out}, extra...)
	if code, _, errs := dstein(t, args...); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errs)
	}
	return out
}

// isType checks that path is still a file of the given type.
func isType(path string, want fs.FileMode) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		info, err := os.Lstat(filepath.Join(dir, path))
		if err != nil || info.Mode().Type() != want {
			t.Errorf("%s: %v %v, want type %v", path, info, err, want)
		}
	}
}

// outputsOf are the files a successful tiny run of experiment name in out
// may write or change.
func outputsOf(out, name string) []string {
	var m []string
	for _, ext := range []string{".csv", ".png", ".svg", ".trials.csv", ".trials.json"} {
		m = append(m, out+"/"+name+ext)
	}
	return append(m, out+"/.dstein-files.json")
}

func harmlessCases() []abuseCase {
	cat := func(out string, extra ...string) []string {
		return append([]string{"experiment", "categorical", "--tiny", "--out-dir", out}, extra...)
	}
	userFileIn := func(name string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			os.Mkdir(filepath.Join(dir, "e"), 0o755)
			put(t, dir, "e/"+name, "mine")
			return cat(filepath.Join(dir, "e"))
		}
	}
	shard := func(t *testing.T, dir string) string { return expDir(t, dir, "s1", "ising-n", "--shard", "1/1") }
	newDir := func(args ...string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			for i, a := range args {
				args[i] = strings.ReplaceAll(a, "NEW", filepath.Join(dir, "new", "sub"))
			}
			return args
		}
	}
	return []abuseCase{
		// 1. Files inside output directories that dstein did not write.
		{name: "experiment over a user's figure", setup: userFileIn("categorical.png"), code: 1, want: "categorical.png exists and was not written by dstein"},
		{name: "experiment over a user's table", setup: userFileIn("categorical.csv"), code: 1, want: "categorical.csv exists and was not written by dstein"},
		{name: "experiment over a user's SVG", setup: userFileIn("categorical.svg"), code: 1, want: "categorical.svg exists and was not written by dstein"},
		{name: "experiment over a user's journal settings", setup: userFileIn("categorical.trials.json"), code: 1, want: "categorical.trials.json"},
		{name: "experiment over its own table edited since", setup: func(t *testing.T, dir string) []string {
			out := expDir(t, dir, "e", "categorical")
			f, _ := os.OpenFile(filepath.Join(out, "categorical.csv"), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("my note\n")
			f.Close()
			return cat(out)
		}, code: 1, want: "categorical.csv has changed since dstein wrote it"},
		{name: "experiment over its own files", setup: func(t *testing.T, dir string) []string {
			return cat(expDir(t, dir, "e", "categorical"))
		}, code: 0, want: "categorical:", may: outputsOf("e", "categorical")},
		{name: "experiment over a link in place of its figure", setup: func(t *testing.T, dir string) []string {
			out := expDir(t, dir, "e", "categorical")
			os.Remove(filepath.Join(out, "categorical.svg"))
			put(t, dir, "mine.svg", "<svg/>")
			os.Symlink(filepath.Join(dir, "mine.svg"), filepath.Join(out, "categorical.svg"))
			return cat(out)
		}, code: 1, want: "symbolic link"},
		{name: "experiment over a FIFO in place of its table", setup: func(t *testing.T, dir string) []string {
			os.Mkdir(filepath.Join(dir, "e"), 0o755)
			mkfifo(t, filepath.Join(dir, "e", "categorical.csv"))
			return cat(filepath.Join(dir, "e"))
		}, code: 1, want: "named pipe", check: isType("e/categorical.csv", fs.ModeNamedPipe)},
		{name: "experiment over a damaged record of dstein's files", setup: func(t *testing.T, dir string) []string {
			out := expDir(t, dir, "e", "categorical")
			put(t, dir, "e/.dstein-files.json", `{"format": "dstein.files", "files": {"categorical.csv": {"sha256": ["zz"]}}}`)
			return cat(out)
		}, code: 1, want: "is damaged"},
		{name: "merge over a user's table", setup: func(t *testing.T, dir string) []string {
			s := shard(t, dir)
			os.Mkdir(filepath.Join(dir, "m"), 0o755)
			put(t, dir, "m/ising-n.csv", "mine")
			return []string{"merge", "ising-n", "--out-dir", filepath.Join(dir, "m"), s}
		}, code: 1, want: "ising-n.csv exists and was not written by dstein"},
		{name: "merge over a user's journal settings", setup: func(t *testing.T, dir string) []string {
			s := shard(t, dir)
			os.Mkdir(filepath.Join(dir, "m"), 0o755)
			put(t, dir, "m/ising-n.trials.json", `{"mine": true}`)
			return []string{"merge", "ising-n", "--out-dir", filepath.Join(dir, "m"), s}
		}, code: 1, want: "ising-n.trials.json"},
		{name: "merge twice", setup: func(t *testing.T, dir string) []string {
			s := shard(t, dir)
			m := filepath.Join(dir, "m")
			if code, _, errs := dstein(t, "merge", "ising-n", "--out-dir", m, s); code != 0 {
				t.Fatal(errs)
			}
			return []string{"merge", "ising-n", "--out-dir", m, s}
		}, code: 0, want: "merged 1 shards", may: outputsOf("m", "ising-n")},
		{name: "reproduce over a user's table text", setup: func(t *testing.T, dir string) []string {
			os.MkdirAll(filepath.Join(dir, "r", "categorical"), 0o755)
			put(t, dir, "r/categorical/categorical.txt", "mine")
			return []string{"reproduce", "--tiny", "--only", "categorical", "--out-dir", filepath.Join(dir, "r")}
		}, code: 1, want: "categorical.txt exists and was not written by dstein"},
		{name: "reproduce over a user's figure", setup: func(t *testing.T, dir string) []string {
			os.MkdirAll(filepath.Join(dir, "r", "categorical"), 0o755)
			put(t, dir, "r/categorical/categorical.png", "mine")
			return []string{"reproduce", "--tiny", "--only", "categorical", "--out-dir", filepath.Join(dir, "r")}
		}, code: 1, want: "categorical.png exists and was not written by dstein"},
		{name: "reproduce over a user's list", setup: func(t *testing.T, dir string) []string {
			os.Mkdir(filepath.Join(dir, "r"), 0o755)
			put(t, dir, "r/reproduce.json", `{"dstein_version": "mine"}`)
			return []string{"reproduce", "--tiny", "--only", "categorical", "--out-dir", filepath.Join(dir, "r")}
		}, code: 1, want: "reproduce.json exists and was not written by dstein"},
		{name: "bnn train over a user's result.json", setup: func(t *testing.T, dir string) []string {
			os.Mkdir(filepath.Join(dir, "b"), 0o755)
			put(t, dir, "b/result.json", "{}")
			return []string{"bnn", "train", "--arch", "mlp", "--method", "ste", "--ensemble", "1", "--epochs", "1", "--train-limit", "64", "--test-limit", "64", "--out-dir", filepath.Join(dir, "b")}
		}, code: 1, want: "result.json exists and was not written by dstein"},
		{name: "slurm over a user's script", setup: func(t *testing.T, dir string) []string {
			os.MkdirAll(filepath.Join(dir, "e", "slurm"), 0o755)
			put(t, dir, "e/slurm/ising-n-array.sbatch", "#!/bin/sh\n")
			return []string{"experiment", "ising-n", "--slurm", "--out-dir", filepath.Join(dir, "e")}
		}, code: 1, want: "ising-n-array.sbatch exists and was not written by dstein"},
		{name: "restart keeps a user's .old", setup: func(t *testing.T, dir string) []string {
			out := expDir(t, dir, "e", "categorical")
			put(t, dir, "e/categorical.trials.csv.old", "mine")
			return cat(out, "--restart")
		}, code: 0, want: "categorical:", may: append(outputsOf("e", "categorical"), "e/categorical.trials.csv.old.2", "e/categorical.trials.json.old.2"),
			check: func(t *testing.T, dir string) {
				// The pair keeps one suffix, the first free for both.
				for _, f := range []string{"e/categorical.trials.csv.old.2", "e/categorical.trials.json.old.2"} {
					if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
						t.Errorf("the old journal was not set aside as %s: %v", f, err)
					}
				}
			}},
		{name: "restart twice keeps both old journals", setup: func(t *testing.T, dir string) []string {
			out := expDir(t, dir, "e", "categorical")
			if code, _, errs := dstein(t, cat(out, "--restart")...); code != 0 {
				t.Fatal(errs)
			}
			return cat(out, "--restart")
		}, code: 0, want: "categorical:", may: append(outputsOf("e", "categorical"), "e/categorical.trials.csv.old.2", "e/categorical.trials.json.old.2")},

		{name: "experiment over a user's file in place of its lock", setup: userFileIn("categorical.trials.lock"), code: 1, want: "categorical.trials.lock is in the place of a lock file and is not one of dstein's"},
		{name: "reproduce over a user's file in place of its lock", setup: func(t *testing.T, dir string) []string {
			os.Mkdir(filepath.Join(dir, "r"), 0o755)
			put(t, dir, "r/reproduce.lock", "my notes")
			return []string{"reproduce", "--tiny", "--only", "categorical", "--out-dir", filepath.Join(dir, "r")}
		}, code: 1, want: "reproduce.lock is in the place of a lock file"},
		{name: "experiment over a stale lock of dstein's", setup: func(t *testing.T, dir string) []string {
			os.Mkdir(filepath.Join(dir, "e"), 0o755)
			put(t, dir, "e/categorical.trials.lock", "dstein lock, pid 1\n") // left by a killed run
			return cat(filepath.Join(dir, "e"))
		}, code: 0, want: "categorical:", may: append(outputsOf("e", "categorical"), "e/categorical.trials.lock")},
		{name: "first-round journal beside a user's settings file", setup: func(t *testing.T, dir string) []string {
			out := expDir(t, dir, "e", "categorical")
			p := filepath.Join(out, "categorical.trials.csv")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append([]byte("# dstein experiment categorical seed=1 mode=tiny\n"), regexp.MustCompile(`(?m),_done,[0-9]+$`).ReplaceAll(b, []byte(",_done,1"))...), 0o644)
			put(t, dir, "e/categorical.trials.json", "my notes")
			return cat(out)
		}, code: 1, want: "categorical.trials.json"},
		{name: "bnn train beside another run", setup: func(t *testing.T, dir string) []string {
			os.Mkdir(filepath.Join(dir, "b"), 0o755)
			l, err := safeio.TryLock(filepath.Join(dir, "b", "train.lock"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(l.Unlock)
			return []string{"bnn", "train", "--arch", "mlp", "--method", "ste", "--ensemble", "1", "--epochs", "1", "--train-limit", "64", "--test-limit", "64", "--out-dir", filepath.Join(dir, "b")}
		}, code: 1, want: "another dstein is training"},

		// A refused command leaves no directory it created behind.
		{name: "quick and tiny into a new directory", setup: newDir("experiment", "categorical", "--quick", "--tiny", "--out-dir", "NEW"), code: 2, want: "exclude each other"},
		{name: "suite with a missing --uai into a new directory", setup: newDir("experiment", "suite", "--tiny", "--uai", "/nonexistent-uai", "--out-dir", "NEW"), code: 1, want: "nonexistent-uai"},
		{name: "unknown variant into a new directory", setup: newDir("experiment", "variants-ising", "--tiny", "--variants", "nosuch", "--out-dir", "NEW"), code: 1, want: "nosuch"},
		{name: "slurm time banana into a new directory", setup: newDir("experiment", "ising-n", "--slurm", "--time", "banana", "--out-dir", "NEW"), code: 2, want: `--time "banana"`},
		{name: "merge of a directory without a journal into a new directory", setup: func(t *testing.T, dir string) []string {
			return newDir("merge", "ising-n", "--out-dir", "NEW", dir)(t, dir)
		}, code: 1, want: "no ising-n.trials.csv there"},
		{name: "bnn cifar10 without data into a new directory", setup: newDir("bnn", "train", "--data", "cifar10", "--out-dir", "NEW"), code: 1, want: "CIFAR-10 needs --data-dir"},
		{name: "reproduce --only empty", setup: newDir("reproduce", "--only", "", "--out-dir", "NEW"), code: 2, want: "names no result"},
		{name: "reproduce --only , ,", setup: newDir("reproduce", "--only", " , ,", "--out-dir", "NEW"), code: 2, want: "names no result"},
		{name: "reproduce --only suite-uai without --uai", setup: newDir("reproduce", "--only", "suite-uai", "--out-dir", "NEW"), code: 2, want: "needs --uai DIR"},
		{name: "trials beyond count", setup: newDir("experiment", "categorical", "--trials", "9223372036854775807", "--out-dir", "NEW"), code: 2, want: "--trials"},

		// 2. A signal (here: a context canceled before the command starts)
		// stops every phase with exit 130 and writes nothing more.
		{name: "interrupted reproduce keeps the page", setup: func(t *testing.T, dir string) []string {
			r := filepath.Join(dir, "r")
			args := []string{"reproduce", "--tiny", "--only", "categorical", "--out-dir", r}
			if code, _, errs := dstein(t, args...); code != 0 {
				t.Fatal(errs)
			}
			return args
		}, canceled: true, code: exitInterrupted, want: "interrupted"},
		{name: "reproduce refused by another's lock keeps the page", setup: func(t *testing.T, dir string) []string {
			r := filepath.Join(dir, "r")
			args := []string{"reproduce", "--tiny", "--only", "categorical", "--out-dir", r}
			if code, _, errs := dstein(t, args...); code != 0 {
				t.Fatal(errs)
			}
			l, err := safeio.TryLock(filepath.Join(r, "reproduce.lock"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(l.Unlock)
			return args
		}, code: 1, want: "another dstein reproduce is writing", may: []string{"r/reproduce.lock"}},
		{name: "interrupted experiment into a new directory", setup: newDir("experiment", "ising-n", "--tiny", "--out-dir", "NEW"), canceled: true, code: exitInterrupted, want: "interrupted before the first trial finished"},
		{name: "interrupted resume", setup: func(t *testing.T, dir string) []string {
			return cat(expDir(t, dir, "e", "categorical"))
		}, canceled: true, code: exitInterrupted, want: "interrupted"},
		{name: "interrupted merge", setup: func(t *testing.T, dir string) []string {
			return []string{"merge", "ising-n", "--out-dir", filepath.Join(dir, "m"), shard(t, dir)}
		}, canceled: true, code: exitInterrupted, want: "interrupted"},

		// 4. Exit codes and messages.
		{name: "newline in a path", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", filepath.Join(dir, "a\nb\x1b[31m.json")}
		}, code: 1, want: `a\nb\x1b[31m.json`},
		{name: "reproduce records the command quoted", setup: func(t *testing.T, dir string) []string {
			return []string{"reproduce", "--tiny", "--only", "categorical", "--out-dir", filepath.Join(dir, "my results")}
		}, code: 0, want: "wrote", check: func(t *testing.T, dir string) {
			raw, err := os.ReadFile(filepath.Join(dir, "my results", "reproduce.json"))
			if err != nil {
				t.Fatal(err)
			}
			var rep struct {
				Command string
				Results []experiment.Reproduced
			}
			json.Unmarshal(raw, &rep)
			want := "'" + filepath.Join(dir, "my results") + "'"
			if !strings.Contains(rep.Command, want) || len(rep.Results) != 1 || !strings.Contains(rep.Results[0].Command, "'"+filepath.Join(dir, "my results", "categorical")+"'") {
				t.Errorf("commands not quoted: %q, %+v", rep.Command, rep.Results)
			}
		}},

		// 3. Bounded parsers: deep nesting and huge numbers are refused
		// at once, with one line.
		{name: "pipeline nested 100000 deep", setup: func(t *testing.T, dir string) []string {
			p := put(t, dir, "p.json", strings.Repeat("[", 100000)+strings.Repeat("]", 100000))
			return []string{"sample", "--model", put(t, dir, "m.json", tinyIsing), "--pipeline", p}
		}, code: 1, want: "nest more than 1000 deep"},
		{name: "model nested 100000 deep", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", put(t, dir, "m.json", `{"type":"ising","n":2,"edges":`+strings.Repeat("[", 100000)+strings.Repeat("]", 100000)+`}`)}
		}, code: 1, want: "nest more than 1000 deep"},
		{name: "journal settings nested 40000 deep", setup: func(t *testing.T, dir string) []string {
			out := expDir(t, dir, "e", "categorical")
			side := filepath.Join(out, "categorical.trials.json")
			b, _ := os.ReadFile(side)
			os.WriteFile(side, []byte(strings.Replace(string(b), `"options": {}`, `"options": {}, "methods2": `+strings.Repeat("[", 40000)+strings.Repeat("]", 40000), 1)), 0o644)
			return cat(out)
		}, code: 1, want: "nest more than 1000 deep"},
		{name: "model with a byte order mark", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", put(t, dir, "m.json", "\ufeff"+tinyIsing), "--method", "gibbs", "--iters", "2", "--n", "3"}
		}, code: 0, want: "gibbs"},
		{name: "pipeline std 0", setup: func(t *testing.T, dir string) []string {
			p := put(t, dir, "p.json", `{"init":{"std":0},"stages":[{"method":"gibbs","iters":2}]}`)
			return []string{"sample", "--model", put(t, dir, "m.json", tinyIsing), "--pipeline", p}
		}, code: 1, want: `"std" is 0`},
		{name: "pipeline iterations that overflow", setup: func(t *testing.T, dir string) []string {
			p := put(t, dir, "p.json", `{"stages":[{"method":"gibbs","iters":9223372036854775807},{"method":"gibbs","iters":9223372036854775807}]}`)
			return []string{"sample", "--model", put(t, dir, "m.json", tinyIsing), "--pipeline", p}
		}, code: 1, want: "iterations"},
		{name: "draws times thin that overflow", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", put(t, dir, "m.json", tinyIsing), "--method", "gibbs", "--draws", "4611686018427387904", "--thin", "4"}
		}, code: 2, want: "more iterations than a run can count"},
		{name: "default with n that overflows", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", put(t, dir, "m.json", tinyIsing), "--n", "9223372036854775807"}
		}, code: 2, want: "more samples than a run can count"},

		// 5. Damaged journals.
		{name: "journal with an altered value", setup: func(t *testing.T, dir string) []string {
			out := expDir(t, dir, "e", "categorical")
			alterValue(t, filepath.Join(out, "categorical.trials.csv"))
			return cat(out)
		}, code: 1, want: "does not match its checksum"},
		{name: "merge of a shard with an altered value", setup: func(t *testing.T, dir string) []string {
			s := shard(t, dir)
			alterValue(t, filepath.Join(s, "ising-n.trials.csv"))
			return []string{"merge", "ising-n", "--out-dir", filepath.Join(dir, "m"), s}
		}, code: 1, want: "does not match its checksum"},
		{name: "journal with a line lost", setup: func(t *testing.T, dir string) []string {
			out := expDir(t, dir, "e", "categorical")
			p := filepath.Join(out, "categorical.trials.csv")
			b, _ := os.ReadFile(p)
			lines := strings.SplitAfter(string(b), "\n")
			os.WriteFile(p, []byte(strings.Join(append(lines[:2], lines[3:]...), "")), 0o644)
			return cat(out)
		}, code: 1, want: "does not match its checksum"},
		{name: "format-2 journal resumed and converted", setup: func(t *testing.T, dir string) []string {
			out := expDir(t, dir, "e", "categorical")
			p := filepath.Join(out, "categorical.trials.csv")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, regexp.MustCompile(`(?m),_done,[0-9]+$`).ReplaceAll(b, []byte(",_done,1")), 0o644)
			side := filepath.Join(out, "categorical.trials.json")
			b, _ = os.ReadFile(side)
			os.WriteFile(side, []byte(strings.Replace(string(b), `"format": 3`, `"format": 2`, 1)), 0o644)
			return cat(out)
		}, code: 0, want: "categorical:", may: outputsOf("e", "categorical"), check: func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "e", "categorical.trials.csv"))
			if strings.Contains(string(b), ",_done,1\n") {
				t.Error("the format-2 journal was not converted")
			}
			// Converted, it resumes with its checksums.
			if code, _, errs := dstein(t, "experiment", "categorical", "--tiny", "--out-dir", filepath.Join(dir, "e")); code != 0 {
				t.Errorf("the converted journal: %s", errs)
			}
		}},
	}
}

// alterValue changes the first metric value of a journal in place (a valid
// number, as an edit by hand or a flipped digit would leave it).
func alterValue(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	f := strings.Split(lines[1], ",")
	f[4] = fmt.Sprint(float64(len(f[4])%7) * 0.01) // some other number in [0, 1)
	if strings.Join(f, ",") == lines[1] {
		f[4] = "0.5"
	}
	lines[1] = strings.Join(f, ",")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestHarmlessRoundTwo(t *testing.T) {
	runAbuseCases(t, harmlessCases())
}

// fullWriter fails every write after the first limit bytes, as a full disk
// (/dev/full) does.
type fullWriter struct{ limit int }

func (w *fullWriter) Write(p []byte) (int, error) {
	if len(p) > w.limit {
		n := w.limit
		w.limit = 0
		return n, syscall.ENOSPC
	}
	w.limit -= len(p)
	return len(p), nil
}

// A command whose standard output could not be written (a table, a
// pipeline printed for a file) fails with a line that says so, not exit 0.
func TestStdoutWriteErrorFails(t *testing.T) {
	for _, args := range [][]string{
		{"methods", "--pipeline", "hybrid"},
		{"exact", "--model", "../../examples/ising-grid.json"},
		{"sample", "--model", "../../examples/ising-grid.json", "--method", "gibbs", "--iters", "5", "--n", "8"},
	} {
		for _, limit := range []int{0, 100} {
			var errb strings.Builder
			code := run(context.Background(), args, &fullWriter{limit: limit}, &errb)
			if code != exitError || !strings.Contains(errb.String(), "writing to standard output: no space left on device") {
				t.Errorf("%v, stdout full after %d bytes: exit %d, stderr %q; want %d and the write error", args, limit, code, errb.String(), exitError)
			}
		}
		// The same command with a working standard output succeeds.
		if code, _, errs := dstein(t, args...); code != exitOK {
			t.Errorf("%v: exit %d: %s", args, code, errs)
		}
	}
}
