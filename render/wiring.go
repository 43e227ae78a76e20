package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
)

// Read is one wire of a consumer's plan: a capability of another fleet it
// reads, for the comment's section on what it reads.
type Read struct {
	// Slot is the consumer's slot; Fleet and Capability what it is wired to.
	Slot, Fleet, Capability string
	// Beside: the provider is planned in the same run, and this plan read
	// what its apply will publish rather than its stored record.
	Beside bool
	// Pending names the exports of the capability that this plan reads
	// and that are not known until the provider applies ("endpoint").
	Pending []string
}

// Consumer is a fleet that reads a capability of the plan's fleet.
type Consumer struct {
	Capability, Fleet string
	// Claimed: its claim is in this fleet's state (it has applied);
	// otherwise it is planned in the same run and has not claimed yet.
	Claimed bool
}

// wiringSection says what the plan's fleet reads from other fleets and who
// reads it: empty when neither.
func wiringSection(p *engine.Plan, opts MarkdownOptions) string {
	var b strings.Builder
	if len(opts.Reads) > 0 {
		b.WriteString(readsTable(p, opts.Reads))
	}
	if len(opts.Consumers) > 0 || len(protectedRows(p)) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(consumersTable(p, opts.Consumers))
	}
	return b.String()
}

func readsTable(p *engine.Plan, reads []Read) string {
	var b strings.Builder
	b.WriteString("#### Reads from other fleets\n\n| slot | capability | values this plan reads | pending |\n| --- | --- | --- | --- |\n")
	var beside, stored []string
	for _, r := range reads {
		read := exportsRead(p, r.Fleet, r.Capability)
		pending := "none"
		if len(r.Pending) > 0 {
			pending = codeList(r.Pending)
		}
		values := "none"
		if len(read) > 0 {
			values = codeList(read)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", code(r.Slot), code(r.Fleet+":"+r.Capability), values, pending)
		if r.Beside {
			beside = appendOnce(beside, r.Fleet)
		} else {
			stored = appendOnce(stored, r.Fleet)
		}
	}
	b.WriteString("\n")
	if len(beside) > 0 {
		fmt.Fprintf(&b, "%s %s planned in this run, before this fleet: this plan reads what its apply will publish, and a pending value is known once it has applied. "+
			"On merge it is applied first, then this fleet; the plan id binds the names of the values read, not the values, so this plan is the one applied.\n",
			codeList(beside), isAre(len(beside)))
	}
	if len(stored) > 0 {
		fmt.Fprintf(&b, "Read from what %s published at %s last apply.\n", codeList(stored), itsTheir(len(stored)))
	}
	return b.String()
}

func consumersTable(p *engine.Plan, consumers []Consumer) string {
	var b strings.Builder
	b.WriteString("#### Read by other fleets\n\n")
	if len(consumers) > 0 {
		b.WriteString("| capability | consumer | |\n| --- | --- | --- |\n")
		for _, c := range consumers {
			state := "holds a claim (it has applied)"
			if !c.Claimed {
				state = "planned in this run, applied after this fleet"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", code(c.Capability), code(c.Fleet), state)
		}
		b.WriteString("\nThis plan may not remove, unexpose or re-interface what they read, nor delete what its exports are read from.\n")
	}
	if rows := protectedRows(p); len(rows) > 0 {
		fmt.Fprintf(&b, "\n> [!CAUTION]\n> **Blocking: this plan breaks what %d consumer claim(s) read; apply refuses it** until the consumers have unwired (their apply gives up the claim), or it is applied by hand with `infra apply --force`.\n>\n", len(rows))
		for _, d := range rows {
			fmt.Fprintf(&b, "> - %s: %s\n", code(d.Subject), cell(clip(d.Message)))
		}
	}
	return b.String()
}

// protectedRows are the plan's errors that protect a consumer.
func protectedRows(p *engine.Plan) []spec.Diagnostic {
	var out []spec.Diagnostic
	for _, d := range p.Diagnostics {
		if d.ID == spec.RowConsumerProtected && d.Severity == spec.Error {
			out = append(out, d)
		}
	}
	return out
}

// exportsRead names the exports of fleet:capability the plan's changes
// read (Change.From), sorted.
func exportsRead(p *engine.Plan, fleet, capability string) []string {
	prefix := fleet + ":" + capability + "."
	var out []string
	for _, a := range p.Actions {
		for _, c := range a.Changes {
			for _, ref := range c.From {
				if e, ok := strings.CutPrefix(ref, prefix); ok {
					out = appendOnce(out, e)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func appendOnce(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

func codeList(xs []string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = code(x)
	}
	return strings.Join(out, ", ")
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func itsTheir(n int) string {
	if n == 1 {
		return "its"
	}
	return "their"
}
