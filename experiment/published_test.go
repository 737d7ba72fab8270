package experiment

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dstein/dstein/experiment/journal"
	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/report"
)

// published ties a number quoted in the docs to the committed result file
// it comes from: the mean of (method, x, metric) in docs/results/File
// (divided by the mean of method Over at the same x and metric when Over
// is set: a ratio of paired trials), formatted into Text, must appear in
// Doc.
type published struct {
	Doc, File, Method, X, Metric string
	Text                         string // with one verb for the value, such as "| 0.070 |" as "| %.3f |"
	Scale                        float64
	Over                         string
}

// The headline numbers of EXPERIMENTS.md, each checked against its file.
var headlines = []published{
	{"EXPERIMENTS.md", "gof-rbm-n/gof-rbm-n.csv", "gfksd", "1000", "reject", "| 0.28 | %.2f |", 1, ""},
	{"EXPERIMENTS.md", "ising-n-field/ising-n.csv", "gfsvgd-transport", "500", "mse", "| %.3g ± 0.0005 |\n| gfsvgd-hybrid", 1, ""},
	{"EXPERIMENTS.md", "ising-n-field/ising-n.csv", "gwg", "200", "seconds", "GWG %.1f s (66 s in the first", 1, ""},
	{"EXPERIMENTS.md", "rbm-d/rbm-d.csv", "dmala", "200", "mmd2", "| %.3g |\n| dhmc", 1, ""},
	{"EXPERIMENTS.md", "rbm-d/rbm-d.csv", "gfsvgd-paper", "200", "mmd2", "| 0.0362 | %.3g |", 1, ""},
	{"EXPERIMENTS.md", "rbm-d/rbm-d.csv", "exact", "200", "mse", "against\n%.2g", 1, ""},
	{"EXPERIMENTS.md", "ising-n/ising-n.csv", "gfsvgd-transport", "500", "mse", "| %.3g ± 1e-05 |", 1, ""},
	{"EXPERIMENTS.md", "ising-n/ising-n.csv", "pt-4chains", "500", "mse", "| %.2g ± 6e-05 |", 1, ""},
	{"EXPERIMENTS.md", "ising-n/ising-n.csv", "exact", "10", "mse", "| exact | %.3g ± 0.003 |", 1, ""},
	{"EXPERIMENTS.md", "ising-sigma/ising-sigma.csv", "gfsvgd-transport", "0", "mse", "| **%.4f** |", 1, ""},
	{"EXPERIMENTS.md", "ising-sigma/ising-sigma.csv", "gfsvgd-paper", "0", "mse", "| %.3f |", 1, ""},
	{"EXPERIMENTS.md", "ising-sigma/ising-sigma.csv", "pt-4chains", "0.15", "mse", "| %.3f |\n| gibbs", 1, ""},
	{"EXPERIMENTS.md", "categorical/categorical.csv", "gfsvgd-paper", "500", "tv", "| **%.3f** ± 0.001 |", 1, ""},
	{"EXPERIMENTS.md", "categorical/categorical.csv", "gfsvgd-transport", "500", "tv", "| %.3f ± 0.004 |", 1, ""},
	{"EXPERIMENTS.md", "gof-level/gof-level.csv", "gfksd", "50", "reject", "| gfksd (τ = 0.02) | %.3f |", 1, ""},
	{"EXPERIMENTS.md", "gof-level/gof-level.csv", "mmd", "500", "reject", "| 0.054 | 0.054 | 0.064 | %.3f |", 1, ""},
	{"EXPERIMENTS.md", "rbm-n/rbm-n.csv", "gibbs", "20", "mmd2", "| gibbs | %.3g ± 0.0005 |", 1, ""},
	{"EXPERIMENTS.md", "rbm-n/rbm-n.csv", "gfsvgd-hybrid", "200", "mmd2", "| %.3g ± 0.00002 | 0.000122", 1, ""},
	{"EXPERIMENTS.md", "rbm-n/rbm-n.csv", "gfsvgd-transport", "500", "mse", "| %.3g ± 0.001 |\n| gfsvgd-hybrid", 1, ""},
	{"EXPERIMENTS.md", "transform/transform.csv", "gfsvgd-paper", "10", "tv", "| %.4f ± 0.002 |", 1, ""},
	{"EXPERIMENTS.md", "transform/transform.csv", "gfsvgd-transport", "0", "tv", "| gfsvgd-transport | %.3f ± 0.004 |", 1, ""},
	{"EXPERIMENTS.md", "gof-rbm-sigma/gof-rbm-sigma.csv", "dksd", "0", "reject", "| dksd | **%.2f** |", 1, ""},
	{"EXPERIMENTS.md", "gof-rbm-sigma/gof-rbm-sigma.csv", "mmd", "0.025", "reject", "| mmd | 0.00 | **%.2f** |", 1, ""},
	{"EXPERIMENTS.md", "bnn/bnn.csv", "benn", "8", "accuracy", "| 8 | 96.97%% | 97.77%% | %.2f%% |", 100, ""},
	{"EXPERIMENTS.md", "bnn/bnn.csv", "gfsvgd", "1", "accuracy", "| 1 | %.2f%% |", 100, ""},
	{"EXPERIMENTS.md", "gof-level/gof-level.csv", "gfksd-paper", "100", "ks_uniform", "| **0.113** | **%.3f** |", 1, ""},
	{"EXPERIMENTS.md", "suite/suite.csv", "pt-4chains", "6", "mode_mass", "(`pt-4chains`) %.3f ± 0.005 and", 1, ""},
	{"EXPERIMENTS.md", "suite/suite.csv", "hybrid", "7", "mode_mass", "the hybrid 0.585 ± 0.004 and\n%.3f ± 0.024;", 1, ""},
	{"EXPERIMENTS.md", "suite/suite.csv", "pt-4chains", "7", "ratio_to_iid:mse", "its MSE of the means is 1.34× i.i.d. against %.2g×,", 1, ""},
	{"EXPERIMENTS.md", "suite/suite.csv", "pt-auto", "7", "ratio_to_iid:mse", "the means is %.3g× i.i.d. (MMD² 1.42×", 1, ""},
	{"EXPERIMENTS.md", "suite-n20/suite.csv", "pt-herd", "1", "ratio_to_iid:mse", "| grid4-weak | **%.3g** ±13%% (1.05; 1.05)", 1, ""},
	{"EXPERIMENTS.md", "suite-n50/suite.csv", "pt-herd", "7", "ratio_to_iid:mse", "(1.70; 3.16) | %.3g ±50%% (3.42; 5.23)", 1, ""},
	{"EXPERIMENTS.md", "suite/suite.csv", "pt-herd", "6", "mode_mass", "grid4-strong %.3f ± 0.003", 1, ""},
	{"EXPERIMENTS.md", "variants-rbm/variants-rbm.csv", "transport-100+ssweeps10", "200", "mse", "**0.21 / 0.26 / 0.31 / %.2f**", 1, "exact"},
	{"EXPERIMENTS.md", "variants-rbm/variants-rbm.csv", "transport-100+ssweeps10", "100", "mse", "the transport's start still helps a little (%.2f against 0.43", 1, "exact"},
	{"EXPERIMENTS.md", "variants-ising/variants-ising.csv", "transport-100+ssweeps30", "20", "mmd2", "the hybrid's MMD² is %.3f ± 0.004", 1, "exact"},
	{"EXPERIMENTS.md", "variants-rbm-coord/variants-rbm.csv", "coord-200", "200", "mse", "| 3.3 / 7.4 / 10.9 / %.1f |", 1, "exact"},
	{"EXPERIMENTS.md", "variants-ising-screen/variants-ising.csv", "transport", "200", "mse", "| 4.8 / 8.5 / 15.3 / %.1f |", 1, "exact"},
	{"EXPERIMENTS.md", "suite-uai/suite.csv", "pt-4chains", "137293", "ratio_to_iid:mse", "| **%.3g ± 61%%** |", 1, ""},
	{"EXPERIMENTS.md", "suite-uai/suite.csv", "hybrid", "568777", "ratio_to_iid:mse", "| 1.06 ± 11%% | %.3g ± 10%% |", 1, ""},
	{"EXPERIMENTS.md", "suite/suite.csv", "hybrid", "9", "ratio_to_iid:mse", "on rbm-strong %.0f×, and its", 1, ""},
	{"EXPERIMENTS.md", "discs/discs.csv", "dlmc-ratio", "1", "ess_per_step", "| | DLMC ratio | %.3g |", 1, ""},
	{"EXPERIMENTS.md", "discs/discs.csv", "gibbs", "1", "ess_per_step_at_discs_length", "| 0.000187 | %.3g |", 1, ""},
	{"EXPERIMENTS.md", "discs/discs.csv", "dlmc-sqrt", "3", "ess_per_second_total", "(1.15×)**, DLMC %.0f (129× short)", 1, ""},
	{"EXPERIMENTS.md", "discs/discs.csv", "gibbs", "3", "ess_per_second_total", "**Gibbs %.0f against DISCS's DLMC 496,400", 1, ""},
	{"EXPERIMENTS.md", "discs-long/discs.csv", "dlmc-sqrt", "1", "bulk_ess_per_step", "| DLMC sqrt | 0.0186 → 0.0147 | 0.00435 → %.3g |", 1, ""},
	{"EXPERIMENTS.md", "discs-long/discs.csv", "gwg-multi-ratio", "1", "ess_per_step", "| GWG ratio | 0.0188 → %.3g |", 1, ""},
	{"EXPERIMENTS.md", "discs-long/discs.csv", "dlmc-ratio", "1", "rhat", "| 0.0119 → 0.0156 | 1.03 → %.3f |", 1, ""},
}

