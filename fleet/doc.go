// Package fleet is the typed authoring SDK of infra: a fleet of cloud
// resources written in Go, where what cannot be deployed does not compile.
//
// A fleet program builds a *Fleet with the constructors of the cloud
// packages (fleet/aws, fleet/scaleway) and hands it to Main:
//
//	f := fleet.New("shop")
//	cloud := aws.Use(f, "123456789012", aws.Paris)
//	cloud.ObjectStore("shop-assets", fleet.ObjectStoreSpec{Versioning: fleet.Set(true)})
//	fleet.Main(f)
//
// The compiler then refuses, among others: a reference to a resource of the
// wrong kind (a constructor takes a Ref[aws.SecurityGroup], not any
// reference), a kind the cloud does not offer (there is no
// scaleway.Cloud.S3Bucket), a region of another cloud (aws.Region and
// scaleway.Region are distinct types), a place the cloud has no region in
// (there is no aws.Warsaw), an instance size the family lacks (there is no
// aws.T3.X32Large), a value known only after apply used as a plain string
// (Output has no way to be read) and a missing required field (it is a
// parameter).
//
// What the types cannot rule out — a duplicate name, a forget of a declared
// resource, a composed secret with no dependency, a region-local reference
// across regions — is reported by Synth as diagnostics, together with and in
// the same form as the rows of `infra check`. The SDK never panics on an
// author's mistake.
//
// Fleets wire to each other through interfaces (DefineInterface): a
// struct type of typed exports in a package both fleets import. A provider
// binds the struct's fields to its own values (Provide, Expose); a consumer
// declares a slot (Use), fills it with another fleet's capability (Wire)
// and reads the exports only through the slot's struct, so a misspelled
// export, a binding of the wrong type, and a secret export anywhere but in
// Composed do not compile.
//
// There are two ways of not knowing a field, and they are different types:
// an Optional (or nil map or slice) that is not set means "I did not say",
// so the field is absent from the document and never compared; an Output
// means "nobody can know until apply", such as a database's endpoint.
package fleet

//go:generate go run ./internal/gen
