package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/infra-iac/infra/spec"
)

// importResult is the import measure: what `infra import` cost for an
// estate of n resources that no fleet owns, and what the plan of the
// imported document then does.
type importResult struct {
	n       int
	kinds   map[spec.Kind]int
	listing sample // infra import --json: list only
	write   sample // infra import --out: the same, and the document written
	plan    sample // infra plan of the imported document
	adopts  int    // the plan's adopts
	others  int    // the plan's other actions (the goal is 0)
	changes int    // the adopts' changes other than the tags (the goal is 0)
}

// importKinds are the kinds of the import estate, a quarter each.
var importKinds = []spec.Kind{spec.Queues, spec.ObjectStore, spec.Secrets, spec.SecurityGroup}

// importEstate is fleet seed's document of n resources, which are made,
// then released (forget removes the mark and keeps the resource), so that
// nobody owns them.
func importEstate(n int) *spec.Document {
	doc := &spec.Document{APIVersion: spec.APIVersion, Fleet: "seed",
		Accounts: map[spec.Provider]string{spec.AWS: "123456789012"}, Placement: map[spec.Provider]string{spec.AWS: region}}
	for i := 0; i < n; i++ {
		k := importKinds[i%len(importKinds)]
		name := fmt.Sprintf("estate-%s-%04d", k, i)
		tags := map[string]any{"team": "estate", "n": fmt.Sprint(i)}
		var s map[string]any
		switch k {
		case spec.Queues:
			s = map[string]any{"visibilityTimeoutSec": 45.0, "tags": tags}
		case spec.ObjectStore:
			s = map[string]any{"versioning": i%8 == 1, "forceDestroy": true, "tags": tags}
		case spec.Secrets:
			s = map[string]any{"value": map[string]any{"fromEnv": "BENCH_PASSWORD"}, "description": "estate secret", "tags": tags}
		case spec.SecurityGroup:
			s = map[string]any{"description": "estate group", "ingress": []any{map[string]any{"port": 443.0, "cidr": "10.0.0.0/8"}}, "tags": tags}
		}
		doc.Resources = append(doc.Resources, spec.Resource{Address: "aws/" + string(k) + "/" + name, Spec: s})
	}
	return doc
}

// measureImport makes the estate, releases it, and measures import and the
// plan of what it wrote.
func measureImport(self string, env []string, work string, n int) (*importResult, error) {
	dir := filepath.Join(work, fmt.Sprintf("import%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	seed := importEstate(n)
	res := &importResult{n: n, kinds: kindsOf(seed)}
	released := &spec.Document{APIVersion: seed.APIVersion, Fleet: seed.Fleet, Accounts: seed.Accounts, Placement: seed.Placement, Resources: []spec.Resource{}}
	for _, r := range seed.Resources {
		released.Forget = append(released.Forget, r.Address)
	}
	adopter := &spec.Document{APIVersion: seed.APIVersion, Fleet: "adopter", Accounts: seed.Accounts, Placement: seed.Placement, Resources: []spec.Resource{}}
	paths := map[string]*spec.Document{"seed.json": seed, "released.json": released, "adopter.json": adopter}
	for name, doc := range paths {
		if err := writeDoc(filepath.Join(dir, name), doc); err != nil {
			return nil, err
		}
	}
	st := func(fleet string) string { return filepath.Join(dir, "state-"+fleet) }
	fmt.Fprintf(os.Stderr, "  making an estate of %d and releasing it …\n", n)
	for _, args := range [][]string{
		{"apply", "--yes", "--fleet", "seed.json", "--state", st("seed")},
		{"apply", "--yes", "--fleet", "released.json", "--state", st("seed")},
	} {
		if _, err := measure(self, env, dir, args, 0); err != nil {
			return nil, err
		}
	}
	var err error
	if res.listing, err = measure(self, env, dir, []string{"import", "--json", "--fleet", "adopter.json", "--state", st("adopter")}, 0); err != nil {
		return nil, err
	}
	if res.write, err = measure(self, env, dir, []string{"import", "--fleet", "adopter.json", "--out", "imported.json", "--state", st("adopter")}, 0); err != nil {
		return nil, err
	}
	if res.plan, err = measure(self, env, dir, []string{"plan", "--fleet", "imported.json", "--out", "plan.json", "--state", st("adopter")}, 0); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, "plan.json"))
	if err != nil {
		return nil, err
	}
	var plan struct {
		Actions []struct {
			Action  string `json:"action"`
			Changes []struct {
				Field string `json:"field"`
			} `json:"changes"`
		} `json:"actions"`
	}
	if err := json.Unmarshal(data, &plan); err != nil {
		return nil, fmt.Errorf("the imported plan: %w", err)
	}
	for _, a := range plan.Actions {
		if a.Action != "adopt" {
			res.others++
			continue
		}
		res.adopts++
		for _, c := range a.Changes {
			if c.Field != spec.TagsField {
				res.changes++
			}
		}
	}
	for _, s := range []struct {
		name string
		s    sample
	}{{"import (list)", res.listing}, {"import --out", res.write}, {"plan (imported)", res.plan}} {
		fmt.Fprintf(os.Stderr, "  %-22s %8s %7.1f MB %6d calls\n", s.name, s.s.wall.Round(time.Millisecond), float64(s.s.rssKB)/1024, total(s.s.ops))
	}
	return res, nil
}

