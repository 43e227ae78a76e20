package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/golden"
	"github.com/infra-iac/infra/spec"
)

func addr(s string) spec.Address {
	// Only constants of this file come here; a typo shows as a zero
	// address in the failing output.
	a, _ := spec.ParseAddress(s)
	return a
}

// samplePlan has one action of every kind, out of the destroys-first
// order, a sensitive change, a value known after apply and diagnostics;
// classes and causes as the planner sets them, resources of two
// components (one of them interleaved with others), the delete of a cut
// member and a contract.
func samplePlan() *engine.Plan {
	p := &engine.Plan{FormatVersion: engine.FormatVersion, Fleet: "shop",
		Accounts: []engine.Account{{Provider: spec.AWS, Account: "123456789012", Regions: []string{"eu-west-3"}},
			{Provider: spec.Scaleway, Account: "11111111-2222-3333-4444-555555555555", Regions: []string{"fr-par"}}},
		Actions: []engine.Action{
			{Address: addr("aws/secrets/db-password"), Action: engine.Create, Region: "eu-west-3",
				Changes: []engine.Change{{Field: "value", Sensitive: true}}, Class: engine.ClassCreate, Cause: "declared, not in the cloud"},
			{Address: addr("aws/queues/jobs"), Action: engine.Update, Region: "eu-west-3",
				Changes: []engine.Change{{Field: "visibilityTimeoutSec", Before: 30.0, After: 120.0}}, Class: engine.ClassUpdateInPlace,
				Cause: "changes: visibilityTimeoutSec", Component: "shop-a", Member: "jobs"},
			{Address: addr("aws/secrets/db-url"), Action: engine.Create, Region: "eu-west-3",
				Changes: []engine.Change{{Field: "value", Sensitive: true}, {Field: "description", KnownAfterApply: true}},
				Class:   engine.ClassCreate, Cause: "declared, not in the cloud", Component: "shop-a", Member: "db-url"},
			{Address: addr("aws/security-group/web"), Action: engine.Replace, Region: "eu-west-3",
				Changes: []engine.Change{{Field: "description", Before: "web", After: "web tier", ForcesReplacement: true}},
				Class:   engine.ClassReplace, Cause: `field "description" forces a replace`},
			{Address: addr("aws/object-store/old-assets"), Action: engine.Delete, Region: "eu-west-3", Reason: "no longer declared",
				Class: engine.ClassDelete, Cause: "no longer declared"},
			{Address: addr("aws/queues/mail"), Action: engine.Adopt, Region: "eu-west-3", Reason: "exists and is tagged for this fleet",
				Class: engine.ClassAdopt, Cause: "exists and is tagged for this fleet"},
			{Address: addr("aws/secrets/api-key"), Action: engine.Create, Region: "eu-west-3",
				Changes: []engine.Change{{Field: "value", Sensitive: true}}, Class: engine.ClassCreate, Cause: "declared, not in the cloud",
				Component: "shop-b", Member: "key"},
			{Address: addr("aws/queues/orders"), Action: engine.Create, Region: "eu-west-3",
				Changes: []engine.Change{{Field: "visibilityTimeoutSec", After: 30.0}}, Class: engine.ClassCreate,
				Cause: "declared, not in the cloud", Component: "shop-a", Member: "orders"},
			{Address: addr("aws/postgres/shop-a-db"), Action: engine.Delete, Region: "eu-west-3", Reason: "no longer declared",
				Class: engine.ClassDelete, Cause: "cut: members.db", Component: "shop-a", Member: "db", Cut: "shop-a.db"},
			{Address: addr("scaleway/secrets/shop-db-url"), Action: engine.Update, Region: "fr-par",
				Changes: []engine.Change{{Field: "value", Sensitive: true}}, Reason: "scaleway/postgres/db is replaced",
				Class: engine.ClassUpdateInPlace, Cause: "changes: value"},
			{Address: addr("aws/queues/old"), Action: engine.Forget, Region: "eu-west-3", Reason: "forget: the ledger row goes, the resource stays",
				Class: engine.ClassForget, Cause: "forget: the ledger row goes, the resource stays"},
		},
		Contracts: []engine.Contract{{Address: addr("scaleway/scaleway-container/api"), Field: "secretEnv", Reads: addr("scaleway/secrets/shop-db-url"),
			Change: engine.Update, Component: "shop-a", Member: "api",
			Cause: "reads scaleway/secrets/shop-db-url at run time, which changes; no action on scaleway/scaleway-container/api"}},
		Diagnostics: []spec.Diagnostic{{Severity: spec.Warning, ID: spec.RowLedgerForeignOwner, Subject: "aws/queues/legacy", Message: "owned by fleet billing: left alone", Resolution: "exclude it | or rename", Evidence: "billing"}},
	}
	p.Summarize()
	p.ID = "sha256:" + strings.Repeat("5", 64)
	return p
}

