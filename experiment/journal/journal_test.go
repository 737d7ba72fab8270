package journal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJournalMethodSettings checks the journal's Record of each method's
// settings: a new header field or version does not matter, a method's
// changed settings do when it has trials, and methods may be added.
func TestJournalMethodSettings(t *testing.T) {
	dir := t.TempDir()
	spec := Spec{Dir: dir, Name: "x", Want: Settings{Seed: 1, Mode: "tiny"}}
	j, err := Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Describe("a", []byte(`{"iters": 5}`)); err != nil {
		t.Fatal(err)
	}
	if err := j.Describe("b", []byte(`{"iters": 5}`)); err != nil {
		t.Fatal(err)
	}
	if err := j.Record(Key{"a", 1, 0}, map[string]float64{"mse": 1}); err != nil {
		t.Fatal(err)
	}
	j.Close(true)
	spec.Want.Version = "another-version"
	j, err = Open(spec)
	if err != nil {
		t.Fatalf("a new dstein version invalidated the journal: %v", err)
	}
	if err := j.Describe("a", []byte(`{ "iters" : 5 }`)); err != nil {
		t.Errorf("the same settings, spaced differently, were refused: %v", err)
	}
	if err := j.Describe("a", []byte(`{"iters": 5, "name": "", "extra": {}}`)); err != nil {
		t.Errorf("settings with a new field at its zero value were refused: %v", err)
	}
	if err := j.Describe("a", []byte(`{"iters": 5, "name": "x"}`)); err == nil {
		t.Error("settings with a new field at another value were accepted")
	}
	if err := j.Describe("a", []byte(`{"iters": 6}`)); err == nil || !strings.Contains(err.Error(), "other settings") {
		t.Errorf("trials of a method made with other settings were accepted: %v", err)
	}
	if err := j.Describe("b", []byte(`{"iters": 6}`)); err != nil {
		t.Errorf("settings of a method without trials could not change: %v", err)
	}
	if err := j.Describe("c", []byte(`{"iters": 1}`)); err != nil {
		t.Errorf("a new method was refused: %v", err)
	}
	j.Close(true) // settings recorded without a new trial are written when the run ends well
	raw, _ := os.ReadFile(filepath.Join(dir, "x.trials.json"))
	for _, want := range []string{`"a"`, `"b"`, `"c"`, `"iters": 6`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the sidecar lacks %s:\n%s", want, raw)
		}
	}
}

// TestJournalLock checks that a second run into the directory of a running
// one is refused (they would interleave their rows), and that the lock goes
// with the first run.
func TestJournalLock(t *testing.T) {
	dir := t.TempDir()
	spec := Spec{Dir: dir, Name: "x", Want: Settings{Seed: 1, Mode: "tiny"}}
	j, err := Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(spec); err == nil || !strings.Contains(err.Error(), "another dstein is running") {
		t.Errorf("a second run into a locked directory: %v", err)
	}
	if y, err := Open(Spec{Dir: dir, Name: "y", Want: spec.Want}); err != nil {
		t.Errorf("another experiment in the same directory was refused: %v", err)
	} else {
		y.Close(true)
	}
	j.Close(true)
	j2, err := Open(spec)
	if err != nil {
		t.Fatalf("the lock outlived its run: %v", err)
	}
	j2.Close(true)
}
