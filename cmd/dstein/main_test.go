package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/dstein/dstein/sampler/dmala"
)

// dstein runs the command line in-process and returns exit code, stdout
// and stderr.
func dstein(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestDemo(t *testing.T) {
	code, out, errs := dstein(t, "demo", "--n", "40", "--iters", "30")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Ising 4×4", "RBM", "RMSE of E[z]", "default: pt, 4 chains", "Gibbs", "exact i.i.d."} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

func TestSampleWritesOutputs(t *testing.T) {
	dir := t.TempDir()
	csvPath, jsonPath, tracePath := filepath.Join(dir, "s.csv"), filepath.Join(dir, "s.json"), filepath.Join(dir, "t.csv")
	code, out, errs := dstein(t, "sample", "--model", "../../examples/categorical.json", "--method", "transport", "--n", "50", "--iters", "40",
		"--out", csvPath, "--json", jsonPath, "--trace", tracePath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "wrote") {
		t.Errorf("output does not say what it wrote:\n%s", out)
	}
	f, _ := os.Open(csvPath)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 51 || len(rows[0]) != 2 || rows[0][0] != "lp__" || rows[0][1] != "z0" {
		t.Fatalf("CSV has %d rows, header %v; want 51 rows with header lp__,z0", len(rows), rows[0])
	}
	allowed := map[string]bool{"-1": true, "-0.5": true, "0": true, "0.5": true, "1": true}
	for _, r := range rows[1:] {
		if !allowed[r[1]] {
			t.Fatalf("CSV value %q is not a state of the model", r[1])
		}
	}
	var sum map[string]any
	data, _ := os.ReadFile(jsonPath)
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema_version", "method", "n", "dim", "iters", "seed", "status", "seconds", "pipeline", "stages", "states", "mean", "marginals", "model_evaluations", "impossible", "samples", "keep", "replicates", "error_bars"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary lacks %q", k)
		}
	}
	marg := sum["marginals"].([]any)[0].([]any)
	var tot float64
	for _, p := range marg {
		tot += p.(float64)
	}
	if len(marg) != 5 || tot < 0.999999 || tot > 1.000001 {
		t.Errorf("marginals %v; want 5 probabilities summing to 1", marg)
	}
	stats := sum["stages"].([]any)[0].(map[string]any)["statistics"].(map[string]any)
	for _, k := range []string{"weight_ess", "bandwidth", "mean_step", "impossible", "rejected", "rejected_moves"} {
		if _, ok := stats[k]; !ok {
			t.Errorf("GF-SVGD's statistics lack %q (zeros must be kept)", k)
		}
	}
	trace, _ := os.ReadFile(tracePath)
	// A header, then for each of 40 iterations the evaluations and GF-SVGD's
	// six statistics.
	if lines := strings.Count(string(trace), "\n"); lines != 1+40*7 {
		t.Errorf("trace has %d lines; want %d", lines, 1+40*7)
	}
}

// Same seed, same samples.csv bytes and the same summary apart from the
// timing field, at GOMAXPROCS 1, 2 and 16 (16 on a 2-core machine still
// takes the many-core paths: finer grains, parallel tempering's replicas
// swept in parallel when there are fewer chains than two per P).
func TestSameSeedSameBytes(t *testing.T) {
	dir := t.TempDir()
	var csvs, jsons [3][]byte
	for k, procs := range []int{1, 2, 16} {
		old := runtime.GOMAXPROCS(procs)
		c, j := filepath.Join(dir, "s"+strconv.Itoa(k)+".csv"), filepath.Join(dir, "s"+strconv.Itoa(k)+".json")
		code, _, errs := dstein(t, "sample", "--model", "../../examples/rbm-small.json", "--n", "64", "--seed", "9", "--out", c, "--json", j)
		runtime.GOMAXPROCS(old)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		csvs[k], _ = os.ReadFile(c)
		raw, _ := os.ReadFile(j)
		var m map[string]any
		json.Unmarshal(raw, &m)
		dropSeconds(m)
		jsons[k], _ = json.Marshal(m)
	}
	for k, procs := range []int{2, 16} {
		if !bytes.Equal(csvs[0], csvs[k+1]) {
			t.Errorf("samples.csv differs between GOMAXPROCS 1 and %d", procs)
		}
		if !bytes.Equal(jsons[0], jsons[k+1]) {
			t.Errorf("summary differs between GOMAXPROCS 1 and %d (timing removed)", procs)
		}
	}
	// A different seed gives different samples.
	c := filepath.Join(dir, "other.csv")
	dstein(t, "sample", "--model", "../../examples/rbm-small.json", "--n", "64", "--seed", "10", "--out", c)
	other, _ := os.ReadFile(c)
	if bytes.Equal(other, csvs[0]) {
		t.Error("seeds 9 and 10 gave the same samples")
	}
}

