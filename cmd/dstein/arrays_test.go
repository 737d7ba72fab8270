package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/dstein/dstein/internal/npy"
	"github.com/dstein/dstein/report"
)

// pythonWith returns a Python interpreter that imports every module,
// trying $DSTEIN_PYTHON, python3 on the PATH and /usr/bin/python3 (where
// Debian's python3-numpy and python3-pandas install), or skips the test
// saying why.
func pythonWith(t *testing.T, modules ...string) string {
	t.Helper()
	var tried []string
	for _, p := range []string{os.Getenv("DSTEIN_PYTHON"), "python3", "/usr/bin/python3"} {
		if p == "" {
			continue
		}
		tried = append(tried, p)
		if exec.Command(p, "-c", "import "+strings.Join(modules, ", ")).Run() == nil {
			return p
		}
	}
	t.Skipf("no Python with %s (tried %s; apt-get install python3-numpy python3-pandas, or set DSTEIN_PYTHON)", strings.Join(modules, " and "), strings.Join(tried, ", "))
	return ""
}

// readCSV reads a CSV file whole.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// readNPY reads a float64 .npy file and its sidecar.
func readNPY(t *testing.T, path string) (npy.Info, []float64, report.Sidecar) {
	t.Helper()
	info, v := readNPYFile[float64](t, path)
	var sc report.Sidecar
	data, err := os.ReadFile(strings.TrimSuffix(path, ".npy") + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), report.SidecarPrefix) {
		t.Errorf("sidecar of %s starts %q", path, data[:min(len(data), 60)])
	}
	if err := json.Unmarshal(data, &sc); err != nil {
		t.Fatal(err)
	}
	return info, v, sc
}

// With --format npy, sample and compress write the same values as their
// CSV, as an array of shape (chains, draws, d), (replicates, n, d), (n, d)
// or (points, d), with a sidecar naming the axes, variables and states.
func TestSampleAndCompressNPY(t *testing.T) {
	dir := t.TempDir()
	model := "../../examples/categorical.json"
	cases := []struct {
		name  string
		args  []string
		shape []int
		dims  []string
		ids   int // leading id columns of the CSV (with lp__)
	}{
		{"draws", []string{"--method", "gibbs", "--chains", "3", "--draws", "40"}, []int{3, 40, 1}, []string{"chain", "draw", "variable"}, 3},
		{"replicates", []string{"--method", "gibbs", "--n", "7", "--iters", "5", "--replicates", "2"}, []int{2, 7, 1}, []string{"replicate", "particle", "variable"}, 3},
		{"final", []string{"--method", "gibbs", "--n", "9", "--iters", "5"}, []int{9, 1}, []string{"sample", "variable"}, 1},
		{"points", []string{"--method", "gibbs", "--chains", "2", "--draws", "50", "--compress", "herding", "--points", "6"}, []int{6, 1}, []string{"point", "variable"}, 0},
	}
	for _, c := range cases {
		csvPath, npyPath := filepath.Join(dir, c.name+".csv"), filepath.Join(dir, c.name+".npy")
		base := append([]string{"sample", "--model", model, "--seed", "4"}, c.args...)
		if code, _, errs := dstein(t, append(base, "--out", csvPath)...); code != 0 {
			t.Fatalf("%s csv: exit %d: %s", c.name, code, errs)
		}
		code, out, errs := dstein(t, append(base, "--format", "npy", "--out", npyPath)...)
		if code != 0 {
			t.Fatalf("%s npy: exit %d: %s", c.name, code, errs)
		}
		if !strings.Contains(out, "wrote "+npyPath+", "+filepath.Join(dir, c.name+".json")) {
			t.Errorf("%s: output does not name both files:\n%s", c.name, out)
		}
		info, vals, sc := readNPY(t, npyPath)
		if !reflect.DeepEqual(info.Shape, c.shape) || info.Descr != "<f8" || !reflect.DeepEqual(sc.Shape, c.shape) || !reflect.DeepEqual(sc.Dims, c.dims) {
			t.Errorf("%s: array %+v, sidecar shape %v dims %v; want shape %v dims %v", c.name, info, sc.Shape, sc.Dims, c.shape, c.dims)
		}
		if sc.Format != report.SidecarFormat || sc.Array != c.name+".npy" || sc.Model != model || !reflect.DeepEqual(sc.Variables, []string{"z0"}) ||
			!reflect.DeepEqual(sc.States, [][]float64{{-1, -0.5, 0, 0.5, 1}}) {
			t.Errorf("%s: sidecar %+v", c.name, sc)
		}
		rows := readCSV(t, csvPath)[1:]
		if len(rows) != len(vals) {
			t.Fatalf("%s: %d CSV rows, %d array values", c.name, len(rows), len(vals))
		}
		var lp []float64 // the sidecar's lp__, in row order
		switch v := sc.LogP.(type) {
		case []any:
			for _, x := range v {
				if row, ok := x.([]any); ok {
					for _, y := range row {
						lp = append(lp, y.(float64))
					}
				} else {
					lp = append(lp, x.(float64))
				}
			}
		}
		if c.name == "points" && lp != nil || c.name != "points" && len(lp) != len(rows) {
			t.Fatalf("%s: sidecar lp__ %v for %d rows", c.name, sc.LogP, len(rows))
		}
		for r, row := range rows {
			if v, _ := strconv.ParseFloat(row[c.ids], 64); v != vals[r] {
				t.Fatalf("%s: row %d: CSV %v, array %v", c.name, r, row, vals[r])
			}
			if lp != nil && row[c.ids-1] != report.FormatValue(lp[r]) {
				t.Fatalf("%s: row %d: CSV lp__ %s, sidecar %v", c.name, r, row[c.ids-1], lp[r])
			}
		}
	}
	// compress --format npy: the points of the draws.
	draws := filepath.Join(dir, "draws.csv")
	pts := filepath.Join(dir, "pts.npy")
	if code, _, errs := dstein(t, "compress", "--model", model, "--samples", draws, "--n", "5", "--format", "npy", "--out", pts); code != 0 {
		t.Fatalf("compress: exit %d: %s", code, errs)
	}
	if info, _, sc := readNPY(t, pts); !reflect.DeepEqual(info.Shape, []int{5, 1}) || sc.Content != "points" {
		t.Errorf("compress: %+v, %+v", info, sc)
	}
	// A second run replaces its own sidecar.
	if code, _, errs := dstein(t, "compress", "--model", model, "--samples", draws, "--n", "4", "--format", "npy", "--out", pts); code != 0 {
		t.Fatalf("compress again: exit %d: %s", code, errs)
	}
	if info, _, sc := readNPY(t, pts); info.Shape[0] != 4 || sc.Shape[0] != 4 {
		t.Errorf("second run: %+v, %+v", info, sc)
	}
}

