package atomicfile

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesOrLeavesUntouched(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.csv")
	if err := Write(p, func(w *bufio.Writer) error { _, err := w.WriteString("one\n"); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := Write(p, func(w *bufio.Writer) error { w.WriteString("partial"); return boom }); !errors.Is(err, boom) {
		t.Fatalf("error %v; want boom", err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "one\n" {
		t.Fatalf("content %q after a failed write; want the old content", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
	if err := Write(filepath.Join(dir, "no", "such", "dir", "x"), func(*bufio.Writer) error { return nil }); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
}
