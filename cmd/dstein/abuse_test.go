package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The abusive inputs of the safety issue, through the real entry point:
// each case gives a command line (built in a fresh directory), the exit
// code, a fragment of the one-line message, and which files of the
// directory may change; every other file, and every file a case names
// outside the directory (devices, FIFOs), must be exactly as before:
// same type, mode, contents.

const tinyIsing = `{"type":"ising","grid":{"rows":3,"cols":3},"coupling":0.2,"field":0.1}`

// snapshot records the type, mode and contents digest of every entry of
// dir, without following links.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		info, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		desc := info.Mode().String()
		if info.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			desc += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			desc += " -> " + l
		}
		out[strings.TrimPrefix(p, dir+"/")] = desc
		return nil
	})
	return out
}

type abuseCase struct {
	name  string
	setup func(t *testing.T, dir string) []string
	code  int
	want  string   // fragment of stderr (exit ≠ 0) or stdout (exit 0)
	may   []string // files of dir that may change or appear
	check func(t *testing.T, dir string)
	// canceled runs the command with a context canceled before it starts,
	// as a signal at its first check would.
	canceled bool
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
}

func put(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// samplesFor writes n exact samples of the model file m to dir/s.csv.
func samplesFor(t *testing.T, dir, m string, n int) string {
	t.Helper()
	p := filepath.Join(dir, "s.csv")
	code, _, errs := dstein(t, "sample", "--model", m, "--method", "exact", "--n", fmt.Sprint(n), "--out", p)
	if code != 0 {
		t.Fatalf("making samples: %s", errs)
	}
	return p
}

// trialRows writes the journal rows of one trial (key "method,x,trial")
// with the given "metric,value" pairs and its closing row, whose value is
// the CRC-32C of the metric rows, each ended by LF (the journal's
// checksum, written here independently of the experiment package).
func trialRows(key string, metrics ...string) string {
	var b strings.Builder
	for _, m := range metrics {
		b.WriteString(key + "," + m + "\n")
	}
	sum := crc32.Checksum([]byte(b.String()), crc32.MakeTable(crc32.Castagnoli))
	return b.String() + fmt.Sprintf("%s,_done,%d\n", key, sum)
}

func journalDir(t *testing.T, dir string, body string) string {
	t.Helper()
	out := filepath.Join(dir, "out")
	if code, _, errs := dstein(t, "experiment", "categorical", "--tiny", "--out-dir", out); code != 0 {
		t.Fatalf("making a journal: %s", errs)
	}
	if body != "" {
		p := filepath.Join(out, "categorical.trials.csv")
		data, _ := os.ReadFile(p)
		os.WriteFile(p, []byte(body+string(data[len("method,x,trial,metric,value\n"):])), 0o644)
	}
	return out
}

func abuseCases() []abuseCase {
	model := func(t *testing.T, dir string) string { return put(t, dir, "m.json", tinyIsing) }
	sample := func(extra ...string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			return append([]string{"sample", "--model", model(t, dir), "--method", "gibbs", "--iters", "3", "--n", "5"}, extra...)
		}
	}
	withFile := func(name, body string, args func(m, p string) []string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			return args(model(t, dir), put(t, dir, name, body))
		}
	}
	modelFile := func(body string, extra ...string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			return append([]string{"sample", "--model", put(t, dir, "m.json", body), "--method", "gibbs", "--iters", "2", "--n", "3"}, extra...)
		}
	}
	gofWith := func(extra ...string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			m := model(t, dir)
			return append([]string{"gof", "--model", m, "--samples", samplesFor(t, dir, m, 40), "--bootstrap", "20"}, extra...)
		}
	}
	charDevice := func(p string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			info, err := os.Lstat(p)
			if err != nil || info.Mode()&fs.ModeCharDevice == 0 {
				t.Errorf("%s is no longer a character device (%v, %v)", p, info.Mode(), err)
			}
		}
	}
	return []abuseCase{
		// Outputs that are not regular files are written as streams, never replaced.
		{name: "out /dev/null", setup: sample("--out", "/dev/null"), code: 0, want: "wrote /dev/null", check: charDevice("/dev/null")},
		{name: "json /dev/null", setup: sample("--json", "/dev/null"), code: 0, check: charDevice("/dev/null")},
		{name: "out FIFO", setup: func(t *testing.T, dir string) []string {
			p := filepath.Join(dir, "fifo")
			mkfifo(t, p)
			go func() {
				f, err := os.Open(p)
				if err == nil {
					io.Copy(io.Discard, f)
					f.Close()
				}
			}()
			return sample("--out", p)(t, dir)
		}, code: 0, check: func(t *testing.T, dir string) {
			if info, err := os.Lstat(filepath.Join(dir, "fifo")); err != nil || info.Mode()&fs.ModeNamedPipe == 0 {
				t.Errorf("the FIFO was replaced: %v %v", info.Mode(), err)
			}
		}},
		{name: "out -", setup: sample("--out", "-"), code: 0, want: "z0,z1"},
		{name: "out - twice", setup: sample("--out", "-", "--json", "-"), code: 1, want: "same file"},
		{name: "mode 0600 kept", setup: func(t *testing.T, dir string) []string {
			p := put(t, dir, "o.csv", "old")
			os.Chmod(p, 0o600)
			return sample("--out", p)(t, dir)
		}, code: 0, may: []string{"o.csv"}, check: func(t *testing.T, dir string) {
			if info, _ := os.Stat(filepath.Join(dir, "o.csv")); info.Mode().Perm() != 0o600 {
				t.Errorf("mode became %v", info.Mode().Perm())
			}
		}},
		{name: "symlink output writes its target", setup: func(t *testing.T, dir string) []string {
			put(t, dir, "target.csv", "old")
			os.Symlink("target.csv", filepath.Join(dir, "link.csv"))
			return sample("--out", filepath.Join(dir, "link.csv"))(t, dir)
		}, code: 0, may: []string{"target.csv"}},
		// Outputs never overwrite inputs, compared as files.
		{name: "out = model", setup: func(t *testing.T, dir string) []string {
			m := model(t, dir)
			return []string{"sample", "--model", m, "--out", m}
		}, code: 1, want: "is the input"},
		{name: "json = model via symlink", setup: func(t *testing.T, dir string) []string {
			m := model(t, dir)
			os.Symlink("m.json", filepath.Join(dir, "alias.json"))
			return []string{"sample", "--model", m, "--json", filepath.Join(dir, "alias.json")}
		}, code: 1, want: "is the input"},
		{name: "out = model via hard link", setup: func(t *testing.T, dir string) []string {
			m := model(t, dir)
			os.Link(m, filepath.Join(dir, "hard.json"))
			return []string{"sample", "--model", m, "--out", filepath.Join(dir, "hard.json")}
		}, code: 1, want: "is the input"},
		{name: "out = json", setup: func(t *testing.T, dir string) []string {
			return sample("--out", filepath.Join(dir, "s"), "--json", filepath.Join(dir, "./s"))(t, dir)
		}, code: 1, want: "same file"},
		{name: "gof json = samples", setup: func(t *testing.T, dir string) []string {
			a := gofWith()(t, dir)
			return append(a, "--json", filepath.Join(dir, "s.csv"))
		}, code: 1, want: "is the input", may: []string{"s.csv"}},
		{name: "compare-mar A A --json A", setup: func(t *testing.T, dir string) []string {
			a := put(t, dir, "a.MAR", "MAR\n1 2 0.5 0.5\n")
			return []string{"compare-mar", a, a, "--json", a}
		}, code: 1, want: "is the input"},
		{name: "exact --json x.uai", setup: func(t *testing.T, dir string) []string {
			u := put(t, dir, "x.uai", tinyUAI)
			return []string{"exact", "--model", u, "--json", u}
		}, code: 1, want: "is the input"},
		{name: "sample --mar x.uai", setup: func(t *testing.T, dir string) []string {
			u := put(t, dir, "x.uai", tinyUAI)
			return []string{"sample", "--model", u, "--method", "gibbs", "--iters", "2", "--mar", u}
		}, code: 1, want: "is the input"},
		{name: "evidence = mar", setup: func(t *testing.T, dir string) []string {
			u := put(t, dir, "x.uai", tinyUAI)
			ev := put(t, dir, "x.evid", "1 0 1\n")
			return []string{"sample", "--model", u, "--evidence", ev, "--method", "gibbs", "--iters", "2", "--mar", ev}
		}, code: 1, want: "is the input"},
		// All or nothing, and bad output paths found before the work.
		{name: "out ok, json in /proc", setup: sample("--out", "OUT", "--json", "/proc/dstein-no/x.json"), code: 1, want: "in the kernel's /proc or /sys"},
		{name: "json in /proc", setup: sample("--out", "OUT", "--json", "/proc/x.json"), code: 1, want: "in the kernel's /proc or /sys"},
		{name: "out in a missing directory", setup: sample("--out", "nodir/s.csv"), code: 1, want: "does not exist"},
		{name: "out is a directory", setup: func(t *testing.T, dir string) []string {
			return sample("--out", dir)(t, dir)
		}, code: 1, want: "is a directory"},
		{name: "json in a file's place as directory", setup: func(t *testing.T, dir string) []string {
			put(t, dir, "f", "x")
			return sample("--json", filepath.Join(dir, "f", "s.json"))(t, dir)
		}, code: 1, want: "not a directory"},
		// Size limits: refused before allocation, exit 3.
		{name: "grid 1e5×1e5", setup: modelFile(`{"type":"ising","grid":{"rows":100000,"cols":100000},"coupling":0.1}`), code: 3, want: "Ising grid needs about"},
		{name: "complete graph 1e5", setup: modelFile(`{"type":"ising","complete":{"n":100000},"coupling":0.1}`), code: 3, want: "complete Ising graph of 100000 spins needs"},
		{name: "RBM 1e5×1e5", setup: modelFile(`{"type":"rbm","visible":100000,"hidden":100000,"random":{"w_std":0.1,"bias_std":1,"seed":1}}`), code: 3, want: "RBM with 100000 visible"},
		{name: "gfsvgd n 1e5", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", model(t, dir), "--method", "gfsvgd", "--n", "100000"}
		}, code: 3, want: "--max-memory"},
		{name: "gibbs n 1e8 as a float", setup: sample("--n", "1e8"), code: 2, want: "--n 1e8: want a whole number"},
		{name: "gibbs n 1e9", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", model(t, dir), "--method", "gibbs", "--n", "1000000000"}
		}, code: 3, want: "needs about"},
		{name: "small --max-memory", setup: sample("--max-memory", "1MB"), code: 3, want: "over the limit of 1MB"},
		{name: "bad --max-memory", setup: sample("--max-memory", "lots"), code: 2, want: "--max-memory"},
		{name: "gof bootstrap 1e9", setup: gofWith("--bootstrap", "1000000000"), code: 2, want: "--bootstrap must be at most", may: []string{"s.csv"}},
		{name: "gof rows over the limit", setup: func(t *testing.T, dir string) []string {
			m := model(t, dir)
			return []string{"gof", "--model", m, "--samples", samplesFor(t, dir, m, 400), "--max-memory", "18MB"}
		}, code: 3, want: "sample rows", may: []string{"s.csv"}},
		// Unbounded or blocking inputs are refused.
		{name: "model /dev/zero", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", "/dev/zero"}
		}, code: 1, want: "not a regular file"},
		{name: "samples /dev/urandom", setup: func(t *testing.T, dir string) []string {
			return []string{"gof", "--model", model(t, dir), "--samples", "/dev/urandom"}
		}, code: 1, want: "not a regular file"},
		{name: "evidence linked to /dev/urandom", setup: func(t *testing.T, dir string) []string {
			u := put(t, dir, "x.uai", tinyUAI)
			os.Symlink("/dev/urandom", filepath.Join(dir, "x.evid"))
			return []string{"sample", "--model", u, "--evidence", filepath.Join(dir, "x.evid"), "--method", "gibbs", "--iters", "1"}
		}, code: 1, want: "not a regular file"},
		{name: "model FIFO", setup: func(t *testing.T, dir string) []string {
			p := filepath.Join(dir, "m.json")
			mkfifo(t, p)
			return []string{"sample", "--model", p}
		}, code: 1, want: "named pipe"},
		{name: "model directory", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", dir}
		}, code: 1, want: "is a directory"},
		{name: "model too large", setup: func(t *testing.T, dir string) []string {
			p := put(t, dir, "m.json", `{"type":"ising","n":2,"edges":[],"fields":[0,0]}`+strings.Repeat(" ", 3<<20))
			return []string{"sample", "--model", p, "--max-memory", "8MB"}
		}, code: 3, want: "over the limit"},
		// Strict input.
		{name: "duplicate key", setup: modelFile(`{"type":"ising","grid":{"rows":2,"cols":2},"coupling":0.1,"coupling":3}`), code: 1, want: `"coupling" appears twice`},
		{name: "case-mismatched key", setup: modelFile(`{"type":"ising","grid":{"rows":2,"cols":2},"coupling":0.1,"Coupling":3}`), code: 1, want: `must be spelled "coupling"`},
		{name: "coupling 1e308", setup: modelFile(`{"type":"ising","n":3,"edges":[[0,1,1e308],[1,2,1e308]]}`), code: 1, want: "rescale"},
		{name: "RBM weights 1e308", setup: modelFile(`{"type":"rbm","W":[[1e308],[1e308]]}`), code: 1, want: "rescale"},
		{name: "NaN in model", setup: modelFile(`{"type":"ising","n":2,"edges":[[0,1,NaN]]}`), code: 1, want: "invalid character"},
		{name: "NaN flag", setup: sample("--init-mean", "NaN"), code: 2, want: "--init-mean must be a finite number"},
		{name: "NaN setting flag", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", model(t, dir), "--lr", "NaN"}
		}, code: 2, want: "not a finite number"},
		{name: "zero temperature", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", model(t, dir), "--method", "gfsvgd", "--temperature", "0"}
		}, code: 2, want: "--temperature must be > 0"},
		{name: "inapplicable flag", setup: sample("--step-size", "0.3"), code: 2, want: "--step-size applies to dhmc and dlmc and dlmc-uncorrected and dmala, not to --method gibbs"},
		{name: "draws 0", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", model(t, dir), "--method", "gibbs", "--draws", "0"}
		}, code: 2, want: "--draws must be at least 1"},
		{name: "chains without draws", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", model(t, dir), "--method", "gibbs", "--chains", "3"}
		}, code: 2, want: "--chains applies when keeping --draws"},
		{name: "draws and iters", setup: sample("--draws", "10"), code: 2, want: "--iters does not apply with --draws"},
		{name: "draws of particles", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", model(t, dir), "--method", "gfsvgd", "--draws", "10"}
		}, code: 2, want: "gfsvgd is approximate"},
		{name: "draws and replicates", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", model(t, dir), "--method", "gibbs", "--draws", "10", "--replicates", "3"}
		}, code: 2, want: "--replicates does not apply with --draws"},
		{name: "replicates 0", setup: sample("--replicates", "0"), code: 2, want: "--replicates must be at least 1"},
		{name: "check-modes without draws", setup: sample("--check-modes"), code: 2, want: "--check-modes does not apply: the check compares chains' draws"},
		{name: "check-modes on pt", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", model(t, dir), "--method", "pt", "--draws", "10", "--check-modes"}
		}, code: 2, want: "--check-modes does not apply: pt already moves between modes"},
		// 0 iterations would report the starting states as samples.
		{name: "iters 0", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", model(t, dir), "--method", "gfsvgd", "--iters", "0"}
		}, code: 2, want: "--iters must be at least 1"},
		{name: "pipeline of 0 iterations", setup: func(t *testing.T, dir string) []string {
			p := filepath.Join(dir, "p.json")
			os.WriteFile(p, []byte(`{"stages":[{"method":"gibbs","iters":0}]}`), 0o644)
			return []string{"sample", "--model", model(t, dir), "--pipeline", p}
		}, code: 1, want: "its stages make 0 iterations in all"},
		{name: "n and chains", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", model(t, dir), "--method", "gibbs", "--draws", "10", "--n", "3", "--chains", "3"}
		}, code: 2, want: "--n and --chains both"},
		{name: "draws beyond memory", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", model(t, dir), "--method", "gibbs", "--draws", "100000000", "--chains", "1000", "--max-memory", "1GB"}
		}, code: 3, want: "memory"},
		{name: "iters of exact", setup: func(t *testing.T, dir string) []string {
			return []string{"sample", "--model", model(t, dir), "--method", "exact", "--iters", "3"}
		}, code: 2, want: "does not apply to exact"},
		{name: "pipeline with a typo", setup: withFile("p.json", `{"stages":[{"method":"gibbs","settings":{"stratifed":true}}]}`, func(m, p string) []string {
			return []string{"sample", "--model", m, "--pipeline", p}
		}), code: 1, want: `unknown key "stratifed"`},
		{name: "pipeline and method", setup: withFile("p.json", `{"stages":[{"method":"gibbs"}]}`, func(m, p string) []string {
			return []string{"sample", "--model", m, "--pipeline", p, "--method", "gibbs"}
		}), code: 2, want: "exclude each other"},
		{name: "bnn ensemble 0", setup: func(t *testing.T, dir string) []string {
			return []string{"bnn", "train", "--out-dir", filepath.Join(dir, "b"), "--ensemble", "0"}
		}, code: 2, want: "--ensemble must be at least 1"},
		{name: "bnn batch 0", setup: func(t *testing.T, dir string) []string {
			return []string{"bnn", "train", "--out-dir", filepath.Join(dir, "b"), "--batch", "0"}
		}, code: 2, want: "--batch must be at least 1"},
		{name: "bnn temperature 0", setup: func(t *testing.T, dir string) []string {
			return []string{"bnn", "train", "--out-dir", filepath.Join(dir, "b"), "--temperature", "0"}
		}, code: 2, want: "--temperature must be a finite number > 0"},
		{name: "experiment field NaN", setup: func(t *testing.T, dir string) []string {
			return []string{"experiment", "ising-n", "--tiny", "--out-dir", filepath.Join(dir, "e"), "--field", "NaN"}
		}, code: 2, want: `--field: "NaN" is not a finite number`},
		// Integers are decimal: Go's syntax would read 010 as 8.
		{name: "n octal", setup: sample("--n", "010"), code: 2, want: `--n 010: want a whole number in decimal digits`},
		{name: "n hex", setup: sample("--n", "0x10"), code: 2, want: `--n 0x10: want a whole number in decimal digits`},
		{name: "seed with underscores", setup: sample("--seed", "1_000"), code: 2, want: `--seed 1_000: want a whole number ≥ 0 in decimal digits`},
		{name: "bnn epochs octal", setup: func(t *testing.T, dir string) []string {
			return []string{"bnn", "train", "--out-dir", filepath.Join(dir, "b"), "--epochs", "07"}
		}, code: 2, want: `--epochs 07: want a whole number in decimal digits`},
		{name: "experiment nmax 0.5", setup: func(t *testing.T, dir string) []string {
			return []string{"experiment", "ising-n", "--tiny", "--out-dir", filepath.Join(dir, "e"), "--nmax", "0.5"}
		}, code: 2, want: `--nmax: "0.5" is not a whole number`},
		// An --nmax below every size of the run wrote an empty table and
		// plot and exited 0 (and --quick ignored --nmax).
		{name: "experiment nmax below every size", setup: func(t *testing.T, dir string) []string {
			return []string{"experiment", "ising-n", "--quick", "--out-dir", filepath.Join(dir, "e"), "--nmax", "5"}
		}, code: 1, want: "--nmax 5 keeps none of the sample sizes of this run (10, 50, 200)"},
		{name: "experiment discs target 9", setup: func(t *testing.T, dir string) []string {
			return []string{"experiment", "discs", "--tiny", "--out-dir", filepath.Join(dir, "e"), "--target", "9"}
		}, code: 2, want: "--target 9: DISCS has no such target"},
		{name: "compare-mar unnormalised", setup: func(t *testing.T, dir string) []string {
			a := put(t, dir, "a.MAR", "MAR\n1 2 0.3 0.3\n")
			return []string{"compare-mar", a, a}
		}, code: 1, want: "sums to 0.6"},
		{name: "compare-mar --normalize", setup: func(t *testing.T, dir string) []string {
			a := put(t, dir, "a.MAR", "MAR\n1 2 0.3 0.3\n")
			return []string{"compare-mar", a, a, "--normalize"}
		}, code: 0, want: "mean absolute error 0"},
		{name: "compare-mar --normalize, a sum that overflows", setup: func(t *testing.T, dir string) []string {
			a := put(t, dir, "a.MAR", "MAR\n1 2 1e308 1e308\n")
			b := put(t, dir, "b.MAR", "MAR\n1 2 0.5 0.5\n")
			return []string{"compare-mar", a, b, "--normalize"}
		}, code: 0, want: "mean absolute error 0, max 0 (variable 0), mean Hellinger 0"},
		{name: "gof temperature 1e-5 warns", setup: gofWith("--temperature", "1e-5", "--bootstrap-kind", "multinomial"), code: 0, want: "level was checked", may: []string{"s.csv"}},
		{name: "gof level NaN", setup: gofWith("--level", "NaN"), code: 2, want: "--level must be a finite number", may: []string{"s.csv"}},
		// Journals.
		{name: "journal value NaN", setup: func(t *testing.T, dir string) []string {
			out := journalDir(t, dir, "method,x,trial,metric,value\ngfsvgd,0,0,tv,NaN\n")
			return []string{"experiment", "categorical", "--tiny", "--out-dir", out}
		}, code: 1, want: "line 2: value \"NaN\"", may: []string{"out/categorical.trials.csv"}},
		{name: "journal value +Inf", setup: func(t *testing.T, dir string) []string {
			out := journalDir(t, dir, "method,x,trial,metric,value\ngfsvgd,0,0,tv,+Inf\n")
			return []string{"experiment", "categorical", "--tiny", "--out-dir", out}
		}, code: 1, want: "line 2", may: []string{"out/categorical.trials.csv"}},
		{name: "journal negative tv", setup: func(t *testing.T, dir string) []string {
			out := journalDir(t, dir, "method,x,trial,metric,value\ngfsvgd,0,0,tv,-1\n")
			return []string{"experiment", "categorical", "--tiny", "--out-dir", out}
		}, code: 1, want: "line 2: tv = -1", may: []string{"out/categorical.trials.csv"}},
		{name: "journal trial -1", setup: func(t *testing.T, dir string) []string {
			out := journalDir(t, dir, "method,x,trial,metric,value\ngfsvgd,0,-1,tv,0.1\n")
			return []string{"experiment", "categorical", "--tiny", "--out-dir", out}
		}, code: 1, want: "line 2: trial", may: []string{"out/categorical.trials.csv"}},
		{name: "journal malformed line", setup: func(t *testing.T, dir string) []string {
			out := journalDir(t, dir, "method,x,trial,metric,value\nthis is not a row\n")
			return []string{"experiment", "categorical", "--tiny", "--out-dir", out}
		}, code: 1, want: "line 2: 1 fields", may: []string{"out/categorical.trials.csv"}},
		{name: "journal unknown method", setup: func(t *testing.T, dir string) []string {
			out := journalDir(t, dir, "method,x,trial,metric,value\n"+trialRows("nosuch,0,0", "tv,0.1"))
			return []string{"experiment", "categorical", "--tiny", "--out-dir", out}
		}, code: 0, want: "holds trials of nosuch, which this run does not use; they are kept and left out of the tables", may: []string{"out/categorical.trials.csv", "out/categorical.csv", "out/categorical.png", "out/categorical.svg", "out/.dstein-files.json"}},
		{name: "journal symlink", setup: func(t *testing.T, dir string) []string {
			out := journalDir(t, dir, "")
			p := filepath.Join(out, "categorical.trials.csv")
			os.Rename(p, filepath.Join(dir, "elsewhere.csv"))
			os.Symlink(filepath.Join(dir, "elsewhere.csv"), p)
			return []string{"experiment", "categorical", "--tiny", "--out-dir", out}
		}, code: 1, want: "symbolic link"},
		{name: "journal CRLF accepted", setup: func(t *testing.T, dir string) []string {
			out := journalDir(t, dir, "")
			p := filepath.Join(out, "categorical.trials.csv")
			data, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")), 0o644)
			return []string{"experiment", "categorical", "--tiny", "--out-dir", out}
		}, code: 0, want: "categorical:", may: []string{"out/categorical.trials.csv", "out/categorical.csv", "out/categorical.png", "out/categorical.svg"}},
		{name: "journal other settings", setup: func(t *testing.T, dir string) []string {
			out := journalDir(t, dir, "")
			return []string{"experiment", "categorical", "--tiny", "--seed", "2", "--out-dir", out}
		}, code: 1, want: "other settings"},
		{name: "journal restart", setup: func(t *testing.T, dir string) []string {
			out := journalDir(t, dir, "method,x,trial,metric,value\ngarbage\n")
			return []string{"experiment", "categorical", "--tiny", "--restart", "--out-dir", out}
		}, code: 0, want: "categorical:", may: []string{"out/categorical.trials.csv", "out/categorical.trials.csv.old", "out/categorical.trials.json", "out/categorical.csv", "out/categorical.png", "out/categorical.svg"}},
		// Command-line slips.
		{name: "typo command", setup: func(*testing.T, string) []string { return []string{"smaple"} }, code: 2, want: "did you mean sample?"},
		{name: "typo method", setup: sample("--method", "gibs"), code: 2, want: "did you mean gibbs?"},
		{name: "typo flag", setup: sample("--sed", "1"), code: 2, want: "did you mean --seed?"},
		{name: "old flag --alpha", setup: gofWith("--alpha", "0.1"), code: 2, want: "unknown flag --alpha", may: []string{"s.csv"}},
		{name: "experiment --out", setup: func(t *testing.T, dir string) []string {
			return []string{"experiment", "ising-n", "--tiny", "--out", dir}
		}, code: 2, want: "did you mean --out-dir?"},
	}
}

