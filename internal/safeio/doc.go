// Package safeio is dstein's one way to read input files and write output
// files without harming anything the user did not ask to replace.
//
// Outputs are declared in a Plan before any work starts. Check then
// verifies every one (its directory exists and is writable, it is not a
// directory, not an input of the command and not another output, compared
// as files rather than as strings) and creates the temporary files that
// will hold the content. After the work, Commit renames every
// regular-file output into place (a new file, or an existing regular file
// whose mode and owner are kept), and only then writes the streams: "-" is
// standard output, and a device, FIFO or other non-regular file is opened
// and written, never replaced; so is a path whose links lead through /proc
// or /dev/fd (/dev/stdout, a process substitution), which names a file this
// process already has open (its own standard output goes through
// Plan.Stdout, like "-"). A path the user named is followed when it is
// a symbolic link, so the link's target is written. Abort removes the
// temporary files and leaves every target as it was.
//
// If the process dies between two renames of a Commit, the outputs renamed
// before are new and the others old; a temporary file named
// ".NAME.dstein-tmp-*" can remain beside an output after SIGKILL.
//
// Files that dstein creates inside an output directory (journals, tables,
// figures, checkpoints) go through Replace, which never follows a symbolic
// link: a link in their place is replaced by the file.
//
// Inputs are opened with ReadFile or Open, which refuse non-regular files
// (a FIFO would block, a device never ends) and read at most a given number
// of bytes.
package safeio
