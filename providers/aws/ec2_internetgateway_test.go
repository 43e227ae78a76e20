package aws

import (
	"context"
	"fmt"
	"testing"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

func TestInternetGatewayConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	const vpcs = 5
	n := 0
	conformance(t, b, srv, drivertest.Case{
		Kind: spec.InternetGateway,
		Setup: func(t *testing.T) {
			for i := 0; i < vpcs; i++ {
				makeVPC(t, b, fmt.Sprintf("net-%d", i), fmt.Sprintf("10.%d.0.0/16", i))
			}
			makeVPC(t, b, "moved", "10.99.0.0/16")
		},
		Create: map[string]any{"vpc": "net-0"},
		// A VPC takes one internet gateway: each gateway the suite makes
		// at once goes on a VPC of its own.
		Apart: func(f map[string]any) {
			n++
			f["vpc"] = fmt.Sprintf("net-%d", n%vpcs)
		},
		Updates:  []map[string]any{{"vpc": "moved"}},
		OddNames: []string{"Mixed.Case_name-0", `star*and?mark[x]\`},
	})
}

// A change of VPC moves the gateway, detached then attached: it keeps its
// id. A delete detaches it first, as EC2 demands. (AWS also refuses to
// delete a VPC a gateway is attached to; the emulator deletes it, so
// that is not asserted here.)
func TestInternetGatewayMovesAndDetachesOnDelete(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	ctx := context.Background()
	first := makeVPC(t, b, "first", "10.0.0.0/16")
	second := makeVPC(t, b, "second", "10.1.0.0/16")
	d, _ := b.Driver(spec.InternetGateway)
	tg := providers.Target{Name: "edge", Region: testRegion, Owner: "fleet", Fields: map[string]any{"vpc": "first"}}
	made, err := d.Create(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Delete(ctx, tg) })
	if made.Fields["vpc"] != first.Attributes["vpcId"] {
		t.Fatalf("created on %v, want %s", made.Fields["vpc"], first.Attributes["vpcId"])
	}
	vd, _ := b.Driver(spec.VPC)
	tg.Fields["vpc"] = "second"
	if _, err := d.Update(ctx, tg, []string{providers.InternetGatewayVPC}); err != nil {
		t.Fatal(err)
	}
	got, err := d.Read(ctx, testRegion, "edge")
	if err != nil {
		t.Fatal(err)
	}
	if n := calls.count("DetachInternetGateway"); n != 1 {
		t.Errorf("the move detached %d times, want once", n)
	}
	if got.Fields["vpc"] != second.Attributes["vpcId"] || got.Attributes["internetGatewayId"] != made.Attributes["internetGatewayId"] {
		t.Errorf("after the move: on %v as %s, want on %s as %s", got.Fields["vpc"], got.Attributes["internetGatewayId"],
			second.Attributes["vpcId"], made.Attributes["internetGatewayId"])
	}
	if err := vd.Delete(ctx, providers.Target{Name: "first", Region: testRegion}); err != nil {
		t.Errorf("the VPC the gateway left: %v", err)
	}
	if err := d.Delete(ctx, providers.Target{Name: "edge", Region: testRegion, Attributes: got.Attributes}); err != nil {
		t.Fatal(err)
	}
	if n := calls.count("DetachInternetGateway"); n != 2 {
		t.Errorf("the delete did not detach first (%d detaches in all, want 2)", n)
	}
	if _, err := d.Read(ctx, testRegion, "edge"); errorCode(err) != providers.NotFound {
		t.Errorf("Read after delete = %v, want not found", err)
	}
	if err := vd.Delete(ctx, providers.Target{Name: "second", Region: testRegion}); err != nil {
		t.Errorf("the VPC whose gateway was deleted: %v", err)
	}
}
