// Package spectest builds fleet documents for tests and benchmarks in any
// package: a large valid document with references across kinds and clouds,
// the shape a fleet of a few thousand resources has.
package spectest

import (
	"fmt"

	"github.com/infra-iac/infra/spec"
)

// UnitSize is how many resources one unit of LargeDocument declares.
const UnitSize = 10

// LargeDocument returns a valid document of n resources (n rounded down to
// a multiple of UnitSize), the same for the same n. Each unit is an EC2
// instance and its security group, a database with its password secret and
// a composed connection-string secret, a queue and the Lambda that reads its
// URL, and a Scaleway container in its namespace with a secret in its
// environment: ten kinds, both clouds, every expression.
func LargeDocument(n int) *spec.Document {
	doc := &spec.Document{
		APIVersion: spec.APIVersion,
		Fleet:      "large",
		Accounts:   map[spec.Provider]string{spec.AWS: "123456789012", spec.Scaleway: "11111111-2222-3333-4444-555555555555"},
		Placement:  map[spec.Provider]string{spec.AWS: "eu-west-3", spec.Scaleway: "fr-par"},
		Exclusions: []spec.Exclusion{{Address: "aws/object-store/legacy-*", Why: "owned by the data team"}},
		Resources:  make([]spec.Resource, 0, n),
		Forget:     []string{"aws/queues/retired"},
	}
	ref := func(a string) map[string]any { return map[string]any{"ref": a} }
	observed := func(a, attr string) map[string]any { return map[string]any{"observed": a, "attribute": attr} }
	add := func(addr, region string, s map[string]any) {
		doc.Resources = append(doc.Resources, spec.Resource{Address: addr, Region: region, Spec: s})
	}
	regions := []string{"eu-west-3", "eu-west-1", "eu-central-1", "us-east-1"}
	types := []string{"t3.micro", "m7i.large", "c7g.xlarge", "r6i.2xlarge"}
	for i := 0; i < n/UnitSize; i++ {
		// Spread units over regions; an instance stays in its group's.
		region := regions[i%len(regions)]
		sg := fmt.Sprintf("aws/security-group/sg-%d", i)
		pw := fmt.Sprintf("aws/secrets/db-password-%d", i)
		db := fmt.Sprintf("aws/postgres/db-%d", i)
		q := fmt.Sprintf("aws/queues/jobs-%d", i)
		ns := fmt.Sprintf("scaleway/scaleway-container-namespace/apps-%d", i)
		key := fmt.Sprintf("scaleway/secrets/api-key-%d", i)
		tags := map[string]any{"team": "web", "unit": fmt.Sprint(i)}

		add(sg, region, map[string]any{"description": "web tier", "tags": tags,
			"ingress": []any{map[string]any{"port": 443.0, "cidr": "0.0.0.0/0"}}})
		add(fmt.Sprintf("aws/aws-instance/web-%d", i), region, map[string]any{
			"imageId": "latest", "instanceType": types[i%len(types)], "securityGroup": ref(sg), "tags": tags})
		add(pw, "", map[string]any{"value": map[string]any{"fromEnv": "DB_PASSWORD"}})
		add(db, "", map[string]any{"masterUsername": "dbadmin", "masterPasswordSecret": ref(pw),
			"minCapacity": 0.5, "maxCapacity": 4.0, "tags": tags})
		add(fmt.Sprintf("aws/secrets/db-url-%d", i), "", map[string]any{"value": map[string]any{"composed": map[string]any{
			"format": "postgres://dbadmin:{0}@{1}/main",
			"args":   []any{map[string]any{"secretValue": pw}, observed(db, "endpoint")},
		}}})
		add(q, "", map[string]any{"visibilityTimeoutSec": 60.0, "tags": tags})
		add(fmt.Sprintf("aws/compute/api-%d", i), "", map[string]any{
			"image":         "123456789012.dkr.ecr.eu-west-3.amazonaws.com/api:1",
			"executionRole": "arn:aws:iam::123456789012:role/api",
			"env":           map[string]any{"JOBS_URL": observed(q, "url"), "MODE": "prod"},
			"tags":          tags,
		})
		add(ns, "", map[string]any{"description": "apps"})
		add(key, "", map[string]any{"value": map[string]any{"fromEnv": "API_KEY"}})
		add(fmt.Sprintf("scaleway/scaleway-container/web-%d", i), "", map[string]any{
			"namespace": ref(ns), "image": "rg.fr-par.scw.cloud/shop/web:1",
			"secretEnv": map[string]any{"API_KEY": ref(key)}, "env": map[string]any{"MODE": "prod"},
		})
	}
	return doc
}

// LargeDocumentJSON is LargeDocument encoded as a user would write it.
func LargeDocumentJSON(n int) ([]byte, error) {
	return spec.EncodeDocument(LargeDocument(n))
}
