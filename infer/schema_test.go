package infer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/dlmc"
	"github.com/dstein/dstein/sampler/dmala"
	"github.com/dstein/dstein/sampler/gwg"
	"github.com/dstein/dstein/sampler/pas"
)

// schemaDoc is the parsed docs/summary-schema.md: the keys of each object
// (by path: "." for the top level, "stages[]" for each stage), and each
// method's settings keys and statistics names.
type schemaDoc struct {
	keys       map[string][]string
	settings   map[string][]string
	statistics map[string][]string
}

// readSchemaDoc parses the key tables ("### `path`" then rows "| `key` |")
// and the two per-method tables of docs/summary-schema.md.
func readSchemaDoc(t *testing.T) schemaDoc {
	t.Helper()
	data, err := os.ReadFile("../docs/summary-schema.md")
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(data), "\n"); !strings.HasSuffix(first, "schema version "+strconv.Itoa(SummaryVersion)) {
		t.Errorf("docs/summary-schema.md's title %q does not name schema version %d", first, SummaryVersion)
	}
	doc := schemaDoc{keys: map[string][]string{}, settings: map[string][]string{}, statistics: map[string][]string{}}
	heading := regexp.MustCompile("^### `([^`]+)`")
	row := regexp.MustCompile("^\\| `([^`]+)` \\|([^|]*)\\|")
	names := regexp.MustCompile("`([a-z0-9_<>]+)`")
	section, path := "", ""
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "## ") {
			section, path = line, ""
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			path = m[1]
			doc.keys[path] = []string{}
			continue
		}
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		switch {
		case path != "":
			doc.keys[path] = append(doc.keys[path], m[1])
		case strings.Contains(section, "Settings of each method"), strings.Contains(section, "Statistics of each method"):
			list := []string{}
			cell := m[2]
			if k := strings.Index(cell, "(an object"); k >= 0 { // gfsvgd's bandwidth: its own keys are not top-level
				cell = cell[:k] + cell[strings.Index(cell[k:], ")")+k+1:]
			}
			for _, n := range names.FindAllStringSubmatch(cell, -1) {
				list = append(list, n[1])
			}
			if strings.Contains(section, "Settings") {
				doc.settings[m[1]] = list
			} else {
				doc.statistics[m[1]] = list
			}
		}
	}
	for _, p := range []string{".", "pipeline", "stages[]", "error_bars", "error_bars.quantities[]", "compressed"} {
		if len(doc.keys[p]) == 0 {
			t.Fatalf("docs/summary-schema.md has no key table for %s", p)
		}
	}
	return doc
}

// objectsAt returns the objects at a documented path of a summary: the
// object itself, or every element of an array ("stages[]"); null objects
// are skipped.
func objectsAt(v any, path string) []map[string]any {
	if path == "." {
		return []map[string]any{v.(map[string]any)}
	}
	cur := []any{v}
	for _, part := range strings.Split(path, ".") {
		arr := strings.HasSuffix(part, "[]")
		part = strings.TrimSuffix(part, "[]")
		var next []any
		for _, c := range cur {
			o, ok := c.(map[string]any)
			if !ok {
				continue
			}
			x := o[part]
			if arr {
				if a, ok := x.([]any); ok {
					next = append(next, a...)
				}
			} else if x != nil {
				next = append(next, x)
			}
		}
		cur = next
	}
	var out []map[string]any
	for _, c := range cur {
		if o, ok := c.(map[string]any); ok {
			out = append(out, o)
		}
	}
	return out
}