// TestPublishedNumbers checks the headline numbers of the docs against
// the committed results, so that a rerun that changes a result, or an edit
// of the docs, cannot leave them apart.
func TestPublishedNumbers(t *testing.T) {
	docs := map[string]string{}
	for _, h := range headlines {
		if _, ok := docs[h.Doc]; !ok {
			b, err := os.ReadFile(filepath.Join("..", h.Doc))
			if err != nil {
				t.Fatal(err)
			}
			docs[h.Doc] = string(b)
		}
		path := filepath.Join("..", "docs", "results", h.File)
		v, err := resultMean(path, h.Method, h.X, h.Metric)
		if err == nil && h.Over != "" {
			var d float64
			d, err = resultMean(path, h.Over, h.X, h.Metric)
			v /= d
		}
		if err != nil {
			t.Errorf("%s: %v", h.File, err)
			continue
		}
		want := fmt.Sprintf(h.Text, v*h.Scale)
		if !strings.Contains(docs[h.Doc], want) {
			t.Errorf("%s does not say %q (the mean of %s %s at %s in docs/results/%s is %v)", h.Doc, want, h.Method, h.Metric, h.X, h.File, v)
		}
	}
}

// resultMean returns the mean column of one row of a summary CSV.
func resultMean(path, method, x, metric string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return 0, err
	}
	for _, r := range rows[1:] {
		if r[1] == method && r[4] == x && r[5] == metric {
			return strconv.ParseFloat(r[6], 64)
		}
	}
	return 0, fmt.Errorf("no row %s, x = %s, %s", method, x, metric)
}

