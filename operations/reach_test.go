package operations

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// jobQueueInterface is what the reach fleets carry: a queue's url, usable
// anywhere (an SQS url is reachable from every region).
const jobQueueInterface = `{"job-queue": {"exports": {
  "url": {"type": "string", "lifecycle": "apply", "locality": ["global", "region"]}}}}`

// queueProvider is fleet name, in region, providing its queue as jobs.
func (r *wiringRig) queueProvider(name, region string) *spec.Document {
	r.t.Helper()
	return r.decode(fmt.Sprintf(`{"apiVersion": "infra/v1", "fleet": %q, "placement": {"aws": %q},
	  "interfaces": %s,
	  "resources": [{"address": "aws/queues/%s-jobs", "spec": {}}],
	  "provides": {"jobs": {"interface": "job-queue", "exports": {
	    "url": {"observed": "aws/queues/%s-jobs", "attribute": "url", "locality": "global"}}}},
	  "exposes": ["jobs"]}`, name, region, jobQueueInterface, name, name))
}

// worker reaches all the job queues of fleets, and tags its own queue
// with the set of their urls.
func (r *wiringRig) worker(fleets ...string) *spec.Document {
	r.t.Helper()
	var wires []string
	for _, f := range fleets {
		wires = append(wires, fmt.Sprintf(`{"fleet": %q, "provides": "jobs"}`, f))
	}
	return r.decode(fmt.Sprintf(`{"apiVersion": "infra/v1", "fleet": "worker", "placement": {"aws": "eu-west-1"},
	  "interfaces": %s,
	  "uses": {"queues": {"interface": "job-queue", "reach": "all"}},
	  "wires": {"queues": [%s]},
	  "resources": [{"address": "aws/queues/worker-in", "spec": {"tags": {"use": "queues", "export": "url"}}}]}`,
		jobQueueInterface, strings.Join(wires, ", ")))
}

func (r *wiringRig) decode(doc string) *spec.Document {
	r.t.Helper()
	d, err := spec.DecodeDocument([]byte(doc))
	if err != nil {
		r.t.Fatal(err)
	}
	return d
}

// The acceptance of docs/wiring.md#reach, against the emulator: two
// providers in two regions apply and publish, a consumer that reaches all
// reads both into its queue's tags, keyed FLEET/REGION, claims both, and
// its next plan is empty; unwiring one gives its claim up.
func TestReachAllWiresEveryProviderIntoAMap(t *testing.T) {
	r := newWiringRig(t)
	ctx := context.Background()
	r.apply(r.queueProvider("a", "eu-west-1"))
	r.apply(r.queueProvider("b", "us-east-1"))
	urls := map[string]any{}
	for fleet, region := range map[string]string{"a": "eu-west-1", "b": "us-east-1"} {
		out, err := r.ops.Output(ctx, OutputRequest{Fleet: fleet})
		if err != nil {
			t.Fatal(err)
		}
		urls[fleet+"/"+region] = out.Capabilities["jobs"].Exports["url"].Value
	}

	p, err := r.plan(r.worker("a", "b"))
	if err != nil {
		t.Fatalf("consumer plan: %v\n%s", err, rows(p, err))
	}
	var from []string
	for _, c := range p.Actions[0].Changes {
		if c.Field == "tags" {
			from = c.From
		}
	}
	if !reflect.DeepEqual(from, []string{"a:jobs.url", "b:jobs.url"}) {
		t.Fatalf("the tags' change should name both entries: %+v", p.Actions)
	}
	r.apply(r.worker("a", "b"))
	if got := r.workerTags(); !reflect.DeepEqual(got, urls) {
		t.Fatalf("the worker's tags are %v, want %v", got, urls)
	}
	if p, err := r.plan(r.worker("a", "b")); err != nil || p.HasChanges() {
		t.Fatalf("the plan after the apply: %v %+v", err, p.Actions)
	}
	for _, fleet := range []string{"a", "b"} {
		if got := r.claims(fleet).Holders("jobs"); !reflect.DeepEqual(got, []string{"worker"}) {
			t.Fatalf("claims on %s:jobs: %v", fleet, got)
		}
	}
	var rec struct {
		Wires map[string]json.RawMessage `json:"wires"`
	}
	st, _ := r.ops.env.Store(ctx, "worker")
	own, err := st.LoadPublished(ctx)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(own)
	_ = json.Unmarshal(raw, &rec)
	if !strings.HasPrefix(string(rec.Wires["queues"]), "[") {
		t.Fatalf("the worker's record keeps its wire as %s, want the list", rec.Wires["queues"])
	}

	// The provider protects its reach-all consumer like any other.
	unexposed := r.queueProvider("b", "us-east-1")
	unexposed.Exposes = nil
	if p, err := r.plan(unexposed); !strings.Contains(rows(p, err), "this plan stops exposing capability jobs, which worker read(s)") {
		t.Fatalf("b unexposing: %s", rows(p, err))
	}

	// A set of one is still keyed, and the entry left behind is unclaimed.
	r.apply(r.worker("a"))
	if got, want := r.workerTags(), map[string]any{"a/eu-west-1": urls["a/eu-west-1"]}; !reflect.DeepEqual(got, want) {
		t.Fatalf("the worker's tags are %v, want %v", got, want)
	}
	if got := r.claims("b").Holders("jobs"); len(got) != 0 {
		t.Fatalf("claims on b:jobs after unwiring it: %v", got)
	}
	if got := r.claims("a").Holders("jobs"); !reflect.DeepEqual(got, []string{"worker"}) {
		t.Fatalf("claims on a:jobs: %v", got)
	}
}

// workerTags reads the worker's queue's tags from the cloud, without the
// ownership tag.
func (r *wiringRig) workerTags() map[string]any {
	r.t.Helper()
	ctx := context.Background()
	b, _, err := r.ops.env.Backends(ctx, []spec.Provider{spec.AWS})
	if err != nil {
		r.t.Fatal(err)
	}
	rs, _ := providers.ResourcesOf(b[spec.AWS], spec.Queues)
	res, found, err := rs.Read(ctx, "eu-west-1", "worker-in")
	if err != nil || !found {
		r.t.Fatalf("read the worker's queue: %v (found %v)", err, found)
	}
	tags, _ := res.Fields[spec.TagsField].(map[string]any)
	delete(tags, spec.OwnershipTagKey)
	return tags
}
