package journal

import (
	"strings"
	"testing"
)

// A journal written before round three's switch of the default recorded
// its tempering runs as the preset "default" (pipeline named "default",
// the old description): it still matches the tempering preset's Record,
// whatever the description now says (descriptions are never compared),
// and a Record whose stages differ does not.
func TestRenamedPresets(t *testing.T) {
	had := `{"preset":"default","pipeline":{"name":"default","description":"dstein's default, chosen by the benchmark suite (EXPERIMENTS.md): parallel tempering, 4 chains of 8 temperatures","init":{"mean":0,"std":1},"stages":[{"method":"pt","iters":200,"settings":{"ladder":8,"beta_min":0,"tune":50}}]},"chains":{"Chains":4,"Warmup":1000,"Thin":25,"Samples":1000,"PerPoint":0,"Compress":{"rule":"","n":0}}}`
	now := `{"preset":"tempering","pipeline":{"name":"tempering","description":"rounds one and two's default: parallel tempering","init":{"mean":0,"std":1},"stages":[{"method":"pt","iters":200,"settings":{"ladder":8,"beta_min":0,"tune":50,"auto":false}}]},"chains":{"Chains":4,"Warmup":1000,"Thin":25,"Samples":1000,"PerPoint":0,"Compress":{"rule":"","n":0}}}`
	if SameSettings([]byte(had), []byte(now)) {
		t.Fatal("the records match without the rename: the test tests nothing")
	}
	if !SameSettings(renamedPresets([]byte(had), []byte(now)), []byte(now)) {
		t.Errorf("the old default's record does not match the tempering preset's:\n%s", renamedPresets([]byte(had), []byte(now)))
	}
	reworded := strings.Replace(now, "rounds one and two's default", "the old default", 1)
	if !SameSettings([]byte(reworded), []byte(now)) {
		t.Error("a record that differs only in its description does not match")
	}
	other := strings.Replace(had, `"ladder":8`, `"ladder":12`, 1)
	if SameSettings(renamedPresets([]byte(other), []byte(now)), []byte(now)) {
		t.Error("a record with another ladder matches the tempering preset's")
	}
}