// TestCommittedJournalsRead reads every trial journal under docs/results
// that has a settings file (this round's form) as a resume would, so that a
// committed journal that a resume or a merge would refuse fails here.
func TestCommittedJournalsRead(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "docs", "results", "*", "*.trials.csv"))
	packed, _ := filepath.Glob(filepath.Join("..", "docs", "results", "*", "*.trials.csv.gz"))
	for _, p := range packed {
		paths = append(paths, strings.TrimSuffix(p, journal.PackedSuffix))
	}
	n := 0
	for _, p := range paths {
		if _, err := os.Stat(strings.TrimSuffix(p, ".csv") + ".json"); err != nil {
			continue // a first-round journal, to be regenerated
		}
		data, err := journal.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(p), ".trials.csv")
		s, err := journal.ReadSettings(strings.TrimSuffix(p, ".csv")+".json", name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Format != journal.FormatVersion {
			t.Errorf("%s: journal format %d, want %d (checksums)", p, s.Format, journal.FormatVersion)
		}
		if keep, incomplete, err := journal.Check(data, s.Format >= 3); err != nil || keep != len(data) || incomplete {
			t.Errorf("%s: %v (%d of %d bytes complete; trials left open: %v)", p, err, keep, len(data), incomplete)
		}
		n++
	}
	if n == 0 {
		t.Error("no journal with settings under docs/results")
	}
}

