package main

import (
	"fmt"

	"github.com/infra-iac/infra/spec"
)

// unitSize is how many resources one unit of the benchmark fleet declares.
const unitSize = 10

// fleetDocument returns the benchmark fleet of n resources (n rounded down
// to a multiple of unitSize): units of ten over seven AWS kinds, with
// references between them — two instances in their security group, two
// queues, a bucket, a password from the environment and a configuration
// secret composed from a queue's URL and the bucket's ARN, an IAM user and
// an image registry. changed in [0, 1] is the share of units whose first
// queue's visibility timeout differs, for the "1% changed" plan.
func fleetDocument(n int, changed float64) *spec.Document {
	doc := newDocument("bench")
	add := func(addr string, s map[string]any) {
		doc.Resources = append(doc.Resources, spec.Resource{Address: addr, Spec: s})
	}
	ref := func(a string) map[string]any { return map[string]any{"ref": a} }
	observed := func(a, attr string) map[string]any { return map[string]any{"observed": a, "attribute": attr} }
	units := n / unitSize
	// Every k-th unit changes: 1% of resources is one unit in ten.
	every := 0
	if changed > 0 {
		every = max(1, int(1/(changed*unitSize)))
	}
	for i := 0; i < units; i++ {
		tags := map[string]any{"team": "bench", "unit": fmt.Sprint(i)}
		sg := fmt.Sprintf("aws/security-group/bench-web-%04d", i)
		jobs := fmt.Sprintf("aws/queues/bench-jobs-%04d", i)
		bucket := fmt.Sprintf("aws/object-store/bench-assets-%04d", i)
		visibility := 30.0
		if every > 0 && i%every == 0 {
			visibility = 45
		}
		add(sg, map[string]any{"description": "web tier", "tags": tags,
			"ingress": []any{map[string]any{"port": 443.0, "cidr": "10.0.0.0/8"}}})
		for _, x := range []string{"a", "b"} {
			add(fmt.Sprintf("aws/aws-instance/bench-web-%04d-%s", i, x), map[string]any{
				"imageId": benchAMI, "instanceType": "t3.micro", "securityGroup": ref(sg), "tags": tags})
		}
		add(jobs, map[string]any{"visibilityTimeoutSec": visibility, "tags": tags})
		add(fmt.Sprintf("aws/queues/bench-events-%04d", i), map[string]any{"visibilityTimeoutSec": 60.0})
		add(bucket, map[string]any{"versioning": true, "forceDestroy": true, "tags": tags})
		add(fmt.Sprintf("aws/secrets/bench-password-%04d", i), map[string]any{"value": map[string]any{"fromEnv": "BENCH_PASSWORD"}})
		add(fmt.Sprintf("aws/secrets/bench-config-%04d", i), map[string]any{"value": map[string]any{"composed": map[string]any{
			"format": "queue={0} bucket={1}",
			"args":   []any{observed(jobs, "url"), observed(bucket, "arn")},
		}}, "tags": tags})
		add(fmt.Sprintf("aws/iam/bench-deployer-%04d", i), map[string]any{"tags": tags})
		add(fmt.Sprintf("aws/image-registry/bench-app-%04d", i), map[string]any{"immutableTags": true, "tags": tags})
	}
	return doc
}

// independentDocument declares n resources with no references between
// them, over four services, for the concurrency measure.
func independentDocument(n int) *spec.Document {
	doc := newDocument("bench-independent")
	kinds := []string{"queues", "secrets", "image-registry", "security-group"}
	for i := 0; i < n; i++ {
		k := kinds[i%len(kinds)]
		s := map[string]any{}
		switch k {
		case "secrets":
			s["value"] = map[string]any{"fromEnv": "BENCH_PASSWORD"}
		case "security-group":
			s["description"] = "independent"
		}
		doc.Resources = append(doc.Resources, spec.Resource{Address: fmt.Sprintf("aws/%s/bench-ind-%04d", k, i), Spec: s})
	}
	return doc
}

// newDocument is an empty document of the fleet, in the bench's account
// and region.
func newDocument(fleet string) *spec.Document {
	return &spec.Document{
		APIVersion: spec.APIVersion,
		Fleet:      fleet,
		Accounts:   map[spec.Provider]string{spec.AWS: "123456789012"},
		Placement:  map[spec.Provider]string{spec.AWS: region},
	}
}

// kindsOf counts the declared resources of each kind.
func kindsOf(doc *spec.Document) map[spec.Kind]int {
	out := map[spec.Kind]int{}
	for _, r := range doc.Resources {
		if a, err := spec.ParseAddress(r.Address); err == nil {
			out[a.Kind]++
		}
	}
	return out
}