// --auto-ladder --ess: the same bytes at GOMAXPROCS 1, 2 and 16, and the
// summary says the target, why the run stopped and the ladder chosen.
func TestSampleESSTarget(t *testing.T) {
	dir := t.TempDir()
	var csvs, jsons [3][]byte
	var summary map[string]any
	for k, procs := range []int{1, 2, 16} {
		old := runtime.GOMAXPROCS(procs)
		c, j := filepath.Join(dir, "s"+strconv.Itoa(k)+".csv"), filepath.Join(dir, "s"+strconv.Itoa(k)+".json")
		code, _, errs := dstein(t, "sample", "--model", "../../examples/rbm-small.json", "--n", "200", "--seed", "4", "--auto-ladder", "--ess", "100", "--out", c, "--json", j)
		runtime.GOMAXPROCS(old)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		csvs[k], _ = os.ReadFile(c)
		raw, _ := os.ReadFile(j)
		summary = nil
		json.Unmarshal(raw, &summary)
		dropSeconds(summary)
		jsons[k], _ = json.Marshal(summary)
	}
	for k, procs := range []int{2, 16} {
		if !bytes.Equal(csvs[0], csvs[k+1]) || !bytes.Equal(jsons[0], jsons[k+1]) {
			t.Errorf("an adaptive run differs between GOMAXPROCS 1 and %d", procs)
		}
	}
	keep := summary["keep"].(map[string]any)
	stats := summary["stages"].([]any)[0].(map[string]any)["statistics"].(map[string]any)
	if keep["ess_target"] != 100.0 || keep["stopped"] != "ess" || keep["draws"] != 50.0 || stats["temperatures"] == nil {
		t.Errorf("keep %v, statistics %v", keep, stats)
	}
	t.Logf("keep %v; ladder %v", keep, stats)
}

