// Package scaleway declares resources on Scaleway: one constructor per kind
// Scaleway offers, and nothing for the kinds it does not (there is no
// S3Bucket or SecurityGroup here: those are AWS kinds). Its regions are a
// type of their own (Region), so an AWS region or a place Scaleway has no
// region in does not compile.
//
// Most of the package is generated from spec's tables by fleet/internal/gen.
package scaleway
