package faultproxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/faultproxy"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

func TestMain(m *testing.M) {
	code := m.Run()
	moto.StopShared()
	os.Exit(code)
}

const region = "eu-west-3"

// fleet is seven kinds with references: instances in their group, a
// secret composed from a queue's URL and a bucket's ARN.
const fleet = `{"apiVersion": "infra/v1", "fleet": "throttled", "accounts": {"aws": "123456789012"}, "placement": {"aws": "eu-west-3"}, "resources": [
 {"address": "aws/security-group/thr-web", "spec": {"description": "web tier", "ingress": [{"port": 443, "cidr": "10.0.0.0/8"}], "tags": {"team": "web"}}},
 {"address": "aws/aws-instance/thr-web-1", "spec": {"imageId": "ami-0abcdef1234567890", "instanceType": "t3.micro", "securityGroup": {"ref": "aws/security-group/thr-web"}}},
 {"address": "aws/aws-instance/thr-web-2", "spec": {"imageId": "ami-0abcdef1234567890", "instanceType": "t3.micro", "securityGroup": {"ref": "aws/security-group/thr-web"}}},
 {"address": "aws/queues/thr-jobs", "spec": {"visibilityTimeoutSec": 45, "tags": {"team": "web"}}},
 {"address": "aws/queues/thr-mail", "spec": {}},
 {"address": "aws/object-store/thr-assets", "spec": {"versioning": true, "forceDestroy": true, "tags": {"team": "web"}}},
 {"address": "aws/secrets/thr-password", "spec": {"value": {"fromEnv": "THR_PASSWORD"}}},
 {"address": "aws/secrets/thr-config", "spec": {"value": {"composed": {"format": "{0} {1}", "args": [{"observed": "aws/queues/thr-jobs", "attribute": "url"}, {"observed": "aws/object-store/thr-assets", "attribute": "arn"}]}}}},
 {"address": "aws/iam/thr-deployer", "spec": {"policies": ["arn:aws:iam::aws:policy/ReadOnlyAccess"], "tags": {"team": "web"}}},
 {"address": "aws/image-registry/thr-app", "spec": {"immutableTags": true}}
]}`

// With a fifth of the calls refused — the service's throttling error or a
// bare 503, never reaching the emulator — apply converges to the same
// cloud as without faults, the next plan (also throttled) finds nothing
// to do, and a throttled read never reads as absent.
func TestApplyConvergesUnderThrottling(t *testing.T) {
	srv := moto.Shared(t)
	srv.Setenv()
	os.Setenv("THR_PASSWORD", "thr-password-1")
	m := compile(t, fleet)

	clean := applyAndSnapshot(t, srv, srv.URL, m)

	proxy, err := faultproxy.Start(srv.URL, faultproxy.Options{Rate: 0.2, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	throttled := applyAndSnapshot(t, srv, proxy.URL, m)

	calls, faults, by := proxy.Stats()
	t.Logf("through the proxy: %d calls, %d refused (%v)", calls, faults, by)
	if faults < calls/10 || by["503"] == 0 || len(by) < 3 {
		t.Fatalf("the proxy refused %d of %d calls (%v): too few to show anything", faults, calls, by)
	}
	if !reflect.DeepEqual(clean, throttled) {
		t.Fatalf("the final state differs with throttling:\nwithout: %s\nwith:    %s", dump(clean), dump(throttled))
	}
}

// applyAndSnapshot empties the emulator, applies m with every call going
// to endpoint, plans again, and returns what the cloud holds, read
// directly from the emulator.
func applyAndSnapshot(t *testing.T, srv *moto.Server, endpoint string, m *spec.Model) map[string]any {
	t.Helper()
	ctx := context.Background()
	if err := srv.Reset(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ENDPOINT_URL", endpoint)
	b, err := awsprovider.New(ctx, awsprovider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenFile(t.TempDir(), m.Fleet)
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: b}})
	p, err := e.Plan(ctx, m, nil, nil, engine.PlanOptions{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if p.Summary.Create != len(m.Resources) {
		t.Fatalf("plan: %+v, want %d creates", p.Summary, len(m.Resources))
	}
	if _, err := e.Apply(ctx, p, engine.ApplyOptions{Store: store}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	ledger, err := store.LoadLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.Plan(ctx, m, nil, ledger, engine.PlanOptions{})
	if err != nil {
		t.Fatalf("second plan: %v", err)
	}
	if again.HasChanges() {
		t.Fatalf("not converged: %+v", again.Summary)
	}

	// Read the result without the proxy.
	t.Setenv("AWS_ENDPOINT_URL", srv.URL)
	direct, err := awsprovider.New(ctx, awsprovider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{"ledger": len(ledger.Rows)}
	for _, d := range m.Resources {
		drv, _ := direct.Driver(d.Address.Kind)
		r, err := drv.Read(ctx, region, d.Address.Name)
		if err != nil {
			t.Fatalf("read %s: %v", d.Address, err)
		}
		// Canonical and without what differs between two makings of the
		// same resource (ids, URLs, ARNs, times).
		fields := spec.Canon(r.Fields).(map[string]any)
		delete(fields, "subnetId") // the emulator makes new default subnets at each reset
		out[d.Address.String()] = map[string]any{"fields": fields, "owner": r.Owner}
	}
	for _, k := range awsprovider.Kinds() {
		drv, _ := direct.Driver(k)
		rs, err := drv.List(ctx, region)
		if err != nil {
			t.Fatalf("list %s: %v", k, err)
		}
		var names []string
		for _, r := range rs {
			names = append(names, r.Name)
		}
		sort.Strings(names)
		out["list/"+string(k)] = strings.Join(names, ",")
	}
	return out
}

func compile(t *testing.T, doc string) *spec.Model {
	t.Helper()
	d, err := spec.DecodeDocument([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	m, diags := spec.Compile(d)
	if spec.HasErrors(diags) {
		t.Fatalf("%v", diags)
	}
	return m
}

func dump(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
