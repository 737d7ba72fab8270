// Package report writes dstein's results: samples as CSV (one header row,
// no comment lines) or as NumPy .npy arrays with a JSON sidecar, in the
// model's state values, and run summaries as JSON. The commands write every
// file through package internal/safeio (atomically, never over a file the
// user did not name), and every number is formatted so that the same run
// gives the same bytes.
package report