func TestMarkdownGolden(t *testing.T) {
	golden.Check(t, "plan.md", Markdown(samplePlan(), MarkdownOptions{HeadSHA: "0123456789abcdef0123456789abcdef01234567"}))
}

func TestTextGolden(t *testing.T) {
	var b strings.Builder
	if err := Text(&b, samplePlan(), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "plan.txt", b.String())
}

func TestMarkdownDestroysComeFirst(t *testing.T) {
	md := Markdown(samplePlan(), MarkdownOptions{})
	if !strings.HasPrefix(md, PlanMarker("shop")+"\n") {
		t.Fatalf("the marker is not the first line:\n%s", md)
	}
	warn := strings.Index(md, "[!WARNING]")
	del := strings.Index(md, "aws/object-store/old-assets")
	repl := strings.Index(md, "aws/security-group/web")
	create := strings.Index(md, "aws/secrets/db-password")
	details := strings.Index(md, "#### Resources")
	if warn < 0 || !(warn < repl && warn < del && del < details && repl < create && details < create) {
		t.Fatalf("destroys and replaces are not first (warning %d, replace %d, delete %d, details %d, create %d):\n%s",
			warn, repl, del, details, create, md)
	}
	// Within the details, destructive actions come first too.
	rest := md[details:]
	if strings.Index(rest, "aws/security-group/web") > strings.Index(rest, "aws/queues/jobs") {
		t.Fatalf("details do not start with the destroys:\n%s", rest)
	}
	// Every renderer counts the same.
	if !strings.Contains(md, "**"+SummaryLine(samplePlan())+"**") {
		t.Fatalf("the count line differs from the text renderer's:\n%s", md)
	}
}

func TestMarkdownPlanIDRoundTrip(t *testing.T) {
	p := samplePlan()
	md := Markdown(p, MarkdownOptions{HeadSHA: "abc123"})
	id, head, ok := ReadMarkdownPlanID("some preface\n" + md)
	if !ok || id != p.ID || head != "abc123" {
		t.Fatalf("read back %q %q %v, want %q abc123", id, head, ok, p.ID)
	}
	if _, _, ok := ReadMarkdownPlanID("no id here"); ok {
		t.Fatal("found an id in a body without one")
	}
}

func TestMarkdownNeverShowsASecret(t *testing.T) {
	const canary = "CANARY-md-s3cr3t-91ab"
	w := newWorld(t)
	w.env["DB_PASSWORD"] = canary
	p := w.plan(doc(password, db, dbURL))
	md := Markdown(p, MarkdownOptions{})
	if strings.Contains(md, canary) {
		t.Fatal("the canary leaked into the markdown")
	}
	if !strings.Contains(md, spec.Redacted) {
		t.Fatalf("a secret's change does not read %s:\n%s", spec.Redacted, md)
	}
	// A change marked sensitive stays hidden even if a driver filled it.
	leaky := samplePlan()
	leaky.Actions[0].Changes[0].Before = canary
	leaky.Actions[0].Changes[0].After = canary
	if md := Markdown(leaky, MarkdownOptions{}); strings.Contains(md, canary) {
		t.Fatal("a sensitive change showed its value")
	}
}

func TestMarkdownEscapesWhatWouldBreakTheComment(t *testing.T) {
	p := samplePlan()
	p.Actions[1].Changes[0].After = "a|b`c</details><script>"
	md := Markdown(p, MarkdownOptions{})
	if strings.Count(md, "</details>") != strings.Count(md, "<details>") {
		t.Fatalf("a value closed a details section:\n%s", md)
	}
	if strings.Contains(md, "<script>") {
		t.Fatalf("raw HTML got through:\n%s", md)
	}
	if !strings.Contains(md, `a\|b`) {
		t.Fatalf("a pipe in a value was not escaped:\n%s", md)
	}
}

