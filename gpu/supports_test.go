package gpu

import (
	"strings"
	"testing"

	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/sampler/gfsvgd"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/sampler/pt"
	"github.com/dstein/dstein/transform"
)

// An RBM without hidden units is refused by every GPU path before anything
// is launched: its launches over the hidden units would have no blocks and
// its products a leading dimension of 0, which the driver and cuBLAS
// reject on a device (the stand-ins now do too).
func TestNoHiddenUnitsRefused(t *testing.T) {
	r, err := rbm.Random(4, 0, 0.3, 0.2, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := transform.New(transform.Normal{}, []int{2, 2, 2, 2})
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"gfsvgd": SupportsSVGD(r, tr, gfsvgd.Settings{}),
		"gibbs":  SupportsGibbs(r, gibbs.Settings{}),
		"pt":     SupportsPT(r, pt.Settings{Kernel: pt.Block}),
	} {
		if err == nil || !strings.Contains(err.Error(), "needs an RBM with hidden units") {
			t.Errorf("%s: %v; want a refusal naming the hidden units", name, err)
		}
	}
}
