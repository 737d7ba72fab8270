package gfsvgd

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dstein/dstein/model/rbm"
)

// cpuPathChild marks a child process of TestSameBitsOnEveryCPUPath.
const cpuPathChild = "DSTEIN_TEST_CPU_PATH_CHILD"

// TestSameBitsOnEveryCPUPath runs the same GF-SVGD iterations in child
// processes of this test binary under GODEBUG settings that switch the
// CPU's vector kernels off, and requires the particles to have the same
// bits as on the default path: cpu.avx512f=off takes the matrix products
// and exponentials from their AVX-512 kernels to the AVX2 ones (on a CPU
// without AVX-512 both runs take the same path), cpu.avx2=off to their
// pure-Go forms. (cpu.fma=off is not among them: it changes the bits of
// Go's own math.Exp, whose amd64 assembly rounds differently without
// FMA, so results on a CPU without FMA differ; ARCHITECTURE.md says so.)
// The sizes put the
// products on the assembly path (internal/gemm's asmMinWork) with edge
// tiles, and the kernel's exponentials through full and partial groups.
func TestSameBitsOnEveryCPUPath(t *testing.T) {
	if os.Getenv(cpuPathChild) != "" {
		m, err := rbm.Random(61, 25, 0.3, 1, 5)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := run(t, m, true, 83, 8, Settings{}, 3)
		h := sha256.New()
		for _, v := range s.Positions() {
			binary.Write(h, binary.LittleEndian, math.Float64bits(v))
		}
		fmt.Printf("positions-sha256 %x\n", h.Sum(nil))
		return
	}
	if testing.Short() {
		t.Skip("runs child processes")
	}
	sums := map[string]string{}
	paths := []string{"", "cpu.avx512f=off", "cpu.avx2=off"}
	for _, gd := range paths {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestSameBitsOnEveryCPUPath$", "-test.count", "1", "-test.v")
		cmd.Env = append(os.Environ(), cpuPathChild+"=1", "GODEBUG="+gd)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("GODEBUG=%q: %v\n%s", gd, err, out)
		}
		for line := range strings.Lines(string(out)) {
			if s, ok := strings.CutPrefix(line, "positions-sha256 "); ok {
				sums[gd] = strings.TrimSpace(s)
			}
		}
		if sums[gd] == "" {
			t.Fatalf("GODEBUG=%q: no checksum in\n%s", gd, out)
		}
	}
	for _, gd := range paths[1:] {
		if sums[gd] != sums[""] {
			t.Errorf("particles differ: default path %s, GODEBUG=%s %s", sums[""], gd, sums[gd])
		}
	}
	t.Logf("particles' SHA-256 on every path: %s", sums[""])
}