// bigPlan has n actions of each destructive and constructive kind, each
// with fields, and n diagnostics: every section wants more than the limit.
func bigPlan(n int) *engine.Plan {
	p := &engine.Plan{FormatVersion: engine.FormatVersion, Fleet: "big",
		Accounts: []engine.Account{{Provider: spec.AWS, Account: "123456789012", Regions: []string{"eu-west-1", "eu-west-3"}}}}
	long := strings.Repeat("x", 2000)
	for i := 0; i < n; i++ {
		kind := []engine.ActionKind{engine.Create, engine.Update, engine.Replace, engine.Delete}[i%4]
		a := engine.Action{Address: addr(fmt.Sprintf("aws/queues/q-%05d", i)), Action: kind, Region: "eu-west-3"}
		if kind != engine.Delete {
			a.Changes = []engine.Change{
				{Field: "visibilityTimeoutSec", Before: 30.0, After: float64(i), ForcesReplacement: kind == engine.Replace},
				{Field: "tags", Before: map[string]any{"team": "a"}, After: map[string]any{"team": long}},
			}
		} else {
			a.Reason = "no longer declared"
		}
		p.Actions = append(p.Actions, a)
		p.Diagnostics = append(p.Diagnostics, spec.Diagnostic{Severity: spec.Warning, ID: spec.RowForeignOwner, Subject: a.Address.String(), Message: "warned " + long})
	}
	p.Summarize()
	p.ID = "sha256:" + strings.Repeat("5", 64)
	return p
}

func TestMarkdownSizeCapAt2000Resources(t *testing.T) {
	p := bigPlan(2000)
	md := Markdown(p, MarkdownOptions{HeadSHA: "deadbeef", Elsewhere: "the [job summary](https://example.invalid/run)"})
	t.Logf("comment for 2,000 resources: %d characters", len(md))
	if len(md) >= CommentLimit {
		t.Fatalf("comment is %d characters, over %d", len(md), CommentLimit)
	}
	for _, want := range []string{PlanMarker("big"), "**" + SummaryLine(p) + "**", "[!WARNING]", "more destroyed or replaced, listed in the [job summary]",
		"are not detailed here", "more diagnostic(s) are in", p.ID, "deadbeef"} {
		if !strings.Contains(md, want) {
			t.Errorf("the cut comment lacks %q", want)
		}
	}
	if id, _, ok := ReadMarkdownPlanID(md); !ok || id != p.ID {
		t.Error("the plan id cannot be read back from the cut comment")
	}
	if strings.Count(md, "<details>") != strings.Count(md, "</details>") {
		t.Error("a details section was cut in half")
	}
	// Any limit holds, also a tiny one.
	for _, limit := range []int{2000, 10000, 1 << 20} {
		if md := Markdown(p, MarkdownOptions{Limit: limit}); len(md) > limit && limit > 2000 {
			t.Errorf("limit %d: %d characters", limit, len(md))
		}
	}
	// The uncut rendering holds everything, for the job summary.
	var text bytes.Buffer
	if err := Text(&text, p, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	full := Markdown(p, MarkdownOptions{Limit: 100 << 20})
	if strings.Contains(full, "not detailed here") || strings.Count(full, "<details>") != 1500 {
		t.Errorf("the uncut rendering cut something (%d details)", strings.Count(full, "<details>"))
	}
}

// Strings from a document or a cloud are shown, never obeyed: no control
// or bidirectional character reaches the comment raw, none can end a code
// span, a table cell, the hidden marker or a details section, and none
// becomes a link.
func TestMarkdownEscapesHostileStrings(t *testing.T) {
	evil := "\x1b[2J\x1b[31mEVIL\u009b2J\u202egnp.exe"
	p := samplePlan()
	p.Fleet = "x -->\n# owned" + evil
	p.Accounts[0].Account = "1`2|3" + evil
	p.Accounts[0].Regions = []string{"raw:eu" + evil}
	p.Actions[1].Changes[0].After = evil
	p.Actions[1].Address = spec.Address{Provider: spec.AWS, Kind: spec.Queues, Name: "a`b" + evil}
	p.Actions[4].Reason = "gone [click](http://evil.example) *now* " + evil
	p.Actions[4].Address = spec.Address{Provider: spec.AWS, Kind: spec.ObjectStore, Name: "c`d"}
	p.Actions[4].Region = "raw:<b>" + evil
	p.Diagnostics = append(p.Diagnostics, spec.Diagnostic{Severity: spec.Error, ID: spec.RowUnknownInstanceType, Subject: "aws/queues/e`f" + evil,
		Message: `invalid instance type "` + evil + `"`, Resolution: "write \"raw:" + evil + "\" or [see](http://evil.example)"})
	md := Markdown(p, MarkdownOptions{})
	if spec.PrintableText(md) != md {
		t.Fatalf("a control or bidirectional character got through:\n%q", md)
	}
	for _, want := range []string{`\u001b[2J\u001b[31mEVIL\u009b2J\u202egnp.exe`, "**delete** ``aws/object-store/c`d``", "- ``- aws/object-store/c`d`` delete"} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q:\n%s", want, md)
		}
	}
	for _, line := range strings.Split(md, "\n")[:2] {
		if strings.Count(line, "-->") != 1 || !strings.HasSuffix(line, " -->") {
			t.Errorf("a hidden line does not end where it should: %q", line)
		}
	}
	if strings.Contains(strings.ReplaceAll(md, `\]`, ""), "](http") || strings.Contains(md, "<b>") || strings.Contains(md, "\n# owned") {
		t.Errorf("markdown or HTML from a string got through:\n%s", md)
	}
	if strings.Count(md, "</details>") != strings.Count(md, "<details>") {
		t.Errorf("details sections unbalanced:\n%s", md)
	}
	// Every line of a table has as many unescaped pipes as its header.
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| ") {
			if n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); n != 4 && n != 3 && n != 6 {
				t.Errorf("a cell was split: %q", line)
			}
		}
	}
	// The graph's labels cannot end its fence or speak Mermaid.
	if strings.Count(md, "```") != 2 || !strings.Contains(md, `["~ aws/queues/a#96;b\u001b[2J\u001b[31mEVIL\u009b2J\u202egnp.exe (jobs)"]`) {
		t.Errorf("the graph's fence or label is not escaped:\n%s", md)
	}
	if !strings.HasPrefix(md, "<!-- infra:plan fleet=x -") {
		t.Errorf("marker: %q", md[:min(len(md), 80)])
	}
}

