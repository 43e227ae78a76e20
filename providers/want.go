package providers

import "context"

// Want is what the engine needs of one resource: the fields the document
// sets, and which of its attributes something reads (an ARN, an endpoint,
// a group id). A field it does not want is unknown, and an unknown field is
// never drift, so a driver need not read it, nor read back what a create
// or an update already determines (issue 17: read only what is declared).
type Want struct {
	Fields map[string]bool
	// Attributes names the attributes something reads: a reference's
	// identity (a security group's groupId), an observed value (a queue's
	// url). AllAttributes stands for any, where the reader does not say
	// which (a secret reference, a published export's consumer).
	Attributes map[string]bool
	// Created is set when the caller needs the creation time (a sweep's
	// age rule).
	Created bool
}

type wantKey struct{}

// WithWant says what the calls made with ctx need of their resource.
func WithWant(ctx context.Context, w Want) context.Context {
	return context.WithValue(ctx, wantKey{}, w)
}

// WantsField reports whether ctx's caller needs field name. Without a
// Want on ctx (import, a driver's own tests) every field is wanted.
func WantsField(ctx context.Context, name string) bool {
	w, ok := ctx.Value(wantKey{}).(Want)
	return !ok || w.Fields[name]
}

// AllAttributes in Want.Attributes wants every attribute.
const AllAttributes = "*"

// WantsAttribute reports whether ctx's caller reads the resource's
// attribute name; true without a Want on ctx.
func WantsAttribute(ctx context.Context, name string) bool {
	w, ok := ctx.Value(wantKey{}).(Want)
	return !ok || w.Attributes[name] || w.Attributes[AllAttributes]
}

// WantsCreated reports whether ctx's caller needs the creation time; true
// without a Want on ctx.
func WantsCreated(ctx context.Context) bool {
	w, ok := ctx.Value(wantKey{}).(Want)
	return !ok || w.Created
}
