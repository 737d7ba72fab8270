package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dstein/dstein/experiment"
	"github.com/dstein/dstein/report"
)

// TestReproduce runs two results, checks the page's links and images with
// report.CheckPage, the statuses in reproduce.json, and that a second run
// resumes every trial; a result that needs an input it was not given is
// refused before anything runs.
func TestReproduce(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := dstein(t, "reproduce", "--tiny", "--only", "categorical,suite-uai", "--out-dir", dir); code != 2 || !strings.Contains(errs, "--only suite-uai: that result needs --uai DIR") {
		t.Errorf("--only suite-uai without --uai: exit %d, %q", code, errs)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused reproduce wrote %v", entries)
	}
	args := []string{"reproduce", "--tiny", "--only", "categorical,ising-n", "--out-dir", dir}
	code, out, errs := dstein(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	index := filepath.Join(dir, "index.html")
	if err := report.CheckPage(index); err != nil {
		t.Error(err)
	}
	page, _ := os.ReadFile(index)
	for _, want := range []string{`id="ising-n"`, `id="categorical"`, "ising-n/ising-n.png", "categorical/categorical.png", "dstein experiment ising-n --tiny"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// A tiny run's verdicts say at what scale they judge, on the page and
	// on standard output.
	if !strings.Contains(string(page), "Verdict at --tiny&#39;s scale") || !strings.Contains(out, "categorical: verdict at --tiny's scale") {
		t.Errorf("a tiny run's verdicts do not name their scale:\n%s", out)
	}
	var rep struct {
		Results []experiment.Reproduced `json:"results"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "reproduce.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, r := range rep.Results {
		status[r.ID] = r.Status
	}
	if status["ising-n"] != "ran" || status["categorical"] != "ran" || len(status) != 2 {
		t.Errorf("statuses %v", status)
	}
	for _, f := range []string{"ising-n/ising-n.txt", "ising-n/ising-n.csv", "ising-n/ising-n.trials.json", "categorical/categorical.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	for _, r := range rep.Results {
		if r.Loaded != 0 {
			t.Errorf("%s: %d trials loaded by a first run", r.ID, r.Loaded)
		}
	}
	code, _, errs = dstein(t, args...)
	if code != 0 || !strings.Contains(errs, "ising-n: 2 trials loaded") || strings.Contains(errs, "done in") {
		t.Errorf("the second run did not resume every trial (exit %d):\n%s", code, errs)
	}
	// The page and reproduce.json say that the trials were loaded.
	page, _ = os.ReadFile(index)
	if !strings.Contains(string(page), "2 trials loaded from the journal") {
		t.Error("the page does not say that the second run loaded its trials")
	}
	raw, _ = os.ReadFile(filepath.Join(dir, "reproduce.json"))
	rep.Results = nil
	if err := json.Unmarshal(raw, &rep); err != nil || len(rep.Results) == 0 || rep.Results[0].Loaded != 2 {
		t.Errorf("reproduce.json after the second run: %v %+v", err, rep.Results)
	}
	// A run of fewer results keeps the others on the page and in the
	// list, as the earlier run of the same mode wrote them
	// (experiment.TestEarlierResults: not those of another mode).
	code, out, errs = dstein(t, "reproduce", "--tiny", "--only", "categorical", "--out-dir", dir)
	if code != 0 || !strings.Contains(out, "kept 1 result of the earlier run") {
		t.Errorf("--only categorical after two results: exit %d: %s %s", code, out, errs)
	}
	page, _ = os.ReadFile(index)
	if !strings.Contains(string(page), `id="ising-n"`) || !strings.Contains(string(page), "an earlier run, kept: --only left this result out") {
		t.Error("the page lost the result that --only left out")
	}
	if err := report.CheckPage(index); err != nil {
		t.Error(err)
	}
	raw, _ = os.ReadFile(filepath.Join(dir, "reproduce.json"))
	rep.Results = nil
	if err := json.Unmarshal(raw, &rep); err != nil || len(rep.Results) != 2 {
		t.Fatalf("reproduce.json after --only categorical: %v %+v", err, rep.Results)
	}
	for _, r := range rep.Results {
		if (r.ID == "ising-n") != (r.Earlier != "") {
			t.Errorf("%s: earlier_run %q; want it set for ising-n only", r.ID, r.Earlier)
		}
	}
	if code, _, errs := dstein(t, "reproduce", "--only", "nope", "--out-dir", dir); code != 2 || !strings.Contains(errs, "unknown result") {
		t.Errorf("unknown result: exit %d, %q", code, errs)
	}
	// A page dstein did not write is never replaced, and nothing runs.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "index.html"), []byte("<html>my site</html>"), 0o644)
	if code, _, errs := dstein(t, "reproduce", "--tiny", "--only", "categorical", "--out-dir", other); code == 0 || !strings.Contains(errs, "was not written by dstein") {
		t.Errorf("a foreign index.html: exit %d, %s", code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(other, "index.html")); string(b) != "<html>my site</html>" {
		t.Error("the user's index.html was replaced")
	}
	if _, err := os.Stat(filepath.Join(other, "categorical")); err == nil {
		t.Error("work ran before the outputs were checked")
	}
}

// A run of fewer trials than its journal holds says so: the tables use
// the first ones, and the rest stay in the journal.
func TestExperimentFewerTrialsThanTheJournal(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := dstein(t, "experiment", "ising-n", "--tiny", "--trials", "4", "--out-dir", dir); code != 0 {
		t.Fatalf("4 trials: exit %d: %s", code, errs)
	}
	code, _, errs := dstein(t, "experiment", "ising-n", "--tiny", "--out-dir", dir)
	if code != 0 || !strings.Contains(errs, "the journal holds 2 more trials than this run's 2; the tables use the first 2 (--trials 4 uses them all)") {
		t.Errorf("2 trials of a journal of 4: exit %d: %s", code, errs)
	}
}