// Outside a pull request the footer's promise (merging applies exactly
// this plan) is not true; a caller says what is instead, and the id stays.
func TestMarkdownFooter(t *testing.T) {
	p := samplePlan()
	def := Markdown(p, MarkdownOptions{})
	if !strings.Contains(def, "Merging applies exactly this plan") {
		t.Fatalf("the default footer lost the pull-request sentence:\n%s", def)
	}
	md := Markdown(p, MarkdownOptions{Footer: "Made by `infra plan`, which changes nothing."})
	want := "\n---\nPlan `" + p.ID + "`. Made by `infra plan`, which changes nothing.\n"
	if !strings.HasSuffix(md, want) || strings.Contains(md, "Merging") {
		t.Fatalf("footer: want the suffix %q:\n%s", want, md)
	}
}

// The comment reads by class, destroys first, the deletes of cut members
// under their own heading, and the contracts after every action; a
// component's resources stand together within their class.
func TestMarkdownGroupsByClass(t *testing.T) {
	md := Markdown(samplePlan(), MarkdownOptions{})
	details := md[strings.Index(md, "#### Resources"):]
	last := -1
	for _, heading := range []string{"##### Replace (1)", "##### Delete (1)", "##### " + CutHeading + " (1)", "##### Update in place (2)",
		"##### Create (4)", "##### Adopt (1)", "##### Forget (1)", "#### " + ContractsHeading, "#### Diagnostics"} {
		i := strings.Index(details, heading)
		if i <= last {
			t.Fatalf("%q is at %d, after %d:\n%s", heading, i, last, details)
		}
		last = i
	}
	cut := details[strings.Index(details, CutHeading):strings.Index(details, "##### Update in place")]
	if !strings.Contains(cut, "`- aws/postgres/shop-a-db` (shop-a.db) delete in eu-west-3: cut: members.db") {
		t.Errorf("the cut delete does not show its cause:\n%s", cut)
	}
	// shop-a's two creates stand together, before shop-b's, though the
	// plan has shop-b's between them.
	if i, j, k := strings.Index(details, "(shop-a.db-url)"), strings.Index(details, "(shop-a.orders)"), strings.Index(details, "(shop-b.key)"); !(i < j && j < k) {
		t.Errorf("components not grouped (%d, %d, %d):\n%s", i, j, k, details)
	}
	if !strings.Contains(details, "- `scaleway/scaleway-container/api` (shop-a.api) `secretEnv`: reads scaleway/secrets/shop-db-url at run time, which changes; no action on scaleway/scaleway-container/api") {
		t.Errorf("the contract is not named with its cause:\n%s", details)
	}
	// Contracts share the details' budget: cut short, they are counted.
	p := samplePlan()
	whole, n := detailsSections(classGroups(p.Actions), p.Contracts, 1<<20)
	short, m := detailsSections(classGroups(p.Actions), p.Contracts, len(whole)-1)
	if n != 0 || m != 1 || strings.Contains(short, ContractsHeading) || !strings.Contains(whole, ContractsHeading) {
		t.Errorf("cut %d then %d; the contract in the short one: %v", n, m, strings.Contains(short, ContractsHeading))
	}
}
