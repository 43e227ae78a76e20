package main

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/executor"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// evil is what a pull request or a cloud tag can hold: a screen clear, a
// colour, an 8-bit CSI and a right-to-left override.
const evil = "\x1b[2J\x1b[31mEVIL\u009b2J\u202egnp"

func printable(s string) bool { return spec.PrintableText(s) == s }

// Strings from the document and the cloud reach the log, the annotations,
// the outputs, the summary and the comment escaped.
func TestHostileStringsReachGitHubEscaped(t *testing.T) {
	h := newHarness(t)
	h.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "legacy", Region: "eu-west-3", Owner: "bill" + evil,
		Fields: map[string]any{"tags": map[string]any{"managed-by-infra": "bill" + evil}}})
	h.writeFleet(sg, `{"address": "aws/queues/legacy", "spec": {}}`,
		`{"address": "aws/aws-instance/web", "spec": {"imageId": "latest", "instanceType": "\u001b[2J\u001b[31mEVIL\u009b2J\u202egnp",
		  "securityGroup": {"ref": "aws/security-group/web"}}}`)
	r := h.run("pull_request", prEvent(7, "abc"), planInputs())
	if r.code != 1 {
		t.Fatalf("exit %d:\n%s", r.code, r.log)
	}
	if !printable(r.log) || !strings.Contains(r.log, "::error file=") || !strings.Contains(r.log, `raw:\u001b[2J\u001b[31mEVIL\u009b2J\u202egnp`) {
		t.Errorf("log:\n%q", r.log)
	}
	if !printable(r.summary) || !strings.Contains(r.summary, "#### Diagnostics") {
		t.Errorf("summary:\n%q", r.summary)
	}
	for _, body := range h.gh.bodies(7) {
		if !printable(body) {
			t.Errorf("comment:\n%q", body)
		}
	}
	for k, v := range r.outputs {
		if !printable(v) {
			t.Errorf("output %s = %q", k, v)
		}
	}

	// discover's table: names and owners from the cloud's tags.
	h.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "ci`x", Region: "eu-west-3", Owner: "shop",
		Fields: map[string]any{"tags": map[string]any{"managed-by-infra": "shop"}}})
	h.writeFleet(sg)
	r = h.run("schedule", map[string]any{}, map[string]string{"command": "discover"})
	if !printable(r.summary) || !printable(r.log) || !strings.Contains(r.summary, "| + | ``aws/queues/ci`x`` |") ||
		!strings.Contains(r.summary, `owned by fleet bill\\u001b\[2J`) {
		t.Errorf("exit %d, summary:\n%s\nlog:\n%q", r.code, r.summary, r.log)
	}
}

// The apply's comment quotes the provider's words and the addresses.
func TestApplyResultEscapesWhatItQuotes(t *testing.T) {
	a := spec.Address{Provider: spec.AWS, Kind: spec.Queues, Name: "a`b"}
	md := renderResult("shop"+evil, "abc", "", &outcome{Status: executor.StatusFailed, Message: "failed: " + evil, Count: "Applied: 0 created.",
		Applied: []engine.Applied{{Address: a, Action: engine.Create, Status: engine.StatusFailed, Error: "denied: " + evil + " [x](http://e)"}}},
		"", "", "the log")
	if !printable(md) || !strings.Contains(md, "| ``aws/queues/a`b`` |") || strings.Contains(md, "[x](http") {
		t.Errorf("%s", md)
	}
}
