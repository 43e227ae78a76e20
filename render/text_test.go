package render

import (
	"github.com/infra-iac/infra/engine"

	"strings"
	"testing"

	"github.com/infra-iac/infra/spec"
)

// The text plan quotes the document and the cloud: what it quotes is
// escaped, so a value cannot clear the screen, colour a line or reorder
// it; the colour is only infra's own, and the columns still line up.
func TestTextEscapesHostileStrings(t *testing.T) {
	evil := "\x1b[2J\x1b[31mEVIL\u009b2J\u202egnp"
	p := &engine.Plan{FormatVersion: engine.FormatVersion, Fleet: "shop",
		Accounts: []engine.Account{{Provider: spec.AWS, Account: "1" + evil, Regions: []string{"raw:eu" + evil}}},
		Actions: []engine.Action{
			{Address: spec.Address{Provider: spec.AWS, Kind: spec.AWSInstance, Name: "web" + evil}, Action: engine.Replace,
				Changes: []engine.Change{{Field: "instanceType", Before: "t3.micro", After: evil, ForcesReplacement: true}},
				Cause:   "field instanceType " + evil, Component: "shop" + evil, Member: "web"},
			{Address: spec.Address{Provider: spec.AWS, Kind: spec.Queues, Name: "jobs"}, Action: engine.Delete, Reason: "gone " + evil},
		}}
	p.Summarize()
	var plain, colour strings.Builder
	if err := Text(&plain, p, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Text(&colour, p, TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	out := plain.String()
	if spec.PrintableText(out) != out {
		t.Fatalf("a control or bidirectional character got through:\n%q", out)
	}
	for _, want := range []string{`aws: 1\u001b[2J\u001b[31mEVIL\u009b2J\u202egnp in raw:eu\u001b[2J`,
		`"\u001b[2J\u001b[31mEVIL\u009b2J\u202egnp" (forces replacement)`, `(gone \u001b[2J\u001b[31mEVIL\u009b2J\u202egnp)`,
		`[replace] shop\u001b[2J\u001b[31mEVIL\u009b2J\u202egnp.web: field instanceType \u001b[2J`} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s:\n%s", want, out)
		}
	}
	lines := strings.Split(out, "\n")
	if i, j := strings.Index(lines[1], "replace"), strings.Index(lines[3], "delete"); i != j {
		t.Errorf("columns do not line up (%d, %d):\n%s", i, j, out)
	}
	stripped := colour.String()
	for _, c := range []string{ansiReset, ansiMagenta, ansiRed, ansiDim} {
		stripped = strings.ReplaceAll(stripped, c, "")
	}
	if stripped != out {
		t.Errorf("colour minus infra's escapes is not the plain text:\n%q\n%q", stripped, out)
	}
}
