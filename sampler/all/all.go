package all

import (
	// Each import registers its method(s) in its init function; gpu
	// registers GF-SVGD's CUDA device.
	_ "github.com/dstein/dstein/gpu"
	_ "github.com/dstein/dstein/sampler/dhmc"
	_ "github.com/dstein/dstein/sampler/dlmc"
	_ "github.com/dstein/dstein/sampler/dmala"
	_ "github.com/dstein/dstein/sampler/gfsvgd"
	_ "github.com/dstein/dstein/sampler/gibbs"
	_ "github.com/dstein/dstein/sampler/gwg"
	_ "github.com/dstein/dstein/sampler/iid"
	_ "github.com/dstein/dstein/sampler/pas"
	_ "github.com/dstein/dstein/sampler/pt"
	_ "github.com/dstein/dstein/sampler/sw"
)
