// Command dstein samples discrete models with gradient-free SVGD and
// reports what it found. Run "dstein --help" for the commands.
package main