func keysOf(o map[string]any) []string {
	var k []string
	for n := range o {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

// documented reports whether every name in got is among doc (a statistic
// swap_1, swap_2, … matching swap_<k>), and marks the documented names
// seen (when seen is not nil). Some settings and statistics appear only
// with some settings (parallel tempering's kernel and auto ladder,
// DMALA's and DLMC's adaptation); that every documented name appears in
// some run is checked over all the runs.
func documented(got, doc []string, seen map[string]bool) bool {
	swap := regexp.MustCompile(`^swap_[0-9]+$`)
	want := map[string]bool{}
	for _, d := range doc {
		want[d] = true
	}
	for _, g := range got {
		switch {
		case want[g]:
		case want["swap_<k>"] && swap.MatchString(g):
			g = "swap_<k>"
		default:
			return false
		}
		if seen != nil {
			seen[g] = true
		}
	}
	return true
}

// Every registered method, every preset, and runs with draws, replicates and
// compression (with and without Stein weights) write summaries whose every
// object has exactly the keys docs/summary-schema.md lists, whose settings
// and statistics are each method's documented ones, and which are
// documented for every method that exists.
func TestSummaryMatchesSchemaDoc(t *testing.T) {
	doc := readSchemaDoc(t)
	g, err := ising.Grid(3, 3, false, 0.3, []float64{0.1, -0.2, 0, 0.3, 0, -0.1, 0.2, 0, 0.1})
	if err != nil {
		t.Fatal(err)
	}
	short := func(p sampler.Pipeline) sampler.Pipeline {
		p.Stages = slices.Clone(p.Stages)
		for k := range p.Stages {
			p.Stages[k].Iters = min(p.Stages[k].Iters, 30)
		}
		return p
	}
	type run struct {
		name string
		spec Spec
	}
	var runs []run
	for _, m := range sampler.Methods() {
		if doc.settings[m.Name] == nil || doc.statistics[m.Name] == nil {
			t.Errorf("docs/summary-schema.md does not list the settings and statistics of method %s", m.Name)
		}
		p, _, err := Pipeline(m.Name)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run{m.Name, Spec{Pipeline: short(p), N: 6, Key: rng.NewKey(2)}})
		if !m.OneShot && !m.Approximate {
			runs = append(runs, run{m.Name + " with draws", Spec{Pipeline: short(p), N: 2, Keep: Keep{Warmup: 5, Draws: 20}, Key: rng.NewKey(2)}})
		}
	}
	for _, name := range PresetNames() {
		p, _ := Preset(name)
		spec := SpecFor(name, p, 8, rng.NewKey(2))
		switch {
		case spec.Keep.Target > 0:
			spec.Keep.MaxIters = 16 // the default's ESS target: stop early
		case spec.Keep.Draws > 0:
			spec.Keep.Warmup, spec.Keep.Thin = 5, 1
		}
		spec.Pipeline = short(spec.Pipeline)
		runs = append(runs, run{name, spec})
	}
	// The settings and statistics that appear only with some settings:
	// parallel tempering's kernel and auto ladder (the default's, on this
	// ferromagnetic grid the cluster kernel) and DMALA's, DLMC's and
	// multi-flip GWG's adaptation.
	adapt := sampler.Stage{Method: "dmala", Iters: 30, Settings: &dmala.Settings{StepSize: 0.5, Adapt: 10, TargetAcceptance: 0.574}}
	runs = append(runs, run{"dmala adapted", Spec{Pipeline: sampler.Pipeline{Stages: []sampler.Stage{adapt}}, N: 2, Keep: Keep{Warmup: 20, Draws: 10}, Key: rng.NewKey(2)}})
	adapt = sampler.Stage{Method: "dlmc", Iters: 30, Settings: &dlmc.Settings{Adapt: 10}}
	runs = append(runs, run{"dlmc adapted", Spec{Pipeline: sampler.Pipeline{Stages: []sampler.Stage{adapt}}, N: 2, Keep: Keep{Warmup: 20, Draws: 10}, Key: rng.NewKey(2)}})
	// The path auxiliary sampler adapts its mean path length.
	adapt = sampler.Stage{Method: "pas", Iters: 30, Settings: &pas.Settings{Adapt: 10}}
	runs = append(runs, run{"pas adapted", Spec{Pipeline: sampler.Pipeline{Stages: []sampler.Stage{adapt}}, N: 2, Keep: Keep{Warmup: 20, Draws: 10}, Key: rng.NewKey(2)}})
	adapt = sampler.Stage{Method: "gwg-multi", Iters: 30, Settings: &gwg.MultiSettings{Adapt: 10}}
	runs = append(runs, run{"gwg-multi adapted", Spec{Pipeline: sampler.Pipeline{Stages: []sampler.Stage{adapt}}, N: 2, Keep: Keep{Warmup: 20, Draws: 10}, Key: rng.NewKey(2)}})
	// dlmc-uncorrected is approximate, so it has no run with draws: a
	// second run, with the other balancing function.
	uncorrected := sampler.Stage{Method: "dlmc-uncorrected", Iters: 10, Settings: &dlmc.UncorrectedSettings{Balance: dlmc.Ratio}}
	runs = append(runs, run{"dlmc-uncorrected ratio", Spec{Pipeline: sampler.Pipeline{Stages: []sampler.Stage{uncorrected}}, N: 2, Key: rng.NewKey(2)}})
	gibbs, _, _ := Pipeline("gibbs")
	runs = append(runs,
		run{"replicates", Spec{Pipeline: short(gibbs), N: 5, Replicates: 3, Key: rng.NewKey(2)}},
		run{"stein compression", Spec{Pipeline: short(gibbs), N: 2, Keep: Keep{Warmup: 5, Draws: 20}, Compress: Compression{Rule: RuleStein, N: 4}, Key: rng.NewKey(2)}},
		run{"reweighted herding", Spec{Pipeline: short(gibbs), N: 2, Keep: Keep{Warmup: 5, Draws: 20}, Compress: Compression{Rule: RuleHerding, N: 4, Reweight: true}, Key: rng.NewKey(2)}})

	seenSettings, seenStats := map[string]map[string]bool{}, map[string]map[string]bool{}
	covered := map[string]bool{}
	for _, r := range runs {
		out, err := Run(context.Background(), g, r.spec)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		if err := json.NewEncoder(w).Encode(NewSummary(r.name, "grid.json", g, out)); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		var sum any
		if err := json.Unmarshal(buf.Bytes(), &sum); err != nil {
			t.Fatal(err)
		}
		for path, want := range doc.keys {
			for _, o := range objectsAt(sum, path) {
				covered[path] = true
				got := keysOf(o)
				w := slices.Clone(want)
				sort.Strings(w)
				if !slices.Equal(got, w) {
					t.Errorf("%s: %s has keys %v; docs/summary-schema.md lists %v", r.name, path, got, w)
				}
			}
		}
		top := sum.(map[string]any)
		if v := top["schema_version"].(float64); int(v) != SummaryVersion {
			t.Errorf("%s: schema_version %v; want %d", r.name, v, SummaryVersion)
		}
		for _, st := range objectsAt(sum, "stages[]") {
			method := st["method"].(string)
			if seenSettings[method] == nil {
				seenSettings[method], seenStats[method] = map[string]bool{}, map[string]bool{}
			}
			set, _ := st["settings"].(map[string]any)
			if set == nil || !documented(keysOf(set), doc.settings[method], seenSettings[method]) {
				t.Errorf("%s: %s's settings %v; docs/summary-schema.md lists %v", r.name, method, keysOf(set), doc.settings[method])
			}
			stats, _ := st["statistics"].(map[string]any)
			if stats == nil || !documented(keysOf(stats), doc.statistics[method], seenStats[method]) {
				t.Errorf("%s: %s's statistics %v; docs/summary-schema.md lists %v", r.name, method, keysOf(stats), doc.statistics[method])
			}
		}
		if c, ok := top["compressed"].(map[string]any); ok {
			if rw := c["reweight"].(bool); (c["weighted_mean"] == nil) == rw {
				t.Errorf("%s: weighted_mean %v with reweight %v; want null exactly without reweight", r.name, c["weighted_mean"], rw)
			}
		}
	}
	for method, names := range doc.settings {
		for _, name := range names {
			if !seenSettings[method][name] {
				t.Errorf("docs/summary-schema.md lists setting %s of %s, which no run's summary has", name, method)
			}
		}
	}
	for method, names := range doc.statistics {
		for _, name := range names {
			if !seenStats[method][name] {
				t.Errorf("docs/summary-schema.md lists statistic %s of %s, which no run's summary has", name, method)
			}
		}
	}
	for path := range doc.keys {
		if !covered[path] {
			t.Errorf("no run's summary has a %s object to check", path)
		}
	}
	for m := range doc.statistics {
		if _, err := sampler.Lookup(m); err != nil {
			t.Errorf("docs/summary-schema.md lists statistics of %s, which is not a method", m)
		}
	}
}
