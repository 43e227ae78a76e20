package aws

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/smithy-go"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// EC2's creates answer with what they made, and its deletes take the id
// this run listed (issue 17): a group's create makes no describe, an
// instance's create finds its group by the id the engine hands it and
// does not wait for the instance to run, and neither delete looks
// anything up. What the creates report is what a read says.
func TestEC2WritesWithoutReads(t *testing.T) {
	calls := &callCounter{}
	b, _ := newTestBackend(t, calls.option())
	ctx := providers.WithWant(context.Background(), providers.Want{Fields: map[string]bool{}})
	groups, _ := b.Driver(spec.SecurityGroup)
	instances, _ := b.Driver(spec.AWSInstance)
	tags := map[string]any{"team": "web"}
	group, err := groups.Create(ctx, providers.Target{Name: "nw-web", Region: testRegion, Owner: "shop", Fields: map[string]any{
		"description": "web", "tags": tags, "ingress": []any{map[string]any{"port": 443.0, "cidr": "10.0.0.0/8"}}}})
	if err != nil {
		t.Fatal(err)
	}
	id := group.Attributes["groupId"]
	groupAddr := spec.Address{Provider: spec.AWS, Kind: spec.SecurityGroup, Name: "nw-web"}
	inst, err := instances.Create(ctx, providers.Target{Name: "nw-web-1", Region: testRegion, Owner: "shop",
		Identities: map[spec.Address]string{groupAddr: id},
		Fields:     map[string]any{"imageId": motoAMI1, "instanceType": "t3.micro", "securityGroup": "nw-web", "tags": tags}})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"DescribeSecurityGroups", "DescribeInstances"} {
		if n := calls.count(op); n != 0 {
			t.Errorf("the creates called %s %d times", op, n)
		}
	}
	readGroup, err := groups.Read(context.Background(), testRegion, "nw-web")
	if err != nil {
		t.Fatal(err)
	}
	readInst, err := instances.Read(context.Background(), testRegion, "nw-web-1")
	if err != nil {
		t.Fatal(err)
	}
	// A group that declares no vpc is in the default VPC, EC2's to say.
	sameAsRead(t, "group", group, readGroup, "vpcId", "vpc")
	sameAsRead(t, "instance", inst, readInst, "state")
	if readInst.Fields["securityGroup"] != id {
		t.Errorf("the instance is on %v, want the group's id %s", readInst.Fields["securityGroup"], id)
	}

	before := calls.total()
	if err := instances.Delete(ctx, providers.Target{Name: "nw-web-1", Region: testRegion, Attributes: readInst.Attributes}); err != nil {
		t.Fatal(err)
	}
	if err := groups.Delete(ctx, providers.Target{Name: "nw-web", Region: testRegion, Attributes: readGroup.Attributes}); err != nil {
		t.Fatal(err)
	}
	if n := calls.total() - before; n != 2 || calls.count("TerminateInstances") != 1 || calls.count("DeleteSecurityGroup") != 1 {
		t.Errorf("the deletes made %d calls, want TerminateInstances and DeleteSecurityGroup alone", n)
	}
	if _, err := groups.Read(context.Background(), testRegion, "nw-web"); providers.CodeOf(b, err) != providers.NotFound {
		t.Errorf("the group is still there: %v", err)
	}
}

// sameAsRead checks that what a create reported is what a read says,
// field by field and attribute by attribute, except what only a later read
// knows (a VPC EC2 chose, a state that moved on): a create may leave such
// a field unreported (unknown, never drift).
func sameAsRead(t *testing.T, what string, made, read providers.Resource, later ...string) {
	t.Helper()
	for name, v := range read.Fields {
		if _, reported := made.Fields[name]; !reported && slices.Contains(later, name) {
			continue
		}
		if !reflect.DeepEqual(spec.Canon(made.Fields[name]), spec.Canon(v)) {
			t.Errorf("%s: create reports %s = %v, a read %v", what, name, made.Fields[name], v)
		}
	}
	for name, v := range read.Attributes {
		if made.Attributes[name] != v && !slices.Contains(later, name) {
			t.Errorf("%s: create reports attribute %s = %q, a read %q", what, name, made.Attributes[name], v)
		}
	}
	if made.Owner != read.Owner || made.Name != read.Name {
		t.Errorf("%s: create reports %s owned by %q, a read %s by %q", what, made.Name, made.Owner, read.Name, read.Owner)
	}
}

