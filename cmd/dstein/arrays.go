package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dstein/dstein/report"
)

// Formats of the array outputs (samples, points).
const (
	formatCSV = "csv"
	formatNPY = "npy"
)

// formatFlag is --format: the format of a command's array outputs.
type formatFlag struct{ v string }

func (f *formatFlag) register(fs *pflag.FlagSet, what string) {
	fs.StringVar(&f.v, "format", formatCSV, "format of "+what+": csv (a header row, one row per sample) or npy (a NumPy array FILE.npy and its JSON sidecar FILE.json with the variables' names and state values)")
}

// check refuses an unknown format.
func (f *formatFlag) check() error {
	switch f.v {
	case formatCSV, formatNPY:
		return nil
	}
	return usagef("unknown --format %q; want csv or npy", f.v)
}

func (f *formatFlag) npy() bool { return f.v == formatNPY }

// sidecarFlag names the sidecar of an array flag's output in messages.
func sidecarFlag(flag string) string { return flag + "'s sidecar" }

// arrayPaths returns the outputs (flag, path pairs) of an array flag given
// as path: the path itself, and with npy its sidecar FILE.json. With npy
// the path must end in .npy (the sidecar is named after it) and cannot be
// standard output; with csv a path ending in .npy is refused as a likely
// mistake. The sidecar may replace only a sidecar that dstein wrote: any
// other file in its place is refused, so that a file the user did not name
// is never lost.
func (f *formatFlag) arrayPaths(flag, path string) ([]string, error) {
	if path == "" {
		if f.npy() {
			return nil, usagef("--format npy applies to %s, which is not given: add %s FILE.npy", flag, flag)
		}
		return nil, nil
	}
	if !f.npy() {
		if strings.HasSuffix(path, ".npy") {
			return nil, usagef("%s %s ends in .npy but --format is csv; add --format npy for a NumPy array", flag, path)
		}
		return []string{flag, path}, nil
	}
	if path == "-" {
		return nil, usagef("%s -: --format npy writes a file and its JSON sidecar, not standard output; give a path FILE.npy", flag)
	}
	if !strings.HasSuffix(path, ".npy") || filepath.Base(path) == ".npy" {
		return nil, usagef("%s %s: with --format npy the path must end in .npy (its sidecar is FILE.json)", flag, path)
	}
	side := report.SidecarPath(path)
	if err := checkSidecar(flag, side); err != nil {
		return nil, err
	}
	return []string{flag, path, sidecarFlag(flag), side}, nil
}

// checkSidecar accepts a sidecar path where no file exists, or where a
// regular file that starts as dstein's sidecars do (report.SidecarPrefix)
// is; anything else is refused.
func checkSidecar(flag, side string) error {
	info, err := os.Lstat(side)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s %s: %w", sidecarFlag(flag), side, err)
	case !info.Mode().IsRegular():
		return fmt.Errorf("%s %s exists and is not a regular file (%v); dstein replaces only a sidecar it wrote: move it away or name the array otherwise", sidecarFlag(flag), side, info.Mode().Type())
	}
	fh, err := os.Open(side)
	if err != nil {
		return fmt.Errorf("%s %s: %w", sidecarFlag(flag), side, err)
	}
	defer fh.Close()
	head := make([]byte, len(report.SidecarPrefix))
	n, _ := io.ReadFull(fh, head)
	if string(head[:n]) != report.SidecarPrefix {
		return fmt.Errorf("%s %s exists and is not a sidecar that dstein wrote; dstein replaces only its own sidecars: move the file away or name the array otherwise", sidecarFlag(flag), side)
	}
	return nil
}

// writeSamplesArray fills an array flag's outputs: with csv the samples
// CSV, with npy the array and its sidecar (which names the array file).
func (o *outputs) writeSamplesArray(f *formatFlag, flag string, csv func(w *bufio.Writer) error, npy func(w *bufio.Writer) error, sidecar func(array string) any) error {
	if !f.npy() {
		return o.write(flag, csv)
	}
	if err := o.write(flag, npy); err != nil {
		return err
	}
	file := o.files[flag]
	if file == nil {
		return nil
	}
	return o.write(sidecarFlag(flag), func(w *bufio.Writer) error { return report.WriteSidecar(w, sidecar(filepath.Base(file.Path))) })
}