// --format npy refuses what it cannot write safely, before any work and
// without touching a file: standard output, a path that does not end in
// .npy, a sidecar in place of a file dstein did not write, a sidecar that
// is another output; --format csv refuses a .npy path.
func TestNPYRefusals(t *testing.T) {
	dir := t.TempDir()
	model := "../../examples/categorical.json"
	mine := filepath.Join(dir, "mine.json")
	if err := os.WriteFile(mine, []byte(`{"keep": "me"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"sample", "--model", model, "--method", "gibbs", "--n", "5", "--iters", "2"}
	cases := []struct {
		args []string
		code int
		want string
		out  string
	}{
		{[]string{"--format", "npy", "--out", "-"}, exitUsage, "not standard output", filepath.Join(dir, "none")},
		{[]string{"--format", "npy", "--out", filepath.Join(dir, "s.csv")}, exitUsage, "must end in .npy", filepath.Join(dir, "s.csv")},
		{[]string{"--format", "parquet", "--out", filepath.Join(dir, "s.npy")}, exitUsage, `unknown --format "parquet"`, filepath.Join(dir, "s.npy")},
		{[]string{"--out", filepath.Join(dir, "s.npy")}, exitUsage, "add --format npy", filepath.Join(dir, "s.npy")},
		{[]string{"--format", "npy"}, exitUsage, "--format npy applies to --out, which is not given", filepath.Join(dir, "none")},
		{[]string{"--format", "npy", "--out", filepath.Join(dir, "mine.npy")}, exitError, "not a sidecar that dstein wrote", filepath.Join(dir, "mine.npy")},
		{[]string{"--format", "npy", "--out", filepath.Join(dir, "t.npy"), "--json", filepath.Join(dir, "t.json")}, exitError, "same file", filepath.Join(dir, "t.npy")},
	}
	for _, c := range cases {
		code, _, errs := dstein(t, append(base, c.args...)...)
		checkCLIError(t, strings.Join(c.args, " "), code, c.code, errs, c.want, c.out)
	}
	if data, _ := os.ReadFile(mine); string(data) != `{"keep": "me"}` {
		t.Errorf("a file the user did not name was changed: %q", data)
	}
	if err := os.Symlink(mine, filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	code, _, errs := dstein(t, append(base, "--format", "npy", "--out", filepath.Join(dir, "link.npy"))...)
	checkCLIError(t, "symlinked sidecar", code, exitError, errs, "not a regular file", filepath.Join(dir, "link.npy"))
}

// The files dstein writes load in the field's tools: every kind of CSV
// (sample --out with and without chains, compress --out, --trace) reads with
// pandas.read_csv as one header row and numeric data (no comment lines),
// and the .npy arrays with numpy.load, equal to the CSVs' values.
func TestOutputsLoadInNumpyAndPandas(t *testing.T) {
	py := pythonWith(t, "numpy", "pandas")
	dir := t.TempDir()
	model := "../../examples/ising-grid.json"
	run := func(args ...string) {
		t.Helper()
		if code, _, errs := dstein(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	run("sample", "--model", model, "--method", "gibbs", "--n", "20", "--iters", "10", "--out", p("final.csv"), "--trace", p("trace.csv"))
	run("sample", "--model", model, "--method", "gibbs", "--chains", "3", "--draws", "30", "--estimates", "frequencies", "--out", p("draws.csv"), "--json", p("summary.json"))
	run("sample", "--model", model, "--method", "gibbs", "--chains", "3", "--draws", "30", "--format", "npy", "--out", p("draws.npy"))
	run("compress", "--model", model, "--samples", p("draws.csv"), "--n", "8", "--out", p("points.csv"))
	run("compress", "--model", model, "--samples", p("draws.csv"), "--n", "8", "--format", "npy", "--out", p("points.npy"))
	script := `
import sys, json
import numpy as np, pandas as pd
d = sys.argv[1]
def csv(name, columns):
    with open(d + "/" + name) as f:
        text = f.read()
    assert not any(l.startswith("#") for l in text.splitlines()), name + " has a comment line"
    df = pd.read_csv(d + "/" + name)
    assert list(df.columns[:len(columns)]) == columns, (name, list(df.columns[:5]))
    return df
final = csv("final.csv", ["lp__", "z0", "z1"])
assert final.shape == (20, 101) and set(np.unique(final.to_numpy()[:, 1:])) <= {-1, 1}
assert final.lp__.dtype.kind == "f" and np.isfinite(final.lp__).all()
draws = csv("draws.csv", ["chain", "draw", "lp__", "z0"])
assert draws.shape == (90, 103) and list(draws.chain.unique()) == [1, 2, 3]
points = csv("points.csv", ["z0"])
assert points.shape == (8, 100)
trace = csv("trace.csv", ["stage", "method", "iter", "statistic", "value"])
assert trace.shape[1] == 5 and trace.value.dtype.kind in "fi"
a = np.load(d + "/draws.npy")
side = json.load(open(d + "/draws.json"))
assert a.shape == (3, 30, 100) == tuple(side["shape"]) and side["dims"] == ["chain", "draw", "variable"]
assert side["dtype"] == a.dtype.str == "<f8"
zs = draws[[c for c in draws.columns if c.startswith("z")]].to_numpy()
assert np.array_equal(a.reshape(90, 100), zs), "npy and CSV draws differ"
assert np.array_equal(a[1, 4], zs[(draws.chain == 2) & (draws.draw == 5)][0])
pts = np.load(d + "/points.npy")
assert np.array_equal(pts, points.to_numpy())
summary = json.load(open(d + "/summary.json"))
assert np.allclose(summary["mean"], zs.mean(axis=0))
logp = [q for q in summary["error_bars"]["quantities"] if q["name"] == "log_p"][0]
assert np.isclose(draws.lp__.mean(), logp["mean"], rtol=1e-12), (draws.lp__.mean(), logp["mean"])
assert np.array(side["lp__"]).shape == (3, 30)
print("numpy", np.__version__, "pandas", pd.__version__, "ok")
`
	out, err := exec.Command(py, "-c", script, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", py, err, out)
	}
	t.Logf("%s", out)
}