// TestCommittedOutputsOwned checks that dstein reproduce --out-dir
// docs/results may replace every table, figure and text it wrote there: the
// directories' records (.dstein-files.json) hold each file's present
// content, so a rerun is not refused and an edit by hand would be.
func TestCommittedOutputsOwned(t *testing.T) {
	root := filepath.Join("..", "docs", "results")
	for _, f := range []string{"index.html", "reproduce.json"} {
		if err := safeio.Owned(filepath.Join(root, f)); err != nil {
			t.Error(err)
		}
	}
	for _, p := range Reproductions() {
		ex, err := Get(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(root, p.ID)
		for _, f := range append(ex.OutputsFor(dir, false), filepath.Join(dir, p.Name+".txt")) {
			if _, err := os.Stat(f); err != nil {
				t.Errorf("result %s: %v", p.ID, err)
				continue
			}
			if err := safeio.Owned(f); err != nil {
				t.Errorf("result %s: %v", p.ID, err)
			}
		}
	}
}

// TestReproductionsCommitted checks that every result dstein reproduce
// makes is committed under docs/results/ID with its summary CSV, packed
// journal and settings, so that each published number has its file (and
// the page under docs/ can be rebuilt from the journals).
func TestReproductionsCommitted(t *testing.T) {
	for _, p := range Reproductions() {
		for _, ext := range []string{".csv", ".trials.csv.gz", ".trials.json"} {
			path := filepath.Join("..", "docs", "results", p.ID, p.Name+ext)
			if _, err := os.Stat(path); err != nil {
				t.Errorf("result %s: %v", p.ID, err)
			}
		}
	}
}

// TestCommittedPage checks the report page committed under docs/results:
// every image and link it references exists (report.CheckPage), and it has
// a section for every result dstein reproduce makes.
func TestCommittedPage(t *testing.T) {
	page := filepath.Join("..", "docs", "results", "index.html")
	if err := report.CheckPage(page); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Reproductions() {
		if !strings.Contains(string(b), `id="`+p.ID+`"`) {
			t.Errorf("the page has no section %s", p.ID)
		}
		if p.Needs == "" && !strings.Contains(string(b), p.ID+"/"+p.Name+".png") {
			t.Errorf("the page shows no figure of %s", p.ID)
		}
	}
}

// TestPublishedVerdicts computes every result's verdict from its committed
// summary CSV and checks that EXPERIMENTS.md's table of computed verdicts
// says the same: a rerun that changes a verdict, or an edit of the table,
// cannot leave them apart. The page's reproduce.json must agree too.
func TestPublishedVerdicts(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "EXPERIMENTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	var page struct {
		Results []struct {
			ID      string   `json:"id"`
			Verdict *Verdict `json:"verdict"`
		} `json:"results"`
	}
	pb, err := os.ReadFile(filepath.Join("..", "docs", "results", "reproduce.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(pb, &page); err != nil {
		t.Fatal(err)
	}
	onPage := map[string]*Verdict{}
	for _, r := range page.Results {
		onPage[r.ID] = r.Verdict
	}
	for _, p := range Reproductions() {
		ex, err := Get(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "docs", "results", p.ID, ex.Name+".csv")
		rows, err := ReadRows(path)
		if err != nil {
			if p.Needs != "" && os.IsNotExist(err) {
				continue
			}
			t.Errorf("%s: %v", p.ID, err)
			continue
		}
		v := p.Judge(rows, Full)
		if want := fmt.Sprintf("| %s | %s |", p.ID, v.Status); !strings.Contains(doc, want) {
			t.Errorf("EXPERIMENTS.md lacks the row %q; computed: %s", want, v)
		}
		if pv, ok := onPage[p.ID]; ok && pv != nil && (pv.Status != v.Status || pv.Because != v.Because) {
			t.Errorf("%s: reproduce.json says %q; computed from the CSV: %q", p.ID, pv, v)
		}
	}
}

var driftAll = flag.Bool("drift.all", false, "TestCommittedResultsFollowTheirJournals: rebuild every result, the slow ones too (about 15 minutes; the suites on UAI networks need -drift.uai)")
var driftUAI = flag.String("drift.uai", "", "TestCommittedResultsFollowTheirJournals: a directory of the UAI networks that suite-uai was run on")

// driftFast are the results whose tables rebuild from their journals in a
// few seconds (reproduce.json's times); -drift.all adds the others.
var driftFast = []string{"ising-n", "ising-sigma", "transform", "categorical", "ising-n-field", "variants-ising-screen", "variants-ising-coord", "variants-ising", "discs", "gof-level", "gof-ising-temp", "gof-ising-n", "bnn"}

// TestCommittedResultsFollowTheirJournals rebuilds committed results from
// their committed journals alone (an offline run: a trial the journal lacks
// is an error, nothing is computed) and requires the summary CSV, from
// which EXPERIMENTS.md's numbers and the verdicts come, to be the
// committed one byte for byte: a result edited by hand, or a journal
// changed without rebuilding its result, fails here.
func TestCommittedResultsFollowTheirJournals(t *testing.T) {
	for _, p := range Reproductions() {
		if !*driftAll && !slices.Contains(driftFast, p.ID) {
			continue
		}
		if p.Needs == "uai" && *driftUAI == "" {
			continue
		}
		t.Run(p.ID, func(t *testing.T) {
			t.Parallel()
			ex, err := Get(p.Name)
			if err != nil {
				t.Fatal(err)
			}
			src := filepath.Join("..", "docs", "results", p.ID)
			dir := t.TempDir()
			for _, f := range []string{p.Name + ".trials.csv.gz", p.Name + ".trials.json"} {
				data, err := os.ReadFile(filepath.Join(src, f))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg := p.Config(dir, Full)
			cfg.NoSVG, cfg.offline = true, true
			if p.Needs == "uai" {
				cfg.UAIDir = *driftUAI
			}
			if _, err := ex.Run(context.Background(), cfg); err != nil {
				t.Fatalf("rebuilding from the committed journal: %v", err)
			}
			got, err := os.ReadFile(filepath.Join(dir, p.Name+".csv"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(src, p.Name+".csv"))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
				for k := range min(len(gl), len(wl)) {
					if gl[k] != wl[k] {
						t.Fatalf("%s/%s.csv drifted from its journal: line %d is %q, the journal gives %q (%d and %d lines)", p.ID, p.Name, k+1, wl[k], gl[k], len(wl), len(gl))
					}
				}
				t.Fatalf("%s/%s.csv drifted from its journal: %d lines, the journal gives %d", p.ID, p.Name, len(wl), len(gl))
			}
		})
	}
}
