// Package numeric holds small log-space helpers shared by dstein's packages.
//
// Every function here is total on the extended reals: −Inf inputs are
// handled explicitly and no function returns NaN for non-NaN input.
package numeric
