package experiment

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dstein/dstein/internal/suggest"
)

// An experiment whose runs may be limited to some of its methods lists
// them in Experiment.MethodNames; Config.Methods (--methods) names the
// ones to run, and its body asks runner.selected before running one.

// CheckMethods checks a selection of methods (Config.Methods) against the
// experiment's MethodNames.
func (e *Experiment) CheckMethods(names []string) error {
	if len(names) == 0 {
		return nil
	}
	if e.MethodNames == nil {
		return fmt.Errorf("experiment %s takes no selection of methods (--methods applies to %s)", e.Name, strings.Join(NamesWhere(func(e *Experiment) bool { return e.MethodNames != nil }), ", "))
	}
	known := e.MethodNames()
	for _, n := range names {
		if n = strings.TrimSpace(n); !slices.Contains(known, n) {
			return fmt.Errorf("--methods: unknown method %q%s (%s's: %s)", n, suggest.Hint(n, known), e.Name, strings.Join(known, ", "))
		}
	}
	return nil
}

// selected says whether the run includes the named method: Config.Methods
// is empty or names it. A method left out stays known to the runner, so
// that a journal holding its trials still resumes.
func (r *runner) selected(method string) bool {
	if len(r.cfg.Methods) == 0 {
		return true
	}
	for _, n := range r.cfg.Methods {
		if strings.TrimSpace(n) == method {
			return true
		}
	}
	r.methods[method] = true
	return false
}
