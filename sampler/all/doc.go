// Package all links every sampling method into a program: importing it
// registers them with package sampler. A new method's package adds its
// import here.
package all
