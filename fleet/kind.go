package fleet

import "github.com/infra-iac/infra/spec"

// Kind is the constraint every kind type satisfies. The cloud packages
// define one zero-size type per kind they offer (aws.ObjectStore,
// scaleway.Function …); a kind a cloud lacks has no type there, so it cannot
// be named, declared, referenced, forgotten or excluded.
type Kind interface {
	// Provider is the cloud the kind type belongs to.
	Provider() spec.Provider
	// Kind is the kind's name in the document.
	Kind() spec.Kind
}

// BucketKind is satisfied by the kinds whose resources are buckets on some
// cloud (object stores, S3 buckets): what a BucketRef may point at.
type BucketKind interface {
	Kind
	// IsBucket marks the kind as a bucket; it does nothing.
	IsBucket()
}

func addressOf[K Kind](name string) spec.Address {
	var k K
	return spec.Address{Provider: k.Provider(), Kind: k.Kind(), Name: name}
}
