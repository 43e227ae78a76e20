package main

import (
	"fmt"

	"github.com/infra-iac/infra/spec"
)

// minRow is one line of the minimum: what must be called, and how often.
type minRow struct {
	what  string
	calls int
}

func pages(n, per int) int {
	if n == 0 {
		return 1 // an empty listing is still one call
	}
	return (n + per - 1) / per
}

// minimum is the fewest AWS calls that observe the fleet in one region,
// as docs/performance.md states it per kind: every listing's pages, plus
// the reads no listing or batch API answers, on the APIs the emulator
// serves. The Tagging API carries the tags of the kinds it returns, so
// their tags cost its pages, not a read each.
func minimum(kinds map[spec.Kind]int) []minRow {
	tagged := kinds[spec.SecurityGroup] + kinds[spec.AWSInstance] + kinds[spec.Queues] +
		kinds[spec.ObjectStore] + kinds[spec.Secrets]
	rows := []minRow{
		{"STS GetCallerIdentity (the account, before anything is listed)", 1},
		{"Tagging API GetResources, 100 a page (ownership and tags)", pages(tagged, 100)},
	}
	for _, k := range []spec.Kind{spec.SecurityGroup, spec.AWSInstance, spec.Queues, spec.ObjectStore, spec.Secrets, spec.IAM, spec.ImageRegistry} {
		n, ok := kinds[k]
		if !ok {
			continue
		}
		switch k {
		case spec.SecurityGroup:
			rows = append(rows, minRow{fmt.Sprintf("security-group ×%d: DescribeVpcs (the default VPC) + DescribeSecurityGroups, 1,000 a page", n), 1 + pages(n, 1000)})
		case spec.AWSInstance:
			rows = append(rows, minRow{fmt.Sprintf("aws-instance ×%d: DescribeInstances, 1,000 a page", n), pages(n, 1000)})
		case spec.Queues:
			rows = append(rows, minRow{fmt.Sprintf("queues ×%d: ListQueues, 1,000 a page; GetQueueAttributes each", n), pages(n, 1000) + n})
		case spec.ObjectStore:
			rows = append(rows, minRow{fmt.Sprintf("object-store ×%d: ListBuckets; GetBucketVersioning each", n), 1 + n})
		case spec.Secrets:
			rows = append(rows, minRow{fmt.Sprintf("secrets ×%d: ListSecrets, 100 a page", n), pages(n, 100)})
		case spec.IAM:
			rows = append(rows, minRow{fmt.Sprintf("iam ×%d: GetAccountAuthorizationDetails (users with tags and policies), 1,000 a page", n), pages(n, 1000)})
		case spec.ImageRegistry:
			rows = append(rows, minRow{fmt.Sprintf("image-registry ×%d: DescribeRepositories, 1,000 a page; ListTagsForResource each (no Tagging API for ECR on the emulator)", n), pages(n, 1000) + n})
		}
	}
	return rows
}

func minTotal(rows []minRow) int {
	n := 0
	for _, r := range rows {
		n += r.calls
	}
	return n
}
