// Package gcp declares resources on Google Cloud: one constructor per kind
// GCP offers, and nothing for the kinds it does not (there is no S3Bucket or
// Function here: those are AWS and Scaleway kinds). Its regions are a type
// of their own (Region), so an AWS or Scaleway region, or a place GCP has no
// region in, does not compile.
//
// Most of the package is generated from spec's tables by fleet/internal/gen.
package gcp
