package experiment

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/experiment/journal"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/rng"
)

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

var gofNames = []string{"gfksd", "gfksd-0.05", "gfksd-paper", "dksd", "mmd"}

// Every experiment runs in tiny mode, writes its files, and its CSV holds
// the expected methods and metrics with finite means, standard errors ≥ 0
// and the right number of trials.
func TestTinyRunsWriteCheckedCSV(t *testing.T) {
	want := map[string]struct {
		methods []string
		metrics []string
	}{
		"categorical":    {[]string{"gfsvgd-paper", "gfsvgd-transport"}, []string{"tv", "max_error", "freq:-1"}},
		"transform":      {[]string{"gfsvgd-paper", "gfsvgd-transport", "exact"}, []string{"tv"}},
		"ising-n":        {[]string{"gfsvgd-paper", "gfsvgd-transport", "gfsvgd-hybrid", "strat-sweeps", "pt-4chains", "gibbs", "gwg", "dmala", "dhmc", "exact"}, []string{"mse", "seconds", "evaluations", "eff_n", "ess_per_s"}},
		"ising-sigma":    {[]string{"gfsvgd-paper", "gfsvgd-transport", "pt-4chains", "gibbs", "dhmc", "exact"}, []string{"mse"}},
		"rbm-n":          {[]string{"gfsvgd-paper", "gfsvgd-transport", "gfsvgd-hybrid", "strat-sweeps", "pt-4chains", "gibbs", "gwg-100", "dmala", "dhmc", "exact"}, []string{"mse", "mmd2", "seconds", "evaluations", "eff_n", "ess_per_s"}},
		"rbm-d":          {[]string{"gfsvgd-paper", "gfsvgd-transport", "gfsvgd-hybrid", "strat-sweeps", "pt-4chains", "gibbs", "gwg-100", "dmala", "dhmc", "exact"}, []string{"mse", "mmd2", "seconds", "evaluations", "eff_n", "ess_per_s"}},
		"gof-level":      {[]string{"gfksd", "gfksd-0.05", "gfksd-paper", "gfksd-rademacher", "dksd", "mmd"}, []string{"reject", "p_value", "ks_uniform"}},
		"gof-ising-temp": {gofNames, []string{"reject", "p_value"}},
		"gof-ising-n":    {gofNames, []string{"reject", "p_value"}},
		"gof-rbm-sigma":  {gofNames, []string{"reject", "p_value"}},
		"gof-rbm-n":      {gofNames, []string{"reject", "p_value"}},
		"bnn":            {[]string{"gfsvgd", "bagging", "benn", "ste", "bnnplus"}, []string{"accuracy", "seconds"}},
		"variants-ising": {[]string{"exact", "gibbs20", "transport-100+ssweeps30", "ssweeps30-only"}, []string{"mse", "mmd2", "seconds"}},
		"variants-rbm":   {[]string{"exact", "gibbs20", "transport-100+ssweeps30", "ssweeps30-only"}, []string{"mse", "mmd2", "seconds"}},
		"discs": {[]string{"gibbs", "sw", "gwg", "gwg-multi-sqrt", "pas-sqrt", "pas-ratio", "dmala", "dlmc-sqrt", "dlmc-ratio"},
			[]string{"ess_per_step", "ess_per_second_total", "ess_per_evaluation", "ess_se"}},
		"suite": {[]string{"exact", "gibbs", "pt", "sw", "gwg", "dmala", "dhmc", "gfsvgd", "hybrid", "strat-gibbs", "pt-strat", "gibbs-4chains", "pt-4chains"},
			[]string{"mse", "pair_rmse", "energy_tv", "mmd2", "mmd2_first", "seconds", "evaluations", "ratio_to_iid:mse", "ratio_to_best:pair_rmse"}},
	}
	if len(want) != len(Names()) {
		t.Fatalf("experiments %v; the test knows %d", Names(), len(want))
	}
	dir := t.TempDir()
	for _, name := range Names() {
		e, _ := Get(name)
		res, err := e.Run(context.Background(), Config{Out: dir, Seed: 3, Mode: Tiny})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, f := range res.Files {
			if st, err := os.Stat(f); err != nil || st.Size() == 0 {
				t.Errorf("%s: %s missing or empty", name, f)
			}
		}
		// The journal records the settings that ran, never a template
		// (discs's warm-up is half of each target's length: 4 of 8 here).
		if js, err := os.ReadFile(filepath.Join(dir, name+".trials.json")); err != nil {
			t.Errorf("%s: %v", name, err)
		} else if strings.Contains(string(js), "%d") || (name == "discs" && !strings.Contains(string(js), `"adapt": 4`)) {
			t.Errorf("%s: the journal's settings are not those that ran:\n%s", name, js)
		}
		rows := readCSV(t, filepath.Join(dir, name+".csv"))
		if strings.Join(rows[0], ",") != "experiment,method,preset,setting,x,metric,mean,se,trials" {
			t.Fatalf("%s: header %v", name, rows[0])
		}
		seen := map[string]bool{}
		exactMeans := map[string]bool{}
		for _, r := range rows[1:] {
			if r[0] != name || r[3] != e.Setting {
				t.Errorf("%s: row %v names another experiment or setting", name, r)
			}
			mean, e1 := strconv.ParseFloat(r[6], 64)
			se, e2 := strconv.ParseFloat(r[7], 64)
			n, e3 := strconv.Atoi(r[8])
			// eff_n and ess_per_s are left out of trials whose MSE is at
			// machine zero (effNFloor), so they may have fewer trials.
			// discs leaves out R̂ and the bulk ESS where every chain of a
			// tiny run stayed constant.
			partial := r[5] == "eff_n" || r[5] == "ess_per_s" || (name == "discs" && (r[5] == "rhat" || strings.HasPrefix(r[5], "bulk_")))
			if e1 != nil || e2 != nil || e3 != nil || math.IsNaN(mean) || math.IsInf(mean, 0) || se < 0 || n > 2 || (n != 2 && !partial) || n < 1 {
				t.Errorf("%s: bad row %v", name, r)
			}
			if r[5] == "reject" || r[5] == "p_value" || r[5] == "ks_uniform" {
				if mean < 0 || mean > 1 || (r[5] == "p_value" && mean == 0) {
					t.Errorf("%s: %s = %v out of range in %v", name, r[5], mean, r)
				}
			}
			if r[5] == "mse" || r[5] == "mmd2" || r[5] == "tv" {
				if mean < 0 || mean > 4 {
					t.Errorf("%s: %s = %v out of range in %v", name, r[5], mean, r)
				}
			}
			if (r[5] == "eff_n" || r[5] == "ess_per_s" || r[5] == "seconds") && !(mean > 0) {
				t.Errorf("%s: %s = %v is not positive in %v", name, r[5], mean, r)
			}
			seen[r[1]+"/"+r[5]] = true
			if r[5] == "mse" && mean < effNFloor {
				exactMeans[r[1]] = true
			}
		}
		for _, m := range want[name].methods {
			for _, k := range want[name].metrics {
				if (k == "eff_n" || k == "ess_per_s") && exactMeans[m] {
					continue // means exact to rounding at every setting: no eff_n
				}
				if !seen[m+"/"+k] {
					t.Errorf("%s: no %s rows for %s", name, k, m)
				}
			}
		}
	}
}

