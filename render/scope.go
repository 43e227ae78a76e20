package render

import (
	"strings"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
)

// PartialPrefix starts the line that says a plan is partial, in the text
// plan and the PR comment alike.
const PartialPrefix = "Partial plan: only "

// scopeLines are the lines that say a plan was narrowed to targets or
// forces replaces, each address drawn by quote (escaped for the text plan,
// code for markdown); none for a plan of the whole fleet.
func scopeLines(p *engine.Plan, quote func(string) string) []string {
	list := func(as []spec.Address) string {
		qs := make([]string, len(as))
		for i, a := range as {
			qs[i] = quote(a.String())
		}
		return strings.Join(qs, ", ")
	}
	var out []string
	if len(p.Targets) > 0 {
		out = append(out, PartialPrefix+list(p.Targets)+" and what they depend on (--target); the rest of the fleet was not planned, and applying this plan leaves it as it is.")
	}
	if len(p.Replace) > 0 {
		out = append(out, "Forced replace (--replace): "+list(p.Replace)+".")
	}
	return out
}
