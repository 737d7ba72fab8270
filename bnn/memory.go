package bnn

// Footprint is what a network of an architecture holds, counted by Measure
// without building it: for the memory estimates of the commands that build
// many networks or run them on large batches.
type Footprint struct {
	// Params is the number of trainable values (binary weights, batch
	// normalisation's γ and β), Binary those of them that are binary
	// weights, and LargestBinary the largest binary array.
	Params, Binary, LargestBinary int
	// Channels is the number of batch normalisation channels and Arrays
	// the number of arrays of State: parameter arrays (weights, γ, β) and
	// running statistics (mean, variance).
	Channels, Arrays int
	// PerExample is the number of 4-byte values a pass keeps per example
	// of its batch: the input, every layer's output and the gradients of
	// them all, the convolutions' patch columns, batch normalisation's
	// normalised values, the max-pools' indices and the dropout masks.
	PerExample int
}

func (f *Footprint) weights(n int) {
	f.Params += n
	f.Binary += n
	f.LargestBinary = max(f.LargestBinary, n)
	f.Arrays++
}

// Measure returns the footprint of New(arch, in, classes), without
// allocating the network.
func Measure(arch string, in Shape, classes int) (Footprint, error) {
	b, err := build(arch, in, classes, true)
	if err != nil {
		return Footprint{}, err
	}
	f := b.fp
	// The input and its gradient.
	f.PerExample += 2 * in.Size()
	return f, nil
}

// NetBytes is the memory of one network's arrays outside its passes: each
// binary weight's latent value, its gradient, its forward (binarized)
// value and that value's gradient (16 bytes), and per batch normalisation
// channel γ and β with their gradients (16 bytes) and six float64 arrays
// of statistics and sums (48 bytes).
func (f Footprint) NetBytes() int64 {
	return 16*int64(f.Binary) + 64*int64(f.Channels)
}

// PassBytes is the memory of the buffers that passes of batch examples
// leave in a network (they are kept for the next pass, at the largest
// batch seen).
func (f Footprint) PassBytes(batch int) int64 {
	return 4 * int64(f.PerExample) * int64(batch)
}

// StateBytes is the memory of a State of the network: 4 bytes per
// parameter, 16 per channel of running statistics, and a slice header
// per array.
func (f Footprint) StateBytes() int64 {
	return 4*int64(f.Params) + 16*int64(f.Channels) + 24*int64(f.Arrays)
}