// A second run with the same settings takes every trial from the journal
// and writes the same CSV; a journal cut mid-line is repaired; a journal
// made with another seed is refused.
func TestResume(t *testing.T) {
	dir := t.TempDir()
	e, _ := Get("ising-n")
	cfg := Config{Out: dir, Seed: 5, Mode: Tiny}
	if _, err := e.Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(filepath.Join(dir, "ising-n.csv"))
	// Cut the journal in the middle of its last line, as a kill would.
	jp := filepath.Join(dir, "ising-n.trials.csv")
	j, _ := os.ReadFile(jp)
	lines := strings.Split(strings.TrimRight(string(j), "\n"), "\n")
	cut := strings.Join(lines[:len(lines)-1], "\n") + "\n" + lines[len(lines)-1][:5]
	os.WriteFile(jp, []byte(cut), 0o644)
	var log bytes.Buffer
	cfg.Log = &log
	if _, err := e.Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(filepath.Join(dir, "ising-n.csv"))
	if a, b := withoutTiming(first), withoutTiming(second); a != b {
		t.Errorf("the resumed run's CSV differs from the uninterrupted one:\n%s\n---\n%s", a, b)
	}
	if !strings.Contains(log.String(), "1 trial loaded") || strings.Contains(log.String(), "trial 1/2 done") {
		t.Errorf("a resume that computed one cut trial should report the loaded one once and the computed one as done:\n%s", log.String())
	}
	cfg.Seed = 6
	if _, err := e.Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "other settings") {
		t.Errorf("a journal of seed 5 was reused for seed 6: %v", err)
	}
}

