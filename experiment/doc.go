// Package experiment reproduces the experiments of the paper, one spec per
// figure: each sweeps a setting (sample size, coupling, dimension, …) over
// several methods and trials, and produces a table, a tidy CSV file and a
// figure (PNG and SVG).
//
// Trials run on independent random streams derived from the experiment's
// seed; a trial redraws the samplers' randomness while the model (RBM
// weights, fields) is fixed by the seed. All methods of one trial share
// that trial's seed, so GF-SVGD, Gibbs and DHMC start from the same initial
// draw and comparisons are paired.
//
// Every finished trial is appended to DIR/NAME.trials.csv at once; running
// the same experiment again with the same settings skips the trials found
// there, so an interrupted run resumes where it stopped.
package experiment
