// Package shellquote writes words for a POSIX shell, so that a command
// that dstein prints or records can be pasted into a shell as it is.
package shellquote
