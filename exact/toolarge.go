package exact

import "fmt"

// TooLarge is the error of a question that exact answers refuse for the
// model's size alone: an elimination width or intermediate tables over
// their limits (the width limit, MaxTableEntries, MaxTotalEntries), a grid wider
// than the transfers take, more joint states or hidden units than
// enumeration takes, or no route at all. The command line gives it the
// exit code of a refusal (3), as it does an estimate over --max-memory;
// a failure of the numbers (couplings too strong for float64) is not one.
type TooLarge struct{ msg string }

func (e *TooLarge) Error() string { return e.msg }

// tooLarge formats a TooLarge error as fmt.Errorf would (it wraps no
// error: %w is not used with it).
func tooLarge(format string, a ...any) error {
	return &TooLarge{msg: fmt.Sprintf(format, a...)}
}