func writeFile(t *testing.T, name, content string) string {
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Bad model files and bad flags: one line naming the problem, a non-zero
// exit code, no stack trace, nothing written.
func TestBadInputGivesOneLine(t *testing.T) {
	good := "../../examples/ising-edges.json"
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"malformed", []string{"--model", writeFile(t, "m.json", `{"type":"ising",`)}, 1, "ends early"},
		{"unknown type", []string{"--model", writeFile(t, "m.json", `{"type":"clock"}`)}, 1, `unknown model type "clock"`},
		{"dimensions", []string{"--model", writeFile(t, "m.json", `{"type":"rbm","W":[[1,2],[3,4]],"b":[0],"c":[0,0]}`)}, 1, "b has 1 entries"},
		{"negative prob", []string{"--model", writeFile(t, "m.json", `{"type":"categorical","variables":[{"states":[0,1],"probs":[-0.1,1.1]}]}`)}, 1, "≥ 0"},
		{"sum", []string{"--model", writeFile(t, "m.json", `{"type":"categorical","variables":[{"states":[0,1],"probs":[0.3,0.3]}]}`)}, 1, "sum to 0.6"},
		{"nan", []string{"--model", writeFile(t, "m.json", `{"type":"ising","n":2,"edges":[[0,1,NaN]]}`)}, 1, "invalid character"},
		{"inf", []string{"--model", writeFile(t, "m.json", `{"type":"ising","n":2,"edges":[[0,1,1e400]]}`)}, 1, "1e400"},
		{"empty model", []string{"--model", writeFile(t, "m.json", `{"type":"categorical","variables":[]}`)}, 1, "missing or empty"},
		{"empty file", []string{"--model", writeFile(t, "m.json", ``)}, 1, "empty"},
		{"missing file", []string{"--model", "/no/such/file.json"}, 1, "does not exist"},
		{"no model", []string{}, 2, "--model is required"},
		{"n < 1", []string{"--model", good, "--n", "0"}, 2, "--n must be at least 1"},
		{"negative iters", []string{"--model", good, "--method", "gibbs", "--iters", "-1"}, 2, "--iters must be at least 1"},
		{"iters of a pipeline", []string{"--model", good, "--method", "hybrid", "--iters", "5"}, 2, "--iters sets the iterations of a single method"},
		{"iters of the default", []string{"--model", good, "--iters", "5"}, 2, "--iters does not apply to --method default"},
		{"unknown method", []string{"--model", good, "--method", "hmc"}, 2, `unknown method "hmc"`},
		{"typo method", []string{"--model", good, "--method", "gibs"}, 2, "did you mean gibbs?"},
		{"bad n", []string{"--model", good, "--n", "x"}, 2, "--n x: want a whole number"},
		{"surrogate", []string{"--model", good, "--method", "gfsvgd", "--surrogate", "smooth"}, 2, `unknown surrogate "smooth"`},
		{"gfsvgd flag on the default", []string{"--model", good, "--lr", "0.1"}, 2, "--lr applies to gfsvgd, not to --method default"},
		{"lr", []string{"--model", good, "--method", "gfsvgd", "--lr", "-1"}, 2, "--lr must be > 0"},
		{"fixed h", []string{"--model", good, "--method", "gfsvgd", "--bandwidth", "fixed"}, 2, "fixed bandwidth is 0: the rule fixed needs its h (--fixed-h"},
		{"temperature", []string{"--model", good, "--method", "gfsvgd", "--temperature", "0"}, 2, "--temperature must be > 0"},
		{"step size", []string{"--model", good, "--method", "dmala", "--step-size", "0"}, 2, "--step-size must be > 0"},
		{"step size inf", []string{"--model", good, "--method", "dmala", "--step-size", "+Inf"}, 2, "not a finite number"},
		{"inapplicable", []string{"--model", good, "--method", "gibbs", "--lr", "3"}, 2, "--lr applies to gfsvgd, not to --method gibbs"},
		{"unknown flag", []string{"--model", good, "--nope"}, 2, "unknown flag"},
		{"typo flag", []string{"--model", good, "--sed", "3"}, 2, "did you mean --seed?"},
		{"max-iters without ess", []string{"--model", good, "--method", "tempering", "--max-iters", "500"}, 2, "--max-iters bounds a run with --ess"},
		{"max-time without ess", []string{"--model", good, "--method", "gibbs", "--draws", "50", "--max-time", "1m"}, 2, "--max-time bounds a run with --ess"},
		{"ess and warmup", []string{"--model", good, "--ess", "400", "--warmup", "10"}, 2, "leave out --warmup and --thin"},
		{"ess of particles", []string{"--model", good, "--method", "gfsvgd", "--ess", "400"}, 2, "--ess applies to the draws of MCMC chains"},
		{"ess zero", []string{"--model", good, "--ess", "0"}, 2, "want a positive effective sample size"},
		{"ess nan", []string{"--model", good, "--ess", "NaN"}, 2, "want a positive effective sample size"},
		{"max-iters too small", []string{"--model", good, "--ess", "400", "--max-iters", "10"}, 2, "cannot hold a warm-up"},
		{"bad max-time", []string{"--model", good, "--ess", "400", "--max-time", "soon"}, 2, "invalid argument"},
		{"auto-ladder without tuning", []string{"--model", good, "--auto-ladder", "--tune", "-1"}, 2, "auto sizes the ladder at the end of tuning"},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "s.csv")
		args := append([]string{"sample"}, c.args...)
		code, _, errs := dstein(t, append(args, "--out", out)...)
		checkCLIError(t, c.name, code, c.code, errs, c.want, out)
	}
	if code, _, errs := dstein(t, "bogus"); code != 2 || strings.Count(errs, "\n") != 1 {
		t.Errorf("unknown command: exit %d, stderr %q", code, errs)
	}
}

func TestInterruptWritesNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(t.TempDir(), "s.csv")
	var o, e bytes.Buffer
	code := run(ctx, []string{"sample", "--model", "../../examples/ising-edges.json", "--out", out}, &o, &e)
	if code != exitInterrupted || !strings.Contains(e.String(), "interrupted") || !strings.Contains(e.String(), "nothing written") {
		t.Fatalf("exit %d, stderr %q", code, e.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an interrupted run wrote its samples")
	}
}

