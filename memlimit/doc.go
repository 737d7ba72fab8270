// Package memlimit estimates the memory a command will need and refuses,
// before allocating, work that would exceed the limit: by default 75% of the
// machine's memory or of the container's (cgroup v2 memory.max or v1
// memory.limit_in_bytes), whichever is smaller; --max-memory sets it.
//
// Go's fatal "out of memory" cannot be caught inside the process, so every
// command that can allocate in proportion to its input checks an estimate
// here first.
//
// Library functions that may allocate in proportion to their input take a
// Budget (exact.PairsFor, exact.ModeMass, modelfile.LoadLimit,
// report.ReadDraws, …). The zero Budget checks nothing;
// Budget{Limit: Default()} applies the command line's default limit, and a
// refusal is an *Exceeded error (errors.As), returned before the work
// allocates.
package memlimit
