package experiment

import (
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
