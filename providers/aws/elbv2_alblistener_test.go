package aws

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"hash/fnv"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

// listenerEstate makes what listeners refer to: two load balancers and two
// target groups in one VPC, through their drivers, owned by the suite's
// fleet.
func listenerEstate(t *testing.T, b *Backend) {
	t.Helper()
	ctx := context.Background()
	net := makeNet(t, b, "lis", "10.40.0.0/16", "10.40.1.0/24", "10.40.2.0/24", "10.40.3.0/24")
	mk := func(k spec.Kind, name string, fields map[string]any) {
		d, _ := b.Driver(k)
		if _, err := d.Create(ctx, providers.Target{Name: name, Region: testRegion, Owner: "conformance", Fields: fields}); err != nil {
			t.Fatal(err)
		}
	}
	for _, lb := range []string{"lis-one", "lis-two"} {
		mk(spec.ALB, lb, map[string]any{"subnets": net.zones("ab")})
	}
	for _, tg := range []string{"lis-web", "lis-api"} {
		mk(spec.ALBTargetGroup, tg, map[string]any{"vpc": net.vpc, "protocol": "HTTP", "port": 8080.0})
	}
}

// serverCertificate uploads a self-signed certificate to IAM, which an
// HTTPS listener takes as its certificate, and returns its ARN.
func serverCertificate(t *testing.T, b *Backend, name string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + ".example"},
		DNSNames: []string{name + ".example"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	out, err := iam.NewFromConfig(b.cfg).UploadServerCertificate(context.Background(), &iam.UploadServerCertificateInput{
		ServerCertificateName: aws.String(name),
		CertificateBody:       aws.String(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))),
		PrivateKey:            aws.String(string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})))})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.ServerCertificateMetadata.Arn)
}

func TestALBListenerConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	listenerEstate(t, b)
	one, two := serverCertificate(t, b, "lis-one"), serverCertificate(t, b, "lis-two")
	// The suite makes several listeners at once from one Create (Delete,
	// List), and a load balancer's port takes one listener: each gets a
	// port of its own from its name, where the Create's 80 stands.
	conformance(t, netReads{b}, srv, drivertest.Case{
		Kind:   spec.ALBListener,
		Create: map[string]any{"loadBalancer": "lis-one", "port": 80.0, "targetGroup": "lis-web"},
		Vary: func(t *testing.T, name string, fields map[string]any) {
			if fields["port"] == 80.0 {
				h := fnv.New32a()
				h.Write([]byte(name))
				fields["port"] = float64(10000 + h.Sum32()%50000)
			}
		},
		Updates: []map[string]any{
			{"port": 8080.0},
			{"targetGroup": "lis-api"},
			{"protocol": "HTTPS", "certificateArn": one, "port": 443.0},
			{"certificateArn": two},
		},
		Replaces: []map[string]any{{"loadBalancer": "lis-two"}},
		OddNames: []string{"web listener: 80 (HTTP) / öß", strings.Repeat("l", 256)},
	})
}

