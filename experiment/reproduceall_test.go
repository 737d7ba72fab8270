package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The records an --only run keeps: those of an earlier list of the same
// mode, each dated by the run that wrote it (a record kept twice keeps
// its first date); nothing from a list of another mode, or from one that
// is missing or unreadable.
func TestEarlierResults(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "reproduce.json")
	os.WriteFile(list, []byte(`{"date": "2026-11-01 10:00 UTC", "mode": "quick", "results": [
		{"id": "a", "status": "ran"}, {"id": "b", "status": "failed", "earlier_run": "2026-10-01 09:00 UTC"}]}`), 0o644)
	var log strings.Builder
	got := earlierResults(list, Quick, &log)
	if len(got) != 2 || got["a"].Earlier != "2026-11-01 10:00 UTC" || got["b"].Earlier != "2026-10-01 09:00 UTC" || got["b"].Status != "failed" || log.Len() != 0 {
		t.Errorf("same mode: %+v, log %q", got, log.String())
	}
	if got := earlierResults(list, Full, &log); len(got) != 0 || !strings.Contains(log.String(), "lists a quick run and this one is full") {
		t.Errorf("another mode: %+v, log %q", got, log.String())
	}
	if got := earlierResults(filepath.Join(dir, "none.json"), Quick, nil); len(got) != 0 {
		t.Errorf("no list: %+v", got)
	}
	// A list from before "mode" says only whether it was quick.
	os.WriteFile(list, []byte(`{"date": "2026-11-02 10:00 UTC", "quick": false, "results": [{"id": "a", "status": "ran"}]}`), 0o644)
	if got := earlierResults(list, Full, nil); len(got) != 1 || got["a"].Earlier != "2026-11-02 10:00 UTC" {
		t.Errorf("an old full list: %+v", got)
	}
	if got := earlierResults(list, Quick, nil); len(got) != 0 {
		t.Errorf("an old full list kept for a quick run: %+v", got)
	}
	os.WriteFile(list, []byte(`{"results": [`), 0o644)
	log.Reset()
	if got := earlierResults(list, Quick, &log); len(got) != 0 || !strings.Contains(log.String(), "is not readable") {
		t.Errorf("a broken list: %+v, log %q", got, log.String())
	}
}
