package engine

import (
	"reflect"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// What the engine asks a driver to read of each resource is what the
// document reads of it, attribute by attribute: a reference its target's
// identity, an observed value that attribute, a secret's value anything.
// A driver may then skip the rest (a queue referred to by url alone never
// has its ARN read back).
func TestWantsNameTheAttributesRead(t *testing.T) {
	m := model(t, doc(instance, sg, queue, password, db, dbURL,
		`{"address": "aws/secrets/jobs-url", "spec": {"value": {"composed": {"format": "{0}", "args": [{"observed": "aws/queues/jobs", "attribute": "url"}]}}}}`))
	wants := wantsOf(m)
	attrs := func(a string) map[string]bool {
		addr, err := spec.ParseAddress(a)
		if err != nil {
			t.Fatal(err)
		}
		return wants[addr].Attributes
	}
	for addr, want := range map[string]map[string]bool{
		"aws/security-group/web":  {"groupId": true},
		"aws/queues/jobs":         {"url": true},
		"aws/postgres/main":       {"endpoint": true},
		"aws/secrets/db-password": {providers.AllAttributes: true},
		"aws/aws-instance/web-1":  nil,
		"aws/secrets/db-url":      nil,
	} {
		if got := attrs(addr); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: attributes wanted %v, want %v", addr, got, want)
		}
	}
	if w := wants[spec.Address{Provider: spec.AWS, Kind: spec.Queues, Name: "jobs"}]; !w.Fields["visibilityTimeoutSec"] || w.Fields["tags"] {
		t.Errorf("queue fields wanted %v", w.Fields)
	}
}
