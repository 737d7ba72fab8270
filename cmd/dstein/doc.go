// Command dstein samples discrete models with gradient-free SVGD, reports
// what it found, and tests samples against a model with kernel
// goodness-of-fit tests. Run "dstein --help" for the commands.
package main
