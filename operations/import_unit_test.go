package operations

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
)

// What no declaration can hold is left out, saying why: a name with a
// slash (Secrets Manager's prod/db/password) or a space, and a second
// region's namesake, of which the placement's copy is kept.
func TestImportLeavesOutWhatCannotBeDeclared(t *testing.T) {
	m := &spec.Model{Fleet: "shop", Placement: map[spec.Provider]string{spec.AWS: "eu-west-3"}}
	q := func(name, region string) engine.Found {
		return engine.Found{Address: spec.Address{Provider: spec.AWS, Kind: spec.Queues, Name: name}, Region: region,
			Fields: map[string]any{"visibilityTimeoutSec": 30.0}}
	}
	managed := engine.Found{Address: spec.Address{Provider: spec.AWS, Kind: spec.Secrets, Name: "rds-cluster-pw"}, Region: "eu-west-3",
		Fields: map[string]any{}, Unmodelled: []string{"OwningService=rds"}}
	res := declare(m, &engine.Importable{Found: []engine.Found{
		q("prod/db", "eu-west-3"), q("has space", "eu-west-3"), q("mail", "eu-west-1"), q("mail", "eu-west-3"), q("jobs", "eu-west-1"), managed,
	}})
	var got []string
	for _, d := range res.Declarations {
		got = append(got, d.Resource.Address+"@"+d.Resource.Region)
	}
	if strings.Join(got, " ") != "aws/queues/jobs@eu-west-1 aws/queues/mail@" {
		t.Fatalf("declared %v", got)
	}
	var left []string
	for _, l := range res.LeftOut {
		left = append(left, l.Address+"@"+l.Region+": "+l.Why)
	}
	want := []string{"aws/queues/prod/db@eu-west-3: the name holds a /", "aws/queues/has space@eu-west-3: name contains a space",
		"aws/queues/mail@eu-west-1: another resource of that name is imported from eu-west-3",
		"aws/secrets/rds-cluster-pw@eu-west-3: managed by the cloud's rds service"}
	if len(left) != len(want) {
		t.Fatalf("left out %v", left)
	}
	for i, w := range want {
		if !strings.HasPrefix(left[i], w) {
			t.Errorf("left out %q, want %q…", left[i], w)
		}
	}
}
