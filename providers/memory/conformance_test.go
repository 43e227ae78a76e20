package memory_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/providers/memory"
	"github.com/infra-iac/infra/spec"
)

// TestConformance runs the shared suite on every kind of every provider.
// The memory cloud does not care what a value means, so each case is drawn
// from the kind's metadata: one value per field at create, one entry per
// mutable field in Updates, one per forcing field in Replaces.
func TestConformance(t *testing.T) {
	for _, p := range spec.Providers {
		t.Run(string(p), func(t *testing.T) {
			cloud := memory.NewCloud(map[spec.Provider]string{p: "acct-" + string(p)})
			var cases []drivertest.Case
			for _, info := range spec.KindsOf(p) {
				cases = append(cases, caseFor(cloud, p, "region-a", info))
			}
			drivertest.RunConformanceTests(t, drivertest.Harness{
				Backend:     cloud.Backend(p),
				Region:      "region-a",
				OtherRegion: "region-b",
				// A fresh cloud per provider: List must show exactly what
				// each subtest made.
				Exclusive: true,
				Cases:     cases,
			})
		})
	}
}

func caseFor(cloud *memory.Cloud, provider spec.Provider, region string, info *spec.KindInfo) drivertest.Case {
	c := drivertest.Case{
		Kind:   info.Kind,
		Create: map[string]any{},
		OddNames: []string{
			"x", "with.dots_and_underscores", "MixedCase-0", strings.Repeat("n", 63),
		},
		PageSize: 2,
	}
	var referenced []func(*testing.T)
	for _, f := range info.Fields {
		if f.Name == spec.TagsField {
			continue
		}
		c.Create[f.Name] = sample(f, 0)
		if held, ok := identityKind(f); ok {
			// The cloud resolves such a reference when it is set, so what
			// it names must exist.
			f := f
			referenced = append(referenced, func(t *testing.T) {
				d, _ := cloud.Backend(provider).Driver(held)
				var names []string
				for v := 0; v < 2; v++ {
					switch x := sample(f, v).(type) {
					case string:
						names = append(names, x)
					case map[string]any:
						for _, n := range x {
							names = append(names, n.(string))
						}
					}
				}
				for _, name := range names {
					if _, err := d.Create(context.Background(), providers.Target{Name: name, Region: region, Owner: "fixture"}); err != nil &&
						providers.CodeOf(cloud.Backend(provider), err) != providers.AlreadyExists {
						t.Fatal(err)
					}
					t.Cleanup(func() { d.Delete(context.Background(), providers.Target{Name: name, Region: region}) })
				}
			})
		}
		// Fields that only shape creation are never updated by the engine;
		// a secret's value is, when secrets are refreshed.
		if f.Compare == spec.CompareNever && f.Type != spec.TypeSecretSource {
			continue
		}
		change := map[string]any{f.Name: sample(f, 1)}
		if f.Replace {
			c.Replaces = append(c.Replaces, change)
		} else {
			c.Updates = append(c.Updates, change)
		}
	}
	if len(referenced) > 0 {
		c.Setup = func(t *testing.T) {
			for _, make := range referenced {
				make(t)
			}
		}
	}
	return c
}

// identityKind returns the kind a reference field names when the cloud
// records such references by an identity other than the name.
func identityKind(f spec.Field) (spec.Kind, bool) {
	if f.Type != spec.TypeRef && (f.Type != spec.TypeRefMap || f.Secret) {
		return "", false
	}
	for _, k := range f.RefKinds {
		if info, ok := spec.Lookup(k); ok && info.Identity != "" {
			return k, true
		}
	}
	return "", false
}

// sample returns a value of f's type; variant 1 differs from variant 0.
func sample(f spec.Field, variant int) any {
	if f.Type == spec.TypeSecretSource || f.Secret && f.Type == spec.TypeRef {
		return spec.NewSensitive(fmt.Sprintf("s3cr3t-%d", variant))
	}
	switch f.Type {
	case spec.TypeString, spec.TypeRef:
		return fmt.Sprintf("%s-%d", f.Name, variant)
	case spec.TypeInt, spec.TypeNumber:
		return float64(10 + variant)
	case spec.TypeBool:
		return variant == 1
	case spec.TypeStringList:
		return []any{"b", fmt.Sprint(variant), "a"}
	case spec.TypeStringMap:
		return map[string]any{"K": fmt.Sprint(variant)}
	case spec.TypeIngress:
		return []any{map[string]any{"port": 443.0, "cidr": "10.0.0.0/8"}, map[string]any{"port": float64(80 + variant), "cidr": "0.0.0.0/0"}}
	case spec.TypeRefMap:
		if !f.Secret {
			return map[string]any{"k": fmt.Sprintf("%s-%d", f.Name, variant)}
		}
		return map[string]any{"DB": fmt.Sprintf("secret-%d", variant)}
	}
	return nil
}
