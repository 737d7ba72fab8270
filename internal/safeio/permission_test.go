package safeio

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestKernelFilesRefused: outputs into /proc and /sys, directly or through
// a link, are refused before any work; a process's open files there
// (/dev/stdout, /proc/self/fd/1) are streams as before.
func TestKernelFilesRefused(t *testing.T) {
	dir := setup(t)
	link := filepath.Join(dir, "version")
	if err := os.Symlink("/proc/version", link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, want string
	}{
		{"/proc/version", "--out /proc/version is in the kernel's /proc or /sys"},
		{link, "leads to /proc/version, in the kernel's /proc or /sys"},
		{"/proc/sys/kernel/hostname", "in the kernel's /proc or /sys"},
		{"/sys/kernel/mm/transparent_hugepage/enabled", "in the kernel's /proc or /sys"},
		{"/dev/stdout", ""},
		{"/proc/self/fd/1", ""},
		{"/proc/thread-self/fd/1", ""},
		{"/dev/fd/1", ""},
	} {
		p := NewPlan()
		p.Output(c.path, "--out")
		err := p.Check()
		p.Abort()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v; want it accepted", c.path, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v; want an error saying %q", c.path, err, c.want)
		}
	}
}

// asNobody is set in the child process of TestReplaceOnlyWritable: the
// directory the parent prepared.
const asNobody = "DSTEIN_SAFEIO_AS_NOBODY"

// TestReplaceOnlyWritable: an existing file is replaced only when the user
// could write it (the shell's rule), and never when it is another user's
// in a sticky directory (the rename would fail after the work): refused
// at Check, the file untouched. Run as root, the test runs itself again as
// nobody against root's files; as another user, against its own
// write-protected file.
func TestReplaceOnlyWritable(t *testing.T) {
	if dir := os.Getenv(asNobody); dir != "" {
		replaceChecks(t, dir, true)
		return
	}
	if os.Geteuid() != 0 {
		dir := setup(t)
		writeFile(t, filepath.Join(dir, "protected"), "old", 0o444)
		replaceChecks(t, dir, false)
		return
	}
	// A world-writable sticky directory as /tmp is, with root's files: one
	// write-protected, one writable by all, and the test binary where
	// nobody may run it.
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} { // t.TempDir's parent is 0700
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(base, "sticky")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "protected"), "old", 0o444)
	writeFile(t, filepath.Join(dir, "shared"), "old", 0o666)
	bin := filepath.Join(base, "safeio.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestReplaceOnlyWritable$", "-test.v")
	cmd.Env = append(os.Environ(), asNobody+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("the checks as nobody: %v\n%s", err, out)
	}
	for _, name := range []string{"protected", "shared"} {
		if got := readFile(t, filepath.Join(dir, name)); got != "old" {
			t.Errorf("%s: %q; want it untouched", name, got)
		}
	}
}

// replaceChecks declares outputs over dir's files and checks the refusals;
// sticky says whether dir is another user's sticky directory with a file
// "shared" that the user may write but not replace.
func replaceChecks(t *testing.T, dir string, sticky bool) {
	cases := []struct{ name, want string }{
		{"protected", "--out " + filepath.Join(dir, "protected") + " exists and you may not write it (-r--r--r--"},
		{"new", ""},
	}
	if sticky {
		cases = append(cases, struct{ name, want string }{"shared", "is another user's file (owner uid 0) in the sticky directory"})
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.name)
		p := NewPlan()
		f := p.Output(path, "--out")
		err := p.Check()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v; want it accepted", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.want)
		}
		if err == nil {
			if err := f.Write(fill("new")); err != nil {
				t.Fatal(err)
			}
			if err := p.Commit(); err != nil {
				t.Fatal(err)
			}
			os.Remove(path)
		}
		// The journal's writer refuses the same files.
		if c.want != "" {
			if err := Rewrite(path, fill("new")); err == nil {
				t.Errorf("%s: Rewrite replaced it", c.name)
			}
		}
	}
}
