package bnn

import (
	"fmt"
	"strings"
)

// Archs lists the architectures New knows.
var Archs = []string{"mlp", "cnn", "alexnet"}

// New builds the named architecture for inputs of shape in and the given
// number of classes. Every weight layer is binary and is followed by batch
// normalisation; every hidden normalisation is followed by the sign
// activation; the last normalisation gives the logits.
//
//   - mlp: dense 256, dense 256, dense classes.
//   - cnn: conv 5×5×16, max-pool 2, conv 3×3×32, max-pool 2, dense 128,
//     dense classes (for 28×28 inputs: 24×24×16 → 12×12×16 → 10×10×32 →
//     5×5×32 → 128 → classes).
//   - alexnet: the binarized AlexNet of the paper's appendix adapted to
//     32×32 inputs (see AlexNetChanges).
func New(arch string, in Shape, classes int) (*Net, error) {
	b, err := build(arch, in, classes, false)
	if err != nil {
		return nil, err
	}
	return b.n, nil
}

// build runs the builder through the named architecture: building the
// network, or for a dry builder only counting what it would hold.
func build(arch string, in Shape, classes int, dry bool) (*builder, error) {
	if in.Size() < 1 || classes < 2 {
		return nil, fmt.Errorf("network needs a non-empty input and at least 2 classes; got input %v and %d classes", in, classes)
	}
	b := &builder{n: &Net{arch: arch, in: in, classes: classes}, cur: in, dry: dry}
	hidden := func() { b.bn(); b.sign() }
	switch arch {
	case "mlp":
		b.dense(256)
		hidden()
		b.dense(256)
		hidden()
		b.dense(classes)
		b.bn()
	case "cnn":
		b.conv(16, 5, 1, 0)
		b.pool(2, 2)
		hidden()
		b.conv(32, 3, 1, 0)
		b.pool(2, 2)
		hidden()
		b.dense(128)
		hidden()
		b.dense(classes)
		b.bn()
	case "alexnet":
		b.conv(96, 5, 1, 2)
		b.pool(3, 2)
		hidden()
		b.conv(256, 5, 1, 2)
		b.pool(3, 2)
		hidden()
		b.conv(384, 3, 1, 1)
		hidden()
		b.conv(384, 3, 1, 1)
		hidden()
		b.conv(256, 3, 1, 1)
		b.pool(3, 2)
		hidden()
		b.dropout(0.5)
		b.dense(4096)
		hidden()
		b.dropout(0.5)
		b.dense(4096)
		hidden()
		b.dense(classes)
		b.bn()
	default:
		return nil, fmt.Errorf("unknown architecture %q; want one of %s", arch, strings.Join(Archs, ", "))
	}
	if b.err != nil {
		return nil, fmt.Errorf("architecture %s on input %v: %w", arch, in, b.err)
	}
	return b, nil
}

// AlexNetChanges says how the "alexnet" architecture departs from the
// paper's table (which is written for 224×224 inputs: on 32×32 CIFAR-10
// images its 11×11 stride-4 first convolution leaves 6×6, the first pool
// 2×2, and the second 5×5 convolution with padding 1 nothing).
const AlexNetChanges = "first convolution 5×5 stride 1 padding 2 (paper: 11×11 stride 4 padding 0); second convolution padding 2 (paper: 1); ReLU replaced by batch normalisation followed by sign, as in every binarized layer here, so each max-pool comes before its normalisation; no biases (batch normalisation follows every weight layer); a final batch normalisation gives the logits. Shapes on 32×32×3: 32×32×96 → pool 15×15 → 15×15×256 → pool 7×7 → 7×7×384 → 7×7×384 → 7×7×256 → pool 3×3 → 4096 → 4096 → 10."
