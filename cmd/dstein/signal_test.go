package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGINT reaches a built binary in each long-running phase: the process must
// exit with 130 within a generous deadline (busy CI machines), print one
// line saying it was interrupted, and leave no output file. The measured
// latencies are logged (go test -v -run TestSIGINT).
func TestSIGINTInEveryPhase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs long commands")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "dstein")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// A large model file: a million spins on a chain, about 25 MB of JSON.
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	const spins = 1_000_000
	fmt.Fprintf(w, `{"type":"ising","n":%d,"edges":[`, spins)
	for i := range spins - 1 {
		if i > 0 {
			w.WriteByte(',')
		}
		fmt.Fprintf(w, "[%d,%d,0.1]", i, i+1)
	}
	w.WriteString("]}")
	w.Flush()
	f.Close()
	grid := "../../examples/ising-grid.json"
	rbmModel := "../../examples/rbm-random.json"
	samples := filepath.Join(dir, "s.csv")
	if out, err := exec.Command(bin, "sample", "--model", grid, "--method", "exact", "--n", "3000", "--out", samples).CombinedOutput(); err != nil {
		t.Fatalf("samples: %v %s", err, out)
	}
	complete := filepath.Join(dir, "complete.json")
	os.WriteFile(complete, []byte(`{"type":"ising","complete":{"n":40},"coupling":0.01}`), 0o644)
	out := filepath.Join(dir, "out.file")
	cases := []struct {
		phase string
		args  []string
		after time.Duration
	}{
		{"loading a model", []string{"sample", "--model", big, "--out", out}, 300 * time.Millisecond},
		{"exact inference", []string{"exact", "--model", rbmModel, "--json", out}, 500 * time.Millisecond},
		{"exact sampling", []string{"sample", "--model", rbmModel, "--method", "exact", "--out", out}, 500 * time.Millisecond},
		{"GF-SVGD iterations", []string{"sample", "--model", grid, "--method", "gfsvgd", "--n", "1000", "--iters", "100000", "--out", out}, 700 * time.Millisecond},
		{"stratified sweeps", []string{"sample", "--model", grid, "--method", "gibbs", "--stratified", "--n", "2000", "--iters", "1000000", "--out", out}, 700 * time.Millisecond},
		{"Gibbs sweeps", []string{"sample", "--model", grid, "--method", "gibbs", "--n", "1000", "--iters", "100000000", "--json", out}, 500 * time.Millisecond},
		{"DHMC", []string{"sample", "--model", grid, "--method", "dhmc", "--n", "500", "--iters", "10000000", "--json", out}, 500 * time.Millisecond},
		{"GWG", []string{"sample", "--model", grid, "--method", "gwg", "--n", "500", "--iters", "10000000", "--json", out}, 500 * time.Millisecond},
		{"gof bootstrap", []string{"gof", "--model", grid, "--samples", samples, "--test", "dksd", "--bootstrap", "10000000", "--json", out}, 1500 * time.Millisecond},
		{"gof permutations", []string{"gof", "--model", grid, "--samples", samples, "--test", "mmd", "--bootstrap", "10000000", "--json", out}, 1500 * time.Millisecond},
		{"gof reference sweeps", []string{"gof", "--model", complete, "--samples", writeCompleteSamples(t, bin, complete, dir), "--test", "mmd", "--reference-sweeps", "100000000", "--json", out}, 700 * time.Millisecond},
		{"experiment", []string{"experiment", "ising-n", "--out-dir", filepath.Join(dir, "exp")}, 1500 * time.Millisecond},
		{"network training", []string{"bnn", "train", "--arch", "mlp", "--method", "ste", "--ensemble", "1", "--train-limit", "50000", "--out-dir", filepath.Join(dir, "bnn"), "--json", out}, 2500 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.phase, func(t *testing.T) {
			os.Remove(out)
			cmd := exec.Command(bin, c.args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(c.after)
			sent := time.Now()
			cmd.Process.Signal(syscall.SIGINT)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("still running 30 s after SIGINT; stderr %q", stderr.String())
			}
			latency := time.Since(sent)
			code := cmd.ProcessState.ExitCode()
			t.Logf("%s: exit %d %v after SIGINT", c.phase, code, latency.Round(time.Millisecond))
			if code != exitInterrupted {
				t.Errorf("exit %d, want %d (the command may have finished before the signal: %q)", code, exitInterrupted, stderr.String())
			}
			if latency > 10*time.Second {
				t.Errorf("took %v to stop", latency)
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "dstein: interrupted") {
				t.Errorf("last line of stderr %q; want dstein: interrupted…", last)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("an output file was written")
			}
			matches, _ := filepath.Glob(filepath.Join(dir, ".*dstein-tmp*"))
			if len(matches) > 0 {
				t.Errorf("temporary files left: %v", matches)
			}
		})
	}
}

// writeCompleteSamples writes Gibbs samples of the complete graph (which
// has no exact sampler) for the MMD case.
func writeCompleteSamples(t *testing.T, bin, model, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "complete.csv")
	if out, err := exec.Command(bin, "sample", "--model", model, "--method", "gibbs", "--iters", "5", "--n", "50", "--out", p).CombinedOutput(); err != nil {
		t.Fatalf("samples of the complete graph: %v %s", err, out)
	}
	return p
}
