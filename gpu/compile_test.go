package gpu

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dstein/dstein/internal/cuda"
)

// TestKernelsCompile compiles every kernel source with the real NVRTC the
// loader finds (no GPU needed: DSTEIN_NVRTC_TEST=1; CUDA 11.8 from
// Debian's non-free archive does, scripts/check-kernels.sh installs it)
// for Hopper in both precisions, checks that every kernel is in the PTX,
// and, where ptxas is on the PATH, assembles the PTX for sm_90, which
// checks it as the driver's compiler will.
func TestKernelsCompile(t *testing.T) {
	if os.Getenv("DSTEIN_NVRTC_TEST") != "1" {
		t.Skip("DSTEIN_NVRTC_TEST=1 runs this where NVRTC is installed")
	}
	nv, err := cuda.LoadNVRTC()
	if err != nil {
		t.Fatal(err)
	}
	ptxas, _ := exec.LookPath("ptxas")
	for _, src := range []struct {
		name, text string
		kernels    []string
	}{{"svgd.cu", svgdSource, svgdKernels}, {"gibbs.cu", gibbsSource, gibbsKernels}} {
		for _, f32 := range []string{"0", "1"} {
			ptx, err := nv.Compile(src.text, src.name, "--gpu-architecture=compute_90", "-DDSTEIN_F32="+f32)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range src.kernels {
				if !strings.Contains(string(ptx), ".entry "+k+"(") {
					t.Errorf("%s, DSTEIN_F32=%s: no kernel %s in the PTX", src.name, f32, k)
				}
			}
			if ptxas == "" {
				t.Logf("%s: no ptxas on the PATH: the PTX was not assembled", src.name)
				continue
			}
			file := filepath.Join(t.TempDir(), "k.ptx")
			os.WriteFile(file, ptx[:len(ptx)-1], 0o644)
			if out, err := exec.Command(ptxas, "-arch=sm_90", "-o", os.DevNull, file).CombinedOutput(); err != nil {
				t.Errorf("ptxas, %s, DSTEIN_F32=%s: %v\n%s", src.name, f32, err, out)
			} else {
				t.Logf("%s, DSTEIN_F32=%s: %d kernels, assembled for sm_90 by %s", src.name, f32, len(src.kernels), ptxas)
			}
		}
	}
}
