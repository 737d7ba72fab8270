package experiment

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dstein/dstein/sampler/gibbs"
)

// TestVariantPresets checks that the variants that are exactly a preset
// say so, that the others do not, and that the first round's names of the
// transport variants still select them.
func TestVariantPresets(t *testing.T) {
	want := map[string]string{"transport": "transport", "transport-100+ssweeps30": "hybrid", "transport-100": "", "ssweeps30-only": "", "bw16": ""}
	for _, v := range variantTable {
		if p, ok := want[v.name]; ok {
			if got := presetOf(v.pipeline()); got != p {
				t.Errorf("variant %s: preset %q, want %q", v.name, got, p)
			}
			delete(want, v.name)
		}
	}
	if len(want) > 0 {
		t.Errorf("variants not in the table: %v", want)
	}
	for old, now := range map[string]string{"default": "transport", "default-100+ssweeps30": "transport-100+ssweeps30", "defaults": "defaults", "bw16": "bw16"} {
		if got := variantName(old); got != now {
			t.Errorf("variantName(%q) = %q, want %q", old, got, now)
		}
	}
}

// TestVariantSweepsSingleSite checks that every variant's Gibbs sweeps are
// single-site, as the study defines them: the scan's default would make
// the plain sweeps block Gibbs on the RBM.
func TestVariantSweepsSingleSite(t *testing.T) {
	for _, v := range variantTable {
		for _, st := range v.pipeline().Stages {
			if st.Method != "gibbs" {
				continue
			}
			set := st.Settings.(*gibbs.Settings)
			if !set.Stratified && set.Scan != gibbs.Systematic {
				t.Errorf("variant %s: plain sweeps with scan %v, want systematic", v.name, set.Scan)
			}
		}
	}
}

// TestVariantsJournal runs variants-ising in tiny mode and checks how its
// journal resumes: a variant named twice (by its old and its new name) runs
// once; another set of variants resumes over the same journal; an unknown
// name is reported as given; a journal holding the first round's names, or
// trials whose settings were not recorded, is refused before anything is
// computed.
func TestVariantsJournal(t *testing.T) {
	e, _ := Get("variants-ising")
	dir := t.TempDir()
	run := func(variants ...string) (*Result, error) {
		return e.Run(context.Background(), Config{Out: dir, Seed: 3, Mode: Tiny, Variants: variants})
	}
	res, err := run("default-50+ssweeps5", " transport-50+ssweeps5")
	if err != nil {
		t.Fatal(err)
	}
	// The ratios' note names each method once per n (n = 10 and 20).
	if c := strings.Count(res.Notes[0], " transport-50+ssweeps5 "); c != 2 {
		t.Errorf("transport-50+ssweeps5 is in the note %d times, want 2: %s", c, res.Notes[0])
	}
	if _, err := run("ssweeps5-only"); err != nil {
		t.Errorf("a journal holding other variants was refused: %v", err)
	}
	if _, err := run("default-bogus"); err == nil || !strings.Contains(err.Error(), `"default-bogus"`) {
		t.Errorf("unknown variant: %v", err)
	}
	journal := filepath.Join(dir, "variants-ising.trials.csv")
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	// The first round's name in the journal.
	old := string(rechecksum(t, []byte(strings.ReplaceAll(string(data), "transport-50+ssweeps5", "default-50+ssweeps5"))))
	if err := os.WriteFile(journal, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run("ssweeps5-only"); err == nil || !strings.Contains(err.Error(), "first round's name") {
		t.Errorf("a journal with the first round's names: %v", err)
	}
	after, _ := os.ReadFile(journal)
	if string(after) != old {
		t.Error("the refused run wrote to the journal")
	}
	// Trials of a method whose settings the journal does not record.
	if err := os.WriteFile(journal, data, 0o644); err != nil {
		t.Fatal(err)
	}
	side := filepath.Join(dir, "variants-ising.trials.json")
	var set map[string]any
	b, _ := os.ReadFile(side)
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatal(err)
	}
	delete(set["methods"].(map[string]any), "ssweeps5-only")
	b, _ = json.Marshal(set)
	if err := os.WriteFile(side, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run("ssweeps5-only"); err == nil || !strings.Contains(err.Error(), "cannot be checked") {
		t.Errorf("trials without recorded settings: %v", err)
	}
}