// A listener found by name twice is refused, never guessed at.
func TestALBListenerRefusesTwoOfOneName(t *testing.T) {
	b, _ := newTestBackend(t)
	listenerEstate(t, b)
	d, _ := b.Driver(spec.ALBListener)
	ctx := context.Background()
	for i, lb := range []string{"lis-one", "lis-two"} {
		if _, err := d.Create(ctx, providers.Target{Name: "twin", Region: testRegion, Owner: "fleet",
			Fields: map[string]any{"loadBalancer": lb, "port": float64(80 + i), "targetGroup": "lis-web"}}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := d.Read(ctx, testRegion, "twin")
	if errorCode(err) != providers.Conflict || !strings.Contains(err.Error(), `2 of them in eu-west-3 carry Name="twin"`) {
		t.Errorf("Read(twin) = %v (code %s), want a refusal naming both", err, errorCode(err))
	}
}

// A default action set outside infra (a redirect) is drift, which an update
// of targetGroup puts back to the forward.
func TestALBListenerForwardsAgainAfterAnOutsideChange(t *testing.T) {
	b, _ := newTestBackend(t)
	listenerEstate(t, b)
	d, _ := b.Driver(spec.ALBListener)
	ctx := context.Background()
	tg := providers.Target{Name: "web", Region: testRegion, Owner: "fleet",
		Fields: map[string]any{"loadBalancer": "lis-one", "port": 80.0, "targetGroup": "lis-web"}}
	made, err := d.Create(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	c := d.(*albListeners).elb.get(testRegion)
	_, err = c.ModifyListener(ctx, &elbv2.ModifyListenerInput{ListenerArn: aws.String(made.Attributes["arn"]),
		DefaultActions: []elbtypes.Action{{Type: elbtypes.ActionTypeEnumRedirect, RedirectConfig: &elbtypes.RedirectActionConfig{
			Protocol: aws.String("HTTPS"), Port: aws.String("443"), StatusCode: elbtypes.RedirectActionStatusCodeEnumHttp301}}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.Read(ctx, testRegion, "web")
	if err != nil || r.Fields["targetGroup"] != "(actions: redirect)" {
		t.Fatalf("after a redirect was set: %v, %v", r.Fields["targetGroup"], err)
	}
	r, err = d.Update(ctx, tg, []string{"targetGroup"})
	if err != nil || r.Fields["targetGroup"] != made.Fields["targetGroup"] {
		t.Errorf("Update = %v, %v; want the forward to %v", r.Fields["targetGroup"], err, made.Fields["targetGroup"])
	}
}

// What CreateListener's reference refuses is refused before any call.
func TestALBListenerRefusesBadValuesBeforeAnyCall(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.ALBListener)
	base := func(extra map[string]any) map[string]any {
		f := map[string]any{"loadBalancer": "lb", "port": 443.0, "targetGroup": "tg"}
		for k, v := range extra {
			f[k] = v
		}
		return f
	}
	wantRefused(t, d, []refusal{
		{"web", base(map[string]any{"port": 70000.0}), "from 1 to 65535"},
		{"web", base(map[string]any{"protocol": "TCP"}), "listens on HTTP or HTTPS"},
		{"web", base(map[string]any{"protocol": "HTTPS"}), "an HTTPS listener needs certificateArn"},
		{"web", base(map[string]any{"certificateArn": "arn:aws:acm:eu-west-3:123456789012:certificate/x"}), "certificateArn is for an HTTPS listener"},
		{"web", base(map[string]any{"tags": map[string]any{"Name": "other"}}), "the Name tag is the listener's name"},
		{strings.Repeat("l", 257), base(nil), "1 to 256 characters"},
	})
	if n := calls.total(); n != 0 {
		t.Errorf("%d calls were made", n)
	}
}

// ELBv2 keeps one listener to a port: a CreateListener that repeats one's
// settings gets that listener (an SDK retry of a lost answer makes
// nothing), one that differs is DuplicateListener. The harness holds moto
// to it; the driver relies on it.
func TestALBListenerPortTakesOneListener(t *testing.T) {
	b, _ := newTestBackend(t)
	listenerEstate(t, b)
	d, _ := b.Driver(spec.ALBListener)
	ctx := context.Background()
	made, err := d.Create(ctx, providers.Target{Name: "once", Region: testRegion, Owner: "fleet",
		Fields: map[string]any{"loadBalancer": "lis-one", "port": 80.0, "targetGroup": "lis-web"}})
	if err != nil {
		t.Fatal(err)
	}
	c := d.(*albListeners).elb.get(testRegion)
	lbs, err := c.DescribeListeners(ctx, &elbv2.DescribeListenersInput{ListenerArns: []string{made.Attributes["arn"]}})
	if err != nil || len(lbs.Listeners) != 1 {
		t.Fatalf("describe: %v", err)
	}
	l := lbs.Listeners[0]
	again, err := c.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: l.LoadBalancerArn, Port: l.Port,
		Protocol: l.Protocol, DefaultActions: l.DefaultActions})
	if err != nil || aws.ToString(again.Listeners[0].ListenerArn) != made.Attributes["arn"] {
		t.Errorf("the same settings again: %v, %v; want listener %s", again, err, made.Attributes["arn"])
	}
	_, err = c.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: l.LoadBalancerArn, Port: l.Port,
		Protocol: l.Protocol, DefaultActions: []elbtypes.Action{{Type: elbtypes.ActionTypeEnumRedirect, RedirectConfig: &elbtypes.RedirectActionConfig{
			Protocol: aws.String("HTTPS"), Port: aws.String("443"), StatusCode: elbtypes.RedirectActionStatusCodeEnumHttp301}}}})
	if !isCode(err, "DuplicateListener") {
		t.Errorf("other settings on the port: %v, want DuplicateListener", err)
	}
}