// Every method runs from the command line and writes the same outputs.
func TestSampleMethods(t *testing.T) {
	for _, method := range []string{"gibbs", "gwg", "dmala", "dhmc", "exact"} {
		dir := t.TempDir()
		c, j := filepath.Join(dir, "s.csv"), filepath.Join(dir, "s.json")
		args := []string{"sample", "--model", "../../examples/ising-grid.json", "--method", method, "--n", "30", "--out", c, "--json", j}
		if method != "exact" {
			args = append(args, "--iters", "20")
		}
		code, out, errs := dstein(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", method, code, errs)
		}
		if !strings.Contains(out, "method     "+method+":") {
			t.Errorf("%s: output does not name the method:\n%s", method, out)
		}
		if mh := method == "gwg" || method == "dmala"; mh != strings.Contains(out, "acceptance_rate") {
			t.Errorf("%s: acceptance line present = %v:\n%s", method, !mh, out)
		}
		rows, _ := os.ReadFile(c)
		if strings.Count(string(rows), "\n") != 31 {
			t.Errorf("%s: CSV has %d lines; want 31", method, strings.Count(string(rows), "\n"))
		}
		var sum map[string]any
		data, _ := os.ReadFile(j)
		if err := json.Unmarshal(data, &sum); err != nil || sum["method"] != method {
			t.Errorf("%s: summary %v (%v)", method, sum["method"], err)
		}
	}
	// No exact sampler: a clear error.
	p := writeFile(t, "big.json", `{"type":"rbm","visible":30,"hidden":30,"random":{"w_std":0.1,"bias_std":1,"seed":1}}`)
	code, _, errs := dstein(t, "sample", "--model", p, "--method", "exact")
	if code != 3 || !strings.Contains(errs, "no exact method for this model") || strings.Count(errs, "\n") != 1 {
		t.Errorf("exact on a big RBM: exit %d, stderr %q", code, errs)
	}
}

// TestExactOverItsLimitsIsRefused: a model too wide for --max-width is a
// refusal of its size (exit 3, as README's table says), not a failed run.
// The 5×5 grid of binary variables (2^25 states, too many to enumerate)
// has elimination width 5 or more.
func TestExactOverItsLimitsIsRefused(t *testing.T) {
	var b strings.Builder
	const side = 5
	fmt.Fprintf(&b, "MARKOV\n%d\n%s\n%d\n", side*side, strings.TrimSpace(strings.Repeat("2 ", side*side)), 2*side*(side-1))
	for r := range side {
		for c := range side {
			if c+1 < side {
				fmt.Fprintf(&b, "2 %d %d\n", r*side+c, r*side+c+1)
			}
			if r+1 < side {
				fmt.Fprintf(&b, "2 %d %d\n", r*side+c, (r+1)*side+c)
			}
		}
	}
	for range 2 * side * (side - 1) {
		b.WriteString("4\n2 1 1 2\n")
	}
	p := writeFile(t, "grid5.uai", b.String())
	code, _, errs := dstein(t, "exact", "--model", p, "--max-width", "3")
	if code != 3 || !strings.Contains(errs, "exceeds the limit 3") || strings.Count(errs, "\n") != 1 {
		t.Errorf("exact --max-width 3 on a 5×5 grid: exit %d, stderr %q; want exit 3 naming the limit", code, errs)
	}
	if code, _, errs := dstein(t, "exact", "--model", p); code != 0 {
		t.Errorf("exact on a 5×5 grid within the default width: exit %d, stderr %q", code, errs)
	}
}

