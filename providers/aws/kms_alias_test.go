package aws

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

// aliasKeys makes the keys the aliases name, kms-key targets of the
// conformance fleet, and deletes them when the test ends.
func aliasKeys(t *testing.T, b *Backend, names ...string) {
	t.Helper()
	d, _ := b.Driver(spec.KMSKey)
	for _, n := range names {
		tg := providers.Target{Name: n, Region: testRegion, Owner: "conformance", Fields: map[string]any{}}
		if _, err := d.Create(context.Background(), tg); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Delete(context.Background(), tg) })
	}
}

func TestKMSAliasConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	b.SetFleet("conformance")
	var n atomic.Int64
	conformance(t, b, srv, drivertest.Case{
		Kind:     spec.KMSAlias,
		Setup:    func(t *testing.T) { aliasKeys(t, b, "key-a", "key-b") },
		NewName:  func(suffix string) string { return fmt.Sprintf("conformance-%d-%s", n.Add(1), suffix) },
		Create:   map[string]any{"key": "key-a"},
		Updates:  []map[string]any{{"key": "key-b"}},
		OddNames: []string{"conformance-Mixed_Case-0", "conformance-" + strings.Repeat("a", 250-len("conformance-"))},
	})
}

// A name that would not carry the fleet's mark, or that CreateAlias
// refuses, is refused before any call.
func TestKMSAliasRefusesNamesBeforeAnyCall(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.KMSAlias)
	for _, name := range []string{"data", "shop", "shop-", "other-data", "shop-dots.not", "shop-" + strings.Repeat("a", 250)} {
		_, err := d.Create(context.Background(), providers.Target{Name: name, Region: testRegion, Owner: "shop", Fields: map[string]any{"key": "k"}})
		if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), "aws/kms-alias: "+name+":") {
			t.Errorf("Create %q = %v, want invalid argument naming it", name, err)
		}
	}
	if n := calls.total(); n != 0 {
		t.Errorf("%d calls were made", n)
	}
}

// An alias is the fleet's by its name alone: one of another prefix is
// listed as no one's, and AWS's own (alias/aws/…) are not listed.
func TestKMSAliasOwnerIsThePrefix(t *testing.T) {
	b, _ := newTestBackend(t)
	b.SetFleet("shop")
	ctx := context.Background()
	aliasKeys(t, b, "k")
	keys, _ := b.Driver(spec.KMSKey)
	key, err := keys.Read(ctx, testRegion, "k")
	if err != nil {
		t.Fatal(err)
	}
	c := kms.NewFromConfig(inTestRegion(b))
	for _, n := range []string{"shop-data", "shopping-data", "data"} {
		if _, err := c.CreateAlias(ctx, &kms.CreateAliasInput{AliasName: aws.String("alias/" + n), TargetKeyId: aws.String(key.Attributes["keyId"])}); err != nil {
			t.Fatal(err)
		}
	}
	d, _ := b.Driver(spec.KMSAlias)
	rs, err := d.List(ctx, testRegion)
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]string{}
	for _, r := range rs {
		if strings.HasPrefix(r.Name, "aws") {
			t.Errorf("listed %s", r.Name)
		}
		owners[r.Name] = r.Owner
		if r.Fields["key"] != key.Attributes["keyId"] {
			t.Errorf("%s names key %v, want %s", r.Name, r.Fields["key"], key.Attributes["keyId"])
		}
	}
	want := map[string]string{"shop-data": "shop", "shopping-data": "", "data": ""}
	for n, o := range want {
		if got, ok := owners[n]; !ok || got != o {
			t.Errorf("%s: listed %v with owner %q, want owner %q", n, ok, got, o)
		}
	}
	if len(owners) != len(want) {
		t.Errorf("listed %v, want %v", owners, want)
	}
}