// importMinimum is the fewest calls an import of the estate makes with
// the permissions infra asks for: the account, the tag scan (which finds
// no mark), every listing's pages (import lists every kind, and an empty
// listing is one call), and the reads no listing answers. An unmarked
// queue or bucket is in no tag scan, so its read also asks for its tags;
// a bucket's also asks whether object lock is on, which decides whether
// it is offered as an object-store or an s3-bucket.
func importMinimum(kinds map[spec.Kind]int) []minRow {
	rows := []minRow{
		{what: "STS GetCallerIdentity", calls: 1},
		{what: "Tagging API GetResources (ownership: no mark in the estate)", calls: 1},
		{what: "the kinds the estate has none of, listed empty: DescribeInstances, DescribeRepositories, ListUsers, ListFunctions, DescribeDBClusters", calls: 5},
	}
	for _, k := range importKinds {
		n := kinds[k]
		switch k {
		case spec.Queues:
			rows = append(rows, minRow{what: fmt.Sprintf("queues ×%d: ListQueues, 1,000 a page; GetQueueAttributes and ListQueueTags each", n), calls: pages(n, 1000) + 2*n})
		case spec.ObjectStore:
			rows = append(rows, minRow{what: fmt.Sprintf("buckets ×%d: ListBuckets; GetBucketVersioning, GetBucketTagging and GetObjectLockConfiguration each", n), calls: 1 + 3*n})
		case spec.Secrets:
			rows = append(rows, minRow{what: fmt.Sprintf("secrets ×%d: ListSecrets, 100 a page (carries everything)", n), calls: pages(n, 100)})
		case spec.SecurityGroup:
			rows = append(rows, minRow{what: fmt.Sprintf("security-group ×%d: DescribeVpcs + DescribeSecurityGroups, 1,000 a page (carries everything)", n), calls: 1 + pages(n, 1000)})
		}
	}
	return rows
}

func (r *report) imports(b *strings.Builder) {
	if r.imp == nil {
		return
	}
	x := r.imp
	least, _ := minTotal(importMinimum(x.kinds))
	fmt.Fprintf(b, "## Import of %d resources no fleet owns\n\n", x.n)
	fmt.Fprintf(b, "An estate of %d (a quarter each of queues, buckets, secrets and security groups, with tags and settings) is made by fleet seed and released (`forget`), so that nobody owns it; fleet adopter, which declares nothing, then imports it. One run.\n\n", x.n)
	fmt.Fprintf(b, "| command | wall | peak RSS | calls | minimum | ÷ |\n|---|---|---|---|---|---|\n")
	for _, s := range []struct {
		name string
		s    sample
		min  int
	}{{"`infra import --json`", x.listing, least}, {"`infra import --out imported.json`", x.write, least}, {"`infra plan` of the imported document", x.plan, 0}} {
		m, ratio := "", ""
		if s.min > 0 {
			m, ratio = fmt.Sprint(s.min), fmt.Sprintf("%.2f", float64(total(s.s.ops))/float64(s.min))
		}
		fmt.Fprintf(b, "| %s | %s | %.1f MB | %d | %s | %s |\n", s.name, s.s.wall.Round(time.Millisecond), float64(s.s.rssKB)/1024, total(s.s.ops), m, ratio)
	}
	fmt.Fprintf(b, "\nThe plan of the imported document: %d adopts, %d other actions, %d changes besides the tags the adopts write.\n\n", x.adopts, x.others, x.changes)
	fmt.Fprintf(b, "- **import** (%d): %s\n", total(x.listing.ops), breakdown(x.listing.ops))
	fmt.Fprintf(b, "- **minimum** (%d):\n", least)
	for _, row := range importMinimum(x.kinds) {
		fmt.Fprintf(b, "  - %s: %d\n", row.what, row.calls)
	}
	fmt.Fprintln(b)
}