// DMALA from the command line on a variable with 5 states:
// the step size reaches the sampler and the summary, the run reports its
// acceptance, and the samples do not depend on the number of cores.
func TestSampleDMALA(t *testing.T) {
	dir := t.TempDir()
	var csvs [2][]byte
	for k, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		c, j := filepath.Join(dir, "s"+strconv.Itoa(k)+".csv"), filepath.Join(dir, "s"+strconv.Itoa(k)+".json")
		code, out, errs := dstein(t, "sample", "--model", "../../examples/categorical.json", "--method", "dmala", "--step-size", "1.5",
			"--n", "40", "--iters", "30", "--seed", "4", "--out", c, "--json", j)
		runtime.GOMAXPROCS(old)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		for _, want := range []string{"method     dmala", `settings {"step_size":1.5}`, "acceptance_rate ", "2480 model evaluations"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		var sum struct {
			Method   string
			Iters    int
			Pipeline struct {
				Init   map[string]float64
				Stages []struct{ Settings map[string]any }
			}
		}
		raw, _ := os.ReadFile(j)
		if err := json.Unmarshal(raw, &sum); err != nil {
			t.Fatal(err)
		}
		if sum.Method != "dmala" || sum.Iters != 30 || sum.Pipeline.Stages[0].Settings["step_size"] != 1.5 || sum.Pipeline.Init["std"] != 1.0 {
			t.Errorf("summary %+v", sum)
		}
		csvs[k], _ = os.ReadFile(c)
	}
	if !bytes.Equal(csvs[0], csvs[1]) {
		t.Error("DMALA samples differ between GOMAXPROCS 1 and 2")
	}
	// The default step size is the package's.
	_, out, _ := dstein(t, "sample", "--model", "../../examples/ising-edges.json", "--method", "dmala", "--n", "5", "--iters", "2")
	if !strings.Contains(out, fmt.Sprintf(`{"step_size":%g}`, dmala.DefaultStepSize)) {
		t.Errorf("default step size not shown:\n%s", out)
	}
}

func TestExperimentCommand(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := dstein(t, "experiment", "categorical", "--out-dir", dir, "--tiny")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"categorical:", "tv", "gfsvgd-paper", "wrote"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"categorical.csv", "categorical.png", "categorical.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written", f)
		}
	}
	if code, _, errs := dstein(t, "experiment", "nope", "--out-dir", dir); code != 2 || !strings.Contains(errs, "unknown experiment") {
		t.Errorf("unknown experiment: exit %d, %q", code, errs)
	}
	if code, _, errs := dstein(t, "experiment", "ising-n"); code != 2 || !strings.Contains(errs, "--out-dir") {
		t.Errorf("missing --out: exit %d, %q", code, errs)
	}
}

// checkCLIError checks a failed command: the exit code, one line on stderr
// that starts with "dstein: " and names the problem, no stack trace, and no
// output file at out.
func checkCLIError(t *testing.T, name string, code, wantCode int, errs, want, out string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("%s: exit %d; want %d (stderr %q)", name, code, wantCode, errs)
	}
	if strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "dstein: ") || !strings.Contains(errs, want) {
		t.Errorf("%s: stderr %q; want one line containing %q", name, errs, want)
	}
	if strings.Contains(errs, "goroutine") || strings.Contains(errs, "panic") {
		t.Errorf("%s: stack trace on stderr", name)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s: output written despite the error", name)
	}
}

// dropSeconds removes every "seconds" key (timing) from a decoded JSON value.
func dropSeconds(v any) {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "seconds")
		for _, e := range x {
			dropSeconds(e)
		}
	case []any:
		for _, e := range x {
			dropSeconds(e)
		}
	}
}

// demo refuses counts below 1, as sample does: --iters 0 printed a Gibbs
// row of 0 sweeps.
func TestDemoRefusesZeroCounts(t *testing.T) {
	for _, flag := range []string{"--iters", "--n", "--show"} {
		if code, _, errs := dstein(t, "demo", flag, "0"); code != 2 || !strings.Contains(errs, flag+" must be at least 1") {
			t.Errorf("demo %s 0: exit %d, %q", flag, code, errs)
		}
	}
}

// Stratified Gibbs chains are not independent: their chain-based error
// bars come with a warning, and a note in the error bars' line; plain
// chains get neither.
func TestStratifiedChainsWarn(t *testing.T) {
	base := []string{"sample", "--model", "../../examples/ising-grid.json", "--method", "gibbs", "--chains", "4", "--draws", "100"}
	code, out, errs := dstein(t, append(base, "--stratified")...)
	if code != 0 || !strings.Contains(out, "warning    the chains of a stratified Gibbs stage share their random numbers") || !strings.Contains(out, "the chains are stratified, not independent") {
		t.Errorf("stratified: exit %d: %s %s", code, out, errs)
	}
	code, out, errs = dstein(t, base...)
	if code != 0 || strings.Contains(out, "not independent") {
		t.Errorf("plain chains: exit %d: %s %s", code, out, errs)
	}
}
