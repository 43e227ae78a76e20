// Package aws declares resources on AWS: one constructor per kind AWS
// offers, and nothing for the kinds it does not (there is no Function
// here: that is a Scaleway kind). Its regions (Region) and instance types
// (InstanceType, and the families such as T3) are typed, so a region of
// another cloud, a place AWS has no region in, or a size a family lacks
// does not compile.
//
// Most of the package is generated from spec's tables by fleet/internal/gen.
package aws
