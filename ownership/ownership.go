// Package ownership decides whose a resource is. The ownership mark
// (managed-by-infra=<fleet>) is the only thing that grants ownership;
// exclusions only take it away, so a mistake fails safe: a resource whose
// mark cannot be read is never ours.
package ownership

import (
	"fmt"

	"github.com/infra-iac/infra/spec"
)

// Verdict is whose a resource is, from one fleet's point of view.
type Verdict int

const (
	// Ours: the mark names this fleet, and no exclusion covers it.
	Ours Verdict = iota
	// Foreign: the mark names another fleet.
	Foreign
	// Untagged: no mark at all; infra did not create it (or a forget
	// released it).
	Untagged
	// Excluded: an exclusion covers it. An exclusion always wins over a tag.
	Excluded
)

func (v Verdict) String() string {
	switch v {
	case Ours:
		return "ours"
	case Foreign:
		return "foreign"
	case Untagged:
		return "untagged"
	case Excluded:
		return "excluded"
	}
	return "unknown"
}

// Judge returns the verdict on a resource at a whose mark names owner ("" for
// none), for fleet m.
func Judge(m *spec.Model, a spec.Address, owner string) Verdict {
	if _, excluded := m.Excluded(a); excluded {
		return Excluded
	}
	return JudgeMark(m.Fleet, owner)
}

// JudgeMark is the verdict from the mark alone.
func JudgeMark(fleet, owner string) Verdict {
	switch owner {
	case fleet:
		return Ours
	case "":
		return Untagged
	}
	return Foreign
}

// Describe says, for a warning, what a resource's mark shows.
func Describe(owner string) string {
	if owner == "" {
		return "it carries no " + spec.OwnershipTagKey + " tag"
	}
	return fmt.Sprintf("it is tagged %s=%s", spec.OwnershipTagKey, owner)
}

// Rung is how a kind carries its mark on a provider. The rung is a fact of
// the provider's product, so it is a row of spec's kind table
// (KindInfo.On), where check, the drivers and this package all read it.
type Rung = spec.Mark

const (
	// Tag: a tag managed-by-infra=<fleet>.
	Tag = spec.MarkTag
	// Description: the product has no tags; its description field holds
	// managed-by-infra=<fleet>.
	Description = spec.MarkDescription
	// NamePrefix: the product has neither; a name starting with <fleet>-
	// is the fleet's.
	NamePrefix = spec.MarkNamePrefix
	// Statement: the product has no mark; a statement it adds to another
	// resource's policy names it and the fleet (an SNS subscription's Sid).
	Statement = spec.MarkStatement
	// Companion: the product has no mark; a companion beside it, made and
	// deleted in the same call, carries managed-by-infra=<fleet> (a
	// Route 53 record's TXT record set).
	Companion = spec.MarkCompanion
)

// RungOf returns how kind k carries the mark on provider p: a tag for a
// kind spec does not know, as for every kind without an entry saying
// otherwise.
func RungOf(p spec.Provider, k spec.Kind) Rung {
	if info, ok := spec.Lookup(k); ok {
		return info.MarkOn(p)
	}
	return Tag
}

// DescriptionMark is the text a description-rung product carries.
func DescriptionMark(fleet string) string { return spec.OwnershipTagKey + "=" + fleet }

// OwnerFromPrefix returns the fleet a name-prefix-rung name belongs to, when
// it starts with fleet + "-". It can only answer for a known fleet: a name
// alone does not say where a fleet name ends.
func OwnerFromPrefix(fleet, name string) string {
	if len(name) > len(fleet)+1 && name[:len(fleet)+1] == fleet+"-" {
		return fleet
	}
	return ""
}