func TestAbusiveInputs(t *testing.T) {
	cases := abuseCases()
	if len(cases) < 60 {
		t.Fatalf("%d cases; the issue asks for at least 60", len(cases))
	}
	runAbuseCases(t, cases)
}

// runAbuseCases runs each case through run in a fresh directory and checks
// its exit code, its one-line message (no stack trace) and that no file or
// directory other than those it may change was changed, created or
// removed (a refused command leaves no new directory behind).
func runAbuseCases(t *testing.T, cases []abuseCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := c.setup(t, dir)
			for i, a := range args {
				if a == "OUT" {
					args[i] = filepath.Join(dir, "o.csv")
				}
			}
			before := snapshot(t, dir)
			start := time.Now()
			ctx, cancel := context.WithCancel(context.Background())
			if c.canceled {
				cancel()
			}
			var outb, errb bytes.Buffer
			code := run(ctx, args, &outb, &errb)
			cancel()
			out, errs := outb.String(), errb.String()
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %v", d)
			}
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, errs)
			}
			if code != 0 {
				// Long commands may log progress first; the error is the
				// last line, and the only one that starts with "dstein: ".
				lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
				last := lines[len(lines)-1]
				if !strings.HasPrefix(last, "dstein: ") || !strings.Contains(last, c.want) || strings.Count(errs, "dstein: ") != 1 {
					t.Errorf("stderr %q; want one line containing %q", errs, c.want)
				}
			} else if !strings.Contains(out+errs, c.want) {
				t.Errorf("output lacks %q:\n%s\n%s", c.want, out, errs)
			}
			if strings.Contains(errs, "goroutine ") || strings.Contains(errs, "panic") {
				t.Errorf("stack trace: %s", errs)
			}
			after := snapshot(t, dir)
			may := map[string]bool{}
			for _, m := range c.may {
				may[m] = true
			}
			var changed []string
			for k, v := range after {
				if before[k] != v && !may[k] && (code != 0 || before[k] != "") {
					changed = append(changed, k)
				}
			}
			for k := range before {
				if _, ok := after[k]; !ok && !may[k] {
					changed = append(changed, k+" (removed)")
				}
			}
			sort.Strings(changed)
			if len(changed) > 0 {
				t.Errorf("files changed: %v", changed)
			}
			for k := range after {
				if strings.Contains(k, ".dstein-tmp-") {
					t.Errorf("temporary file left: %s", k)
				}
			}
			if c.check != nil {
				c.check(t, dir)
			}
		})
	}
}