// A group whose instance is still terminating is refused by EC2 with
// DependencyViolation, since an instance's delete does not wait. The
// group's delete then waits for its instances to terminate and deletes
// again. moto never refuses a group in use, so a proxy in front of it
// answers the first DeleteSecurityGroup as EC2 does while the instance
// still runs, and the test terminates the instance a moment later.
func TestSecurityGroupDeleteWaitsForItsInstances(t *testing.T) {
	b, calls, refused := refusingGroupDeletes(t, 1)
	ctx := context.Background()
	groups, _ := b.Driver(spec.SecurityGroup)
	groups.(*securityGroups).pollDelay = 200 * time.Millisecond
	instances, _ := b.Driver(spec.AWSInstance)
	group, err := groups.Create(ctx, providers.Target{Name: "dv-web", Region: testRegion, Owner: "shop", Fields: map[string]any{"description": "web"}})
	if err != nil {
		t.Fatal(err)
	}
	inst, err := instances.Create(ctx, providers.Target{Name: "dv-web-1", Region: testRegion, Owner: "shop",
		Fields: map[string]any{"imageId": motoAMI1, "instanceType": "t3.micro", "securityGroup": "dv-web"}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- groups.Delete(ctx, providers.Target{Name: "dv-web", Region: testRegion, Attributes: group.Attributes})
	}()
	// The delete is waiting for the instance, not failing.
	select {
	case err := <-done:
		t.Fatalf("the delete returned before the instance terminated: %v", err)
	case <-time.After(time.Second):
	}
	if err := instances.Delete(ctx, providers.Target{Name: "dv-web-1", Region: testRegion, Attributes: inst.Attributes}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("delete after the wait: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the delete did not end after the instance terminated")
	}
	if refused.Load() != 1 || calls.count("DeleteSecurityGroup") != 2 {
		t.Errorf("DeleteSecurityGroup sent %d times (%d refused), want the refused one and one after the wait", calls.count("DeleteSecurityGroup"), refused.Load())
	}
	if _, err := groups.Read(ctx, testRegion, "dv-web"); providers.CodeOf(b, err) != providers.NotFound {
		t.Errorf("the group is still there: %v", err)
	}
}

// An instance EC2 no longer knows of (terminated long enough ago to be
// purged, or not yet visible by id) holds no group: the waiter's
// InvalidInstanceID.NotFound is the wait done, and the group is deleted
// again. Returned, that NotFound of an instance read as the group gone,
// and the engine recorded a group deleted that was still there. moto
// keeps terminated instances, so the test answers the waiter's describe
// as EC2 would once the instance is gone.
func TestSecurityGroupDeleteWhenItsInstanceIsUnknown(t *testing.T) {
	var purged bool // from the group's delete on
	unknown := 0
	b, calls, refused := refusingGroupDeletes(t, 1, before("DescribeInstances", func(in any) error {
		if !purged || len(in.(*ec2.DescribeInstancesInput).InstanceIds) == 0 {
			return nil // the create's, or the filtered listing of the group's instances
		}
		unknown++
		return &smithy.GenericAPIError{Code: "InvalidInstanceID.NotFound", Message: "The instance IDs do not exist"}
	}))
	ctx := context.Background()
	groups, _ := b.Driver(spec.SecurityGroup)
	instances, _ := b.Driver(spec.AWSInstance)
	group, err := groups.Create(ctx, providers.Target{Name: "dv-purged", Region: testRegion, Owner: "shop", Fields: map[string]any{"description": "purged"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := instances.Create(ctx, providers.Target{Name: "dv-purged-1", Region: testRegion, Owner: "shop",
		Fields: map[string]any{"imageId": motoAMI1, "instanceType": "t3.micro", "securityGroup": "dv-purged"}}); err != nil {
		t.Fatal(err)
	}
	purged = true
	if err := groups.Delete(ctx, providers.Target{Name: "dv-purged", Region: testRegion, Attributes: group.Attributes}); err != nil {
		t.Fatalf("delete: %v (code %s), want the group deleted", err, b.ErrorCode(err))
	}
	if unknown == 0 || refused.Load() != 1 || calls.count("DeleteSecurityGroup") != 2 {
		t.Errorf("the waiter met an unknown instance %d times; DeleteSecurityGroup sent %d times (%d refused): want the refused one and one after the wait",
			unknown, calls.count("DeleteSecurityGroup"), refused.Load())
	}
	if _, err := groups.Read(ctx, testRegion, "dv-purged"); providers.CodeOf(b, err) != providers.NotFound {
		t.Errorf("the group is still there: %v", err)
	}
}

// A group refused for something other than an instance (another group's
// rule, a network interface) is not waited for: the refusal stands as
// Conflict, for the engine to retry once the dependants are gone, after
// one look for instances.
func TestSecurityGroupDeleteRefusedWithoutInstancesIsAConflict(t *testing.T) {
	b, calls, refused := refusingGroupDeletes(t, 1000)
	ctx := context.Background()
	groups, _ := b.Driver(spec.SecurityGroup)
	group, err := groups.Create(ctx, providers.Target{Name: "dv-held", Region: testRegion, Owner: "shop", Fields: map[string]any{"description": "held"}})
	if err != nil {
		t.Fatal(err)
	}
	err = groups.Delete(ctx, providers.Target{Name: "dv-held", Region: testRegion, Attributes: group.Attributes})
	if providers.CodeOf(b, err) != providers.Conflict {
		t.Fatalf("delete of a group held by no instance: %v, want Conflict", err)
	}
	if refused.Load() != 1 || calls.count("DescribeInstances") != 1 {
		t.Errorf("DeleteSecurityGroup refused %d times, DescribeInstances %d: want 1 and 1", refused.Load(), calls.count("DescribeInstances"))
	}
}

// refusingGroupDeletes is a backend whose first n DeleteSecurityGroup
// calls a proxy in front of the emulator answers as EC2 answers a group
// in use (moto never does); the rest reach the emulator. opts may add SDK
// middleware.
func refusingGroupDeletes(t *testing.T, n int32, opts ...func(*config.LoadOptions) error) (*Backend, *callCounter, *atomic.Int32) {
	t.Helper()
	_, srv := newTestBackend(t)
	target, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	refused := &atomic.Int32{}
	forward := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		if strings.Contains(string(body), "Action=DeleteSecurityGroup") && refused.Load() < n {
			refused.Add(1)
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `<Response><Errors><Error><Code>DependencyViolation</Code><Message>resource sg has a dependent object</Message></Error></Errors><RequestID>1</RequestID></Response>`)
			return
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	calls := &callCounter{}
	opts = append(opts, calls.option(), config.WithBaseEndpoint(proxy.URL))
	b, err := New(context.Background(), Options{ConfigOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	return b, calls, refused
}
