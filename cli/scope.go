package cli

import (
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/spec"
)

// scopeFlags are --target and --replace, which plan and apply share: an
// apply must be given the scope its plan was made with, or it finds
// another plan.
type scopeFlags struct {
	targets, replace []string
}

func (s *scopeFlags) add(f *pflag.FlagSet) {
	f.StringArrayVar(&s.targets, "target", nil, "plan only this resource (provider/kind/name) and what it depends on (repeatable); the plan is partial")
	f.StringArrayVar(&s.replace, "replace", nil, "replace this declared resource even though nothing forces it (repeatable)")
}

func (s *scopeFlags) given() bool { return len(s.targets)+len(s.replace) > 0 }

// scope parses the flags; a malformed address is a usage error.
func (s *scopeFlags) scope() (operations.Scope, error) {
	var sc operations.Scope
	var err error
	if sc.Targets, err = parseAddresses("--target", s.targets); err != nil {
		return sc, err
	}
	sc.Replace, err = parseAddresses("--replace", s.replace)
	return sc, err
}

func parseAddresses(flag string, ss []string) ([]spec.Address, error) {
	var out []spec.Address
	for _, s := range ss {
		a, err := spec.ParseAddress(s)
		if err != nil {
			return nil, usageError{fmt.Errorf("%s: %w", flag, err)}
		}
		out = append(out, a)
	}
	return out, nil
}

// reviewedScope is the scope of a saved plan, which apply --plan applies
// as it was made; flags that name another scope are a usage error rather
// than a silent choice between the two.
func reviewedScope(file string, flags operations.Scope, p *operations.Plan) (operations.Scope, error) {
	saved := operations.Scope{Targets: p.Targets, Replace: p.Replace}
	if len(flags.Targets)+len(flags.Replace) == 0 {
		return saved, nil
	}
	if !slices.Equal(spec.SortedAddresses(flags.Targets), spec.SortedAddresses(saved.Targets)) ||
		!slices.Equal(spec.SortedAddresses(flags.Replace), spec.SortedAddresses(saved.Replace)) {
		return saved, usageError{fmt.Errorf("--plan %s was made with targets %v and replace %v; --target and --replace must name the same, or be left out", file, saved.Targets, saved.Replace)}
	}
	return saved, nil
}

// scopeError is a refused target or forced replace in the flag's words;
// it unwraps to the operations' error.
type scopeError struct{ e *operations.TargetError }

func (s scopeError) Error() string {
	msg := fmt.Sprintf("--%s %s: %s", s.e.Option, s.e.Address, s.e.Why)
	if s.e.Hint != "" {
		msg += fmt.Sprintf("; did you mean %s?", s.e.Hint)
	}
	return msg
}

func (s scopeError) Unwrap() error { return s.e }
