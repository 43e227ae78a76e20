// Package show prints a fleet compactly for the SDK's runnable examples:
// one line per resource (address, region, spec as JSON), then the
// diagnostics, so an example's Output shows exactly what it declared.
package show

import (
	"encoding/json"
	"fmt"

	"github.com/infra-iac/infra/fleet"
)

// Fleet prints f's resources and diagnostics to stdout.
func Fleet(f *fleet.Fleet) {
	doc, diags := f.Synth()
	for _, r := range doc.Resources {
		s, err := json.Marshal(r.Spec)
		if err != nil {
			s = []byte(err.Error())
		}
		if r.Region != "" {
			fmt.Printf("%s (in %s) %s\n", r.Address, r.Region, s)
			continue
		}
		fmt.Printf("%s %s\n", r.Address, s)
	}
	for _, d := range diags {
		fmt.Println(d.Severity, d.Subject, d.Message)
	}
}
