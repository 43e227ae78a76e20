package main

import (
	"fmt"

	"github.com/infra-iac/infra/spec"
)

// minRow is one line of the minimum: what must be called, and how often
// with the permissions infra asks for (docs/providers.md), and with any
// API at all (anyCalls).
type minRow struct {
	what     string
	calls    int
	anyCalls int
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
		{what: "STS GetCallerIdentity (the account, before anything is listed)", calls: 1},
		{what: "Tagging API GetResources, 100 a page (ownership and tags)", calls: pages(tagged, 100)},
	}
	for _, k := range []spec.Kind{spec.SecurityGroup, spec.AWSInstance, spec.Queues, spec.ObjectStore, spec.Secrets, spec.IAM, spec.ImageRegistry} {
		n, ok := kinds[k]
		if !ok {
			continue
		}
		switch k {
		case spec.SecurityGroup:
			rows = append(rows, minRow{what: fmt.Sprintf("security-group ×%d: DescribeVpcs (the default VPC) + DescribeSecurityGroups, 1,000 a page", n), calls: 1 + pages(n, 1000)})
		case spec.AWSInstance:
			rows = append(rows, minRow{what: fmt.Sprintf("aws-instance ×%d: DescribeInstances, 1,000 a page", n), calls: pages(n, 1000)})
		case spec.Queues:
			rows = append(rows, minRow{what: fmt.Sprintf("queues ×%d: ListQueues, 1,000 a page; GetQueueAttributes each", n), calls: pages(n, 1000) + n})
		case spec.ObjectStore:
			rows = append(rows, minRow{what: fmt.Sprintf("object-store ×%d: ListBuckets; GetBucketVersioning each", n), calls: 1 + n})
		case spec.Secrets:
			rows = append(rows, minRow{what: fmt.Sprintf("secrets ×%d: ListSecrets, 100 a page", n), calls: pages(n, 100)})
		case spec.IAM:
			// ListUsers carries neither tags nor policies. One call does,
			// GetAccountAuthorizationDetails, but its permission reads every
			// role and policy document of the account, which infra does not
			// ask for.
			rows = append(rows, minRow{what: fmt.Sprintf("iam ×%d: ListUsers, 100 a page; ListUserTags (or GetUser) and ListAttachedUserPolicies each — with any API: GetAccountAuthorizationDetails, 1,000 a page", n),
				calls: pages(n, 100) + 2*n, anyCalls: pages(n, 1000)})
		case spec.ImageRegistry:
			rows = append(rows, minRow{what: fmt.Sprintf("image-registry ×%d: DescribeRepositories, 1,000 a page; ListTagsForResource each (no Tagging API for ECR on the emulator)", n), calls: pages(n, 1000) + n})
		}
	}
	return rows
}

// minTotal adds the rows up, with infra's permissions and with any API.
func minTotal(rows []minRow) (least, anyAPI int) {
	for _, r := range rows {
		least += r.calls
		if r.anyCalls > 0 {
			anyAPI += r.anyCalls
		} else {
			anyAPI += r.calls
		}
	}
	return least, anyAPI
}
