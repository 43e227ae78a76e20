package aws

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// endless is a paginator that always has another page.
type endless struct{ served int }

type endlessOptions struct{}

func (p *endless) HasMorePages() bool { return true }

func (p *endless) NextPage(context.Context, ...func(*endlessOptions)) (int, error) {
	p.served++
	return p.served, nil
}

// A listing past the page budget fails; it never hands back a prefix.
func TestEachPageFailsPastBudget(t *testing.T) {
	p := &endless{}
	seen := 0
	err := eachPage(context.Background(), p, spec.SecurityGroup, "eu-west-3", func(int) error { seen++; return nil })
	if err == nil || !strings.Contains(err.Error(), "prefix") {
		t.Fatalf("eachPage = %v, want a refusal", err)
	}
	if seen != listPageLimit || p.served != listPageLimit {
		t.Errorf("read %d pages (served %d), want exactly %d", seen, p.served, listPageLimit)
	}
}

func TestFilterPattern(t *testing.T) {
	if got := filterPattern(`web*1?[a]\b`); got != "web?1??a??b" {
		t.Errorf("filterPattern = %q", got)
	}
	// moto reads the rest of a filter value as a regular expression.
	if got := filterPattern("a.b(c)+{d}$^|e:f"); got != "a?b?c???d????e:f" {
		t.Errorf("filterPattern = %q", got)
	}
}

func TestTagChanges(t *testing.T) {
	have := map[string]string{"a": "1", "b": "2", "aws:cloudformation:stack-name": "x", "Name": "web", spec.OwnershipTagKey: "f"}
	want := map[string]string{"a": "1", "b": "3", "c": "4", spec.OwnershipTagKey: "f"}
	set, remove := tagChanges(have, want, "Name")
	if !reflect.DeepEqual(set, map[string]string{"b": "3", "c": "4"}) || len(remove) != 0 {
		t.Errorf("tagChanges = %v, %v", set, remove)
	}
	set, remove = tagChanges(have, map[string]string{spec.OwnershipTagKey: "f"})
	if len(set) != 0 || !reflect.DeepEqual(remove, []string{"Name", "a", "b"}) {
		t.Errorf("tagChanges to nothing = %v, %v; aws: tags must stay", set, remove)
	}
}

func TestDesiredTagsRefusesAWSKeys(t *testing.T) {
	_, err := desiredTags(providers.Target{Fields: map[string]any{spec.TagsField: map[string]any{"AWS:thing": "x"}}})
	if errorCode(err) != providers.InvalidArgument {
		t.Errorf("desiredTags = %v, want invalid argument", err)
	}
}

// creator returns a function that creates a target with d and deletes it
// when the (sub)test that asked ends.
func creator(d providers.Driver) func(t *testing.T, tg providers.Target) providers.Resource {
	return func(t *testing.T, tg providers.Target) providers.Resource {
		t.Helper()
		res, err := d.Create(context.Background(), tg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Delete(context.Background(), tg) })
		return res
	}
}