func TestUnknownExperimentAndOption(t *testing.T) {
	if _, err := Get("nope"); err == nil {
		t.Error("unknown experiment accepted")
	}
	e, _ := Get("rbm-n")
	if _, err := e.Run(context.Background(), Config{Out: t.TempDir(), Mode: Tiny, Settings: IsingNSettings{Field: 1}}); err == nil || !strings.Contains(err.Error(), "RBMNSettings") {
		t.Errorf("ising-n's settings given to rbm-n: %v; want an error naming the type it takes", err)
	}
	if _, err := e.ParseSettings(map[string]string{"field": "1"}); err == nil || !strings.Contains(err.Error(), "--nmax") {
		t.Errorf("--field given to rbm-n: %v; want an error listing its options", err)
	}
}

func TestTrialSeedsDiffer(t *testing.T) {
	seen := map[uint64]bool{}
	for s := range uint64(3) {
		for tr := range 100 {
			v := rng.NewKey(s).Split(tr).Seed
			if seen[v] {
				t.Fatalf("trial seed collision at seed %d trial %d", s, tr)
			}
			seen[v] = true
		}
	}
}

// withoutTiming drops the rows that depend on wall time, which differ
// between runs.
func withoutTiming(csv []byte) string {
	var keep []string
	for _, l := range strings.Split(string(csv), "\n") {
		if !strings.Contains(l, ",seconds,") && !strings.Contains(l, ",ess_per_s,") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// The i.i.d. variance behind eff_n is the mean of the marginal variances:
// for spins 1 − E[z_i]², for a categorical variable E[z²] − E[z]².
func TestEffectiveSizeVariance(t *testing.T) {
	m, err := categorical.New([]categorical.Variable{
		{States: []float64{-1, 1}, Probs: []float64{0.2, 0.8}},
		{States: []float64{0, 1, 2}, Probs: []float64{0.5, 0.25, 0.25}},
	})
	if err != nil {
		t.Fatal(err)
	}
	truth, err := exact.For(m)
	if err != nil {
		t.Fatal(err)
	}
	p := newPoint(7, m, 10, truth)
	// Variances 1 − 0.6² = 0.64 and (0.25 + 1) − 0.75² = 0.6875.
	if want := (0.64 + 0.6875) / 2; math.Abs(p.iidVar-want) > 1e-12 {
		t.Errorf("iidVar = %v, want %v", p.iidVar, want)
	}
}

// The suite takes the UAI networks of a directory as extra targets,
// records their digests in the journal's settings, resumes when a network
// is added, and refuses to resume when a network changed.
func TestSuiteUAIDir(t *testing.T) {
	nets := t.TempDir()
	// Three binary variables in a chain, and a unary factor.
	net := "MARKOV\n3\n2 2 2\n3\n2 0 1\n2 1 2\n1 0\n\n4\n2 1 1 2\n\n4\n3 1 1 3\n\n2\n1 4\n"
	if err := os.WriteFile(filepath.Join(nets, "chain.uai"), []byte(net), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	e, _ := Get("suite")
	cfg := Config{Out: dir, Seed: 3, Mode: Tiny, Trials: 1, UAIDir: nets}
	res, err := e.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range res.Notes {
		found = found || strings.Contains(n, "uai:chain")
	}
	if !found {
		t.Errorf("the notes do not name the network uai:chain")
	}
	side, _ := os.ReadFile(filepath.Join(dir, "suite.trials.json"))
	if !strings.Contains(string(side), `"chain.uai"`) {
		t.Errorf("the journal's settings lack the network's digest: %s", side)
	}
	verdict := strings.Join(res.Notes, "\n")
	if !strings.Contains(verdict, "verdict:") || !strings.Contains(verdict, "worst") {
		t.Errorf("no verdict in the notes")
	}
	// Another network may join: the journal resumes and records it.
	if err := os.WriteFile(filepath.Join(nets, "b.uai"), []byte(strings.Replace(net, "1 4", "2 3", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(context.Background(), cfg); err != nil {
		t.Fatalf("resuming with a network added: %v", err)
	}
	if side, _ := os.ReadFile(filepath.Join(dir, "suite.trials.json")); !strings.Contains(string(side), `"b.uai"`) {
		t.Errorf("the added network is not recorded: %s", side)
	}
	if err := os.WriteFile(filepath.Join(nets, "chain.uai"), []byte(strings.Replace(net, "1 4", "1 5", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "other settings") {
		t.Errorf("resuming after the network changed: %v", err)
	}
	other, _ := Get("ising-n")
	if _, err := other.Run(context.Background(), Config{Out: t.TempDir(), Mode: Tiny, UAIDir: nets}); err == nil {
		t.Error("ising-n took --uai")
	}
}

// --methods runs a subset (exact and Gibbs always), resumes a journal that
// holds other methods' trials, and leaves those out of the tables.
func TestSuiteMethodSubset(t *testing.T) {
	dir := t.TempDir()
	e, _ := Get("suite")
	cfg := Config{Out: dir, Seed: 3, Mode: Tiny, Trials: 1, Methods: []string{"pt", "sw"}}
	res, err := e.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	methods := func(rows []Row) map[string]bool {
		got := map[string]bool{}
		for _, r := range rows {
			got[r.Method] = true
		}
		return got
	}
	if got := methods(res.Rows); len(got) != 4 || !got["exact"] || !got["gibbs"] || !got["pt"] || !got["sw"] {
		t.Errorf("methods in the tables: %v; want exact, gibbs, pt, sw", got)
	}
	cfg.Methods = []string{"dhmc"}
	res, err = e.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("resuming a journal with pt and sw trials for dhmc: %v", err)
	}
	if got := methods(res.Rows); got["pt"] || !got["dhmc"] {
		t.Errorf("methods in the tables of the second run: %v", got)
	}
	cfg.Methods = []string{"nope"}
	if _, err := e.Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "unknown method") {
		t.Errorf("an unknown method: %v", err)
	}
}

// TestJournalNewOption checks that a journal written before an option
// existed resumes when the option is at its default and is refused when
// it is not.
func TestJournalNewOption(t *testing.T) {
	dir := t.TempDir()
	e, _ := Get("ising-n")
	cfg := Config{Out: dir, Seed: 1, Mode: Tiny}
	if _, err := e.Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	side := filepath.Join(dir, "ising-n.trials.json")
	raw, _ := os.ReadFile(side)
	old := strings.Replace(string(raw), `"field": 0,`, "", 1)
	if old == string(raw) {
		t.Fatalf("the sidecar has no field option to remove:\n%s", raw)
	}
	os.WriteFile(side, []byte(old), 0o644)
	var log bytes.Buffer
	cfg.Log = &log
	if _, err := e.Run(context.Background(), cfg); err != nil {
		t.Fatalf("a journal without a later option, at its default, was refused: %v", err)
	}
	if !strings.Contains(log.String(), "2 trials loaded") {
		t.Errorf("the resume computed trials again:\n%s", log.String())
	}
	os.WriteFile(side, []byte(old), 0o644)
	cfg.Settings = IsingNSettings{Field: 0.2}
	if _, err := e.Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "other settings") {
		t.Errorf("a journal without the option was reused with a non-default value: %v", err)
	}
}

// rechecksum returns a journal's text with every trial's checksum
// recomputed, as a journal edited by hand and then "repaired" would be:
// tests use it to make journals that differ from dstein's in one place.
func rechecksum(t *testing.T, data []byte) []byte {
	t.Helper()
	lines := strings.Split(string(data), "\n")
	var out strings.Builder
	out.WriteString(lines[0] + "\n")
	w := csv.NewWriter(&out)
	var rows [][]string
	for _, l := range lines[1:] {
		if l == "" {
			continue
		}
		rec, err := csv.NewReader(strings.NewReader(l)).Read()
		if err != nil {
			t.Fatal(err)
		}
		if rec[3] != journal.DoneMarker {
			rows = append(rows, rec)
			continue
		}
		var sum uint32
		for _, r := range rows {
			if r[0] == rec[0] && r[1] == rec[1] && r[2] == rec[2] {
				var b strings.Builder
				cw := csv.NewWriter(&b)
				cw.Write(r)
				cw.Flush()
				sum = journal.RowSum(sum, strings.TrimSuffix(b.String(), "\n"))
				w.Write(r)
			}
		}
		rec[4] = strconv.FormatUint(uint64(sum), 10)
		w.Write(rec)
	}
	w.Flush()
	return []byte(out.String())
}

// A packing run (Config.Pack) leaves the journal as NAME.trials.csv.gz,
// the same bytes gzipped; a resume reads it and, computing nothing, leaves
// it as it was; a run with more trials unpacks it, appends and packs it
// again; a damaged packed journal is refused with its name; --restart sets
// it aside with the settings.
func TestPackedJournal(t *testing.T) {
	dir := t.TempDir()
	e, _ := Get("ising-n")
	cfg := Config{Out: dir, Seed: 5, Mode: Tiny, Pack: true, NoSVG: true}
	if _, err := e.Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	plain, gz := filepath.Join(dir, "ising-n.trials.csv"), filepath.Join(dir, "ising-n.trials.csv.gz")
	if _, err := os.Stat(plain); err == nil {
		t.Fatal("the plain journal is left beside the packed one")
	}
	if _, err := os.Stat(filepath.Join(dir, "ising-n.svg")); err == nil {
		t.Error("NoSVG wrote the SVG")
	}
	packed, err := os.ReadFile(gz)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(filepath.Join(dir, "ising-n.csv"))
	var log bytes.Buffer
	cfg.Log = &log
	res, err := e.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(gz)
	second, _ := os.ReadFile(filepath.Join(dir, "ising-n.csv"))
	if res.Loaded != 2 || string(again) != string(packed) || string(first) != string(second) {
		t.Errorf("a resume from the packed journal loaded %d trials (want 2), changed it: %v, changed the CSV: %v", res.Loaded, string(again) != string(packed), string(first) != string(second))
	}
	if !strings.Contains(log.String(), "2 trials loaded from "+gz) {
		t.Errorf("the log does not name the packed journal the trials came from: %q", log.String())
	}
	if _, err := os.Stat(plain); err == nil {
		t.Error("a resume that computed nothing unpacked the journal")
	}
	// One more trial: read packed, appended, packed again.
	cfg.Trials = 3
	if res, err = e.Run(context.Background(), cfg); err != nil || res.Loaded != 2 {
		t.Fatalf("3 trials after 2: loaded %v, %v", res, err)
	}
	data, err := journal.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(plain); err == nil || !strings.Contains(string(data), ",2,_done,") {
		t.Errorf("the third trial is not in the packed journal, or the plain one is left:\n%s", data)
	}
	// A damaged packed journal is refused, naming it.
	bad := append([]byte(nil), again...)
	bad[len(bad)/2] ^= 0xff
	os.WriteFile(gz, bad, 0o644)
	if _, err := e.Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "ising-n.trials.csv.gz") {
		t.Errorf("a damaged packed journal: %v", err)
	}
	cfg.Restart = true
	if _, err := e.Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(gz + ".old"); err != nil {
		t.Errorf("--restart did not set the packed journal aside: %v", err)
	}
}

// A packing run never replaces a file in the place of the packed journal
// that is not one: a resume with the plain journal beside a foreign
// NAME.trials.csv.gz is refused before any work, the file kept.
func TestPackRefusesAForeignFile(t *testing.T) {
	dir := t.TempDir()
	e, _ := Get("ising-n")
	cfg := Config{Out: dir, Seed: 5, Mode: Tiny, NoSVG: true}
	if _, err := e.Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(dir, "ising-n.trials.csv.gz")
	os.WriteFile(gz, []byte("my own notes"), 0o644)
	cfg.Pack = true
	if _, err := e.Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "is not a packed trial journal") {
		t.Errorf("a foreign file in the packed journal's place: %v", err)
	}
	if b, _ := os.ReadFile(gz); string(b) != "my own notes" {
		t.Errorf("the foreign file was changed: %q", b)
	}
}
