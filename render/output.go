package render

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// OutputText writes a fleet's published capabilities, one export a line:
// its value (a secret as its reference), then when it is known and where it
// may be used.
func OutputText(w io.Writer, fleet, where string, caps map[string]spec.PublishedCapability) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s publishes (%s):\n", spec.Printable(fleet), spec.Printable(where))
	if len(caps) == 0 {
		b.WriteString("  nothing\n")
	}
	for _, name := range slices.Sorted(maps.Keys(caps)) {
		c := caps[name]
		exposed := "not exposed (an output only)"
		if c.Exposed {
			exposed = "exposed"
		}
		fmt.Fprintf(&b, "  %s: %s, %s, consumers: %s\n", spec.Printable(name), spec.Printable(c.Interface), exposed, c.Consumers)
		names := slices.Sorted(maps.Keys(c.Exports))
		width := 0
		for _, e := range names {
			width = max(width, len(e))
		}
		for _, e := range names {
			fmt.Fprintf(&b, "    %-*s  %s  (%s)\n", width, spec.Printable(e), ExportValue(c.Exports[e]), exportTags(c.Exports[e]))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ExportRaw is an export's value alone, for a script: a string (a
// secret's reference) bare, anything else as JSON; ok is false while it is
// pending.
func ExportRaw(e spec.PublishedExport) (string, bool) {
	if e.Pending {
		return "", false
	}
	if s, ok := e.Value.(string); ok {
		return spec.Printable(s), true
	}
	b, err := json.Marshal(e.Value)
	if err != nil {
		return spec.Printable(fmt.Sprint(e.Value)), true
	}
	return spec.Printable(string(b)), true
}

// ExportValue is an export's value as one printable line: a string bare, a
// secret as "secret REF", a pending one as "(pending)".
func ExportValue(e spec.PublishedExport) string {
	switch {
	case e.Pending:
		return "(pending: its provider has not applied it)"
	case e.Secret:
		return "secret " + spec.Printable(fmt.Sprint(e.Value))
	}
	raw, _ := ExportRaw(e)
	return raw
}

func exportTags(e spec.PublishedExport) string {
	parts := []string{string(e.Type), "known at " + string(e.Lifecycle)}
	switch {
	case e.Locality == spec.LocalityRegion && e.Region != "":
		parts = append(parts, "region-local: "+e.Region)
	case e.Locality == spec.LocalityGlobal:
		parts = append(parts, "global")
	case e.Locality != "":
		parts = append(parts, string(e.Locality)+"-local")
	}
	return spec.Printable(strings.Join(parts, ", "))
}
