package spec

import "testing"

// The per-provider facts generic code used to switch on are rows of the
// kind table; these are the ones the engine, the sweep and ownership rely on.
func TestKindTableProviderFacts(t *testing.T) {
	classes := []struct {
		p    Provider
		k    Kind
		want string
	}{
		{Scaleway, Compute, string(ScalewayContainer)},
		{Scaleway, ScalewayContainer, string(ScalewayContainer)},
		{AWS, Compute, "function"},
		{AWS, LambdaFunction, "function"},
		{GCP, Compute, "function"},
		{AWS, ObjectStore, "bucket"},
		{AWS, S3Bucket, "bucket"},
		{Scaleway, ObjectStore, "bucket"},
		{AWS, Kind("nope"), "nope"},
	}
	for _, c := range classes {
		if got := PhysicalClass(c.p, c.k); got != c.want {
			t.Errorf("PhysicalClass(%s, %s) = %q, want %q", c.p, c.k, got, c.want)
		}
	}
	marks := map[Provider]map[Kind]Mark{
		Scaleway: {Queues: MarkNamePrefix, Postgres: MarkNamePrefix, ImageRegistry: MarkDescription},
		// Service accounts take no labels but have a description.
		GCP: {IAM: MarkDescription},
		// A subscription has neither tags nor a field of its own to hold
		// it; a record set has no tags, so a companion TXT record holds
		// its mark; KMS aliases take neither tags nor a description.
		AWS: {SNSSubscription: MarkStatement, Route53Record: MarkCompanion, KMSAlias: MarkNamePrefix},
	}
	// IAM is per account; Route 53 is one global service.
	global := map[Kind]bool{IAM: true, IAMRole: true, IAMPolicy: true, Route53Zone: true, Route53Record: true}
	for _, info := range Kinds() {
		for _, p := range info.Providers {
			want := MarkTag
			if m := marks[p][info.Kind]; m != "" {
				want = m
			}
			if got := info.MarkOn(p); got != want {
				t.Errorf("%s on %s carries the mark as %q, want %q", info.Kind, p, got, want)
			}
		}
		if info.Global != global[info.Kind] {
			t.Errorf("%s: Global = %v", info.Kind, info.Global)
		}
	}
}

func TestFieldInstructions(t *testing.T) {
	info, _ := Lookup(AWSInstance)
	f, _ := info.Field("imageId")
	if !f.IsInstruction(Lit{V: "latest"}) {
		t.Error(`imageId "latest" is not an instruction`)
	}
	if f.IsInstruction(Lit{V: "ami-123"}) || f.IsInstruction(Ref{}) {
		t.Error("an AMI id or a reference is an instruction")
	}
	other, _ := info.Field("instanceType")
	if other.IsInstruction(Lit{V: "latest"}) {
		t.Error(`instanceType "latest" is an instruction`)
	}
}

// A Wired field takes another fleet's export of its referent's identity,
// which the engine hands the driver in Target.Identities: the referent must
// be of one kind that has an identity, and the value a public string.
func TestWiredFieldsTakeOneKindByIdentity(t *testing.T) {
	n := 0
	for _, info := range Kinds() {
		for _, f := range info.Fields {
			if !f.Wired {
				continue
			}
			n++
			if f.Type != TypeRef && f.Type != TypeRefMap {
				t.Errorf("%s.%s: Wired on a %s, not a reference", info.Kind, f.Name, f.Type)
			}
			if f.Secret || !f.SameProvider || len(f.RefKinds) != 1 {
				t.Errorf("%s.%s: Wired wants one kind of the same provider and no secret", info.Kind, f.Name)
				continue
			}
			if target, _ := Lookup(f.RefKinds[0]); target == nil || target.Identity == "" {
				t.Errorf("%s.%s: Wired to %s, which has no Identity", info.Kind, f.Name, f.RefKinds[0])
			}
		}
	}
	if n == 0 {
		t.Error("no field is Wired")
	}
}
