// Package kernel computes the RBF kernel k(x, x') = exp(−‖x − x'‖²/h) over a
// set of points, with the median-heuristic bandwidth rules used by SVGD and
// kernelized Stein discrepancies.
//
// Two median rules are in use in the field and they change results a lot:
// the common SVGD code's h = med²/log(n+1) (RuleMedianSVGD, the zero value)
// and the paper's h = med²/(2 log(n+1)) (RuleMedianPaper, a kernel half as
// wide). med is the median of the pairwise Euclidean distances, taken
// over the n(n−1)/2 distinct pairs by default, or over all n² ordered pairs
// including the zero diagonal. A multiplier scales whichever rule is chosen.
//
// Nothing here allocates per call once its workspace exists, and results do
// not depend on GOMAXPROCS.
package kernel
