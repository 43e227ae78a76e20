package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/infra-iac/infra/internal/faultproxy"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/internal/strike"
	"github.com/infra-iac/infra/internal/testbin"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// The guarantee under a crash at any API call: one re-run leaves every
// resource tagged, recorded and declared, and nothing else; destroy then
// leaves nothing. The process is killed (SIGKILL) at the k-th request of a
// 20-resource apply over five kinds, after the cloud acted on it and
// before the answer arrives, for every k (strike.Points: .ci/run strikes at
// every k, the README's test command at a sample); then the same with the
// response dropped (the process lives and the SDK retries).

const crashFleet = "crash"

func crashDoc() string {
	var rs []string
	for i := 1; i <= 4; i++ {
		rs = append(rs,
			fmt.Sprintf(`{"address": "aws/object-store/crash-assets-%d", "spec": {"versioning": true, "forceDestroy": true, "tags": {"team": "web"}}}`, i),
			fmt.Sprintf(`{"address": "aws/queues/crash-jobs-%d", "spec": {"visibilityTimeoutSec": 45, "tags": {"team": "web"}}}`, i),
			fmt.Sprintf(`{"address": "aws/secrets/crash-key-%d", "spec": {"value": {"fromEnv": "CRASH_SECRET"}, "tags": {"team": "web"}}}`, i),
			fmt.Sprintf(`{"address": "aws/security-group/crash-web-%d", "spec": {"description": "web %d", "ingress": [{"port": 443, "cidr": "10.0.0.0/8"}], "tags": {"team": "web"}}}`, i, i),
			fmt.Sprintf(`{"address": "aws/iam/crash-deployer-%d", "spec": {"policies": ["arn:aws:iam::aws:policy/ReadOnlyAccess"], "tags": {"team": "web"}}}`, i),
		)
	}
	return `{"apiVersion": "infra/v1", "fleet": "` + crashFleet + `", "accounts": {"aws": "123456789012"}, "placement": {"aws": "eu-west-3"}, "resources": [` +
		strings.Join(rs, ",\n") + `]}`
}

// crashCloud is a cloud the crash tests strike: the infra binary run
// against it at an endpoint, what it holds, and a reset to nothing.
type crashCloud interface {
	// doc is the fleet the tests apply.
	doc() string
	// direct is the endpoint of the cloud's APIs without a proxy.
	direct() string
	// infra runs the binary with the APIs at endpoint; it returns the exit
	// code, or -1 when the process was killed, and what it printed.
	infra(endpoint, stateDir string, started func(*os.Process), args ...string) (int, string)
	// inventory is every resource the cloud holds, by address, with the
	// fleet its mark names ("" for none); with complete, also what is
	// missing of what a create writes beside the resource.
	inventory(complete bool) (map[string]string, []string)
	reset()
}

// crashRig strikes at one crash cloud.
type crashRig struct {
	t *testing.T
	c crashCloud
}

// awsCloud is moto.
type awsCloud struct {
	t     *testing.T
	srv   *moto.Server
	bin   string
	fleet string
	text  string
	// baseline is what the listed kinds show in an empty cloud.
	baseline map[string]bool
}

func newCrashRig(t *testing.T, doc string) *crashRig {
	srv := moto.Shared(t)
	srv.Setenv()
	fleet := filepath.Join(t.TempDir(), "fleet.json")
	if err := os.WriteFile(fleet, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return &crashRig{t: t, c: &awsCloud{t: t, srv: srv, bin: testbin.Infra(t), fleet: fleet, text: doc}}
}

func (c *awsCloud) doc() string    { return c.text }
func (c *awsCloud) direct() string { return c.srv.URL }
func (c *awsCloud) reset() {
	must(c.t, c.srv.Reset())
	if c.baseline == nil {
		c.baseline = map[string]bool{}
		for a := range c.listed(context.Background()) {
			c.baseline[a] = true
		}
	}
}

func (c *awsCloud) infra(endpoint, stateDir string, started func(*os.Process), args ...string) (int, string) {
	cmd := exec.Command(c.bin, append(args, "--fleet", c.fleet, "--state", stateDir, "--no-color")...)
	cmd.Env = append(os.Environ(), c.srv.Env()...)
	cmd.Env = append(append(cmd.Env, moto.Endpoint(endpoint)...), "CRASH_SECRET=crash-secret-value", "EXAMPLE_SECRET=example-secret-value")
	return run(c.t, cmd, started)
}

// run runs cmd, handing its process to started once it has started; it
// returns the exit code, or -1 when the process was killed, and what it
// printed.
func run(t *testing.T, cmd *exec.Cmd, started func(*os.Process)) (int, string) {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if started != nil {
		started(cmd.Process)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &exit) && exit.ExitCode() == -1:
		return -1, out.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String()
	}
	t.Fatal(err)
	return 0, ""
}

// converge runs the one re-run, then checks the audit, an empty plan, and
// that destroy leaves nothing.
func (r *crashRig) converge(what, stateDir string) {
	t := r.t
	t.Helper()
	if code, out := r.c.infra(r.c.direct(), stateDir, nil, "apply", "--yes"); code != 0 {
		t.Fatalf("%s: the re-run exited %d:\n%s", what, code, out)
	}
	if problems := r.audit(stateDir, true); len(problems) > 0 {
		t.Fatalf("%s: after one re-run:\n%s", what, strings.Join(problems, "\n"))
	}
	if code, out := r.c.infra(r.c.direct(), stateDir, nil, "plan", "--detailed-exitcode"); code != 0 {
		t.Fatalf("%s: the plan after the re-run exited %d:\n%s", what, code, out)
	}
	if code, out := r.c.infra(r.c.direct(), stateDir, nil, "destroy", "--yes"); code != 0 {
		t.Fatalf("%s: destroy exited %d:\n%s", what, code, out)
	}
	if problems := r.audit(stateDir, false); len(problems) > 0 {
		t.Fatalf("%s: after destroy:\n%s", what, strings.Join(problems, "\n"))
	}
}

// audit compares what the cloud holds with the document and the ledger:
// with want, every declared resource exists, marked for the fleet, whole
// and recorded, and nothing else does; without, nothing exists.
func (r *crashRig) audit(stateDir string, want bool) []string {
	ctx := context.Background()
	found, problems := r.c.inventory(want)
	declared := map[string]bool{}
	for _, d := range Compile(r.t, r.c.doc()).Resources {
		declared[d.Address.String()] = true
	}
	store, err := state.OpenFile(stateDir, crashFleet)
	must(r.t, err)
	ledger, err := store.LoadLedger(ctx)
	if err != nil {
		return []string{fmt.Sprintf("the ledger cannot be read: %v", err)}
	}
	recorded := map[string]bool{}
	for _, row := range ledger.Rows {
		recorded[row.Address().String()] = true
	}
	if len(ledger.Intents) > 0 {
		problems = append(problems, fmt.Sprintf("intents left in the ledger: %v", ledger.Intents))
	}
	var addrs []string
	for a := range found {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	for _, a := range addrs {
		switch {
		case !want:
			problems = append(problems, a+": still exists")
		case !declared[a]:
			problems = append(problems, a+": exists but is not declared")
		case found[a] != crashFleet:
			problems = append(problems, fmt.Sprintf("%s: not marked %s=%s (owner %q)", a, spec.OwnershipTagKey, crashFleet, found[a]))
		case !recorded[a]:
			problems = append(problems, a+": not in the ledger")
		}
	}
	for a := range declared {
		if _, ok := found[a]; want && !ok {
			problems = append(problems, a+": declared but missing")
		}
	}
	for a := range recorded {
		if _, ok := found[a]; !ok {
			problems = append(problems, a+": in the ledger but missing")
		}
	}
	return problems
}

// inventory reads moto directly: buckets, queues, secrets, groups and
// users, with the fleet their tag names; the document's other kinds through
// the drivers (listed).
func (c *awsCloud) inventory(bool) (map[string]string, []string) {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion("eu-west-3"), config.WithBaseEndpoint(c.srv.URL))
	if err != nil {
		c.t.Fatal(err)
	}
	found := map[string]string{}
	owner := func(tags map[string]string) string { return tags[spec.OwnershipTagKey] }
	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	buckets, err := s3c.ListBuckets(ctx, &s3.ListBucketsInput{})
	must(c.t, err)
	for _, b := range buckets.Buckets {
		tags := map[string]string{}
		if out, err := s3c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: b.Name}); err == nil {
			tags = tagMap(out.TagSet, func(t s3types.Tag) (*string, *string) { return t.Key, t.Value })
		}
		found["aws/object-store/"+aws.ToString(b.Name)] = owner(tags)
	}
	sqsc := sqs.NewFromConfig(cfg)
	queues, err := sqsc.ListQueues(ctx, &sqs.ListQueuesInput{})
	must(c.t, err)
	for _, u := range queues.QueueUrls {
		out, err := sqsc.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(u)})
		must(c.t, err)
		found["aws/queues/"+u[strings.LastIndex(u, "/")+1:]] = owner(out.Tags)
	}
	smc := secretsmanager.NewFromConfig(cfg)
	secrets, err := smc.ListSecrets(ctx, &secretsmanager.ListSecretsInput{})
	must(c.t, err)
	for _, s := range secrets.SecretList {
		found["aws/secrets/"+aws.ToString(s.Name)] = owner(tagMap(s.Tags, func(t smtypes.Tag) (*string, *string) { return t.Key, t.Value }))
	}
	ec2c := ec2.NewFromConfig(cfg)
	groups, err := ec2c.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
	must(c.t, err)
	for _, g := range groups.SecurityGroups {
		if aws.ToString(g.GroupName) == "default" {
			continue
		}
		found["aws/security-group/"+aws.ToString(g.GroupName)] = owner(tagMap(g.Tags, func(t ec2types.Tag) (*string, *string) { return t.Key, t.Value }))
	}
	iamc := iam.NewFromConfig(cfg)
	users, err := iamc.ListUsers(ctx, &iam.ListUsersInput{})
	must(c.t, err)
	for _, u := range users.Users {
		out, err := iamc.ListUserTags(ctx, &iam.ListUserTagsInput{UserName: u.UserName})
		must(c.t, err)
		found["aws/iam/"+aws.ToString(u.UserName)] = owner(tagMap(out.Tags, func(t iamtypes.Tag) (*string, *string) { return t.Key, t.Value }))
	}
	// A bucket declared as an s3-bucket is that physical bucket.
	for _, r := range Compile(c.t, c.text).Resources {
		if r.Address.Kind == spec.S3Bucket {
			bucket := "aws/object-store/" + r.Address.Name
			if o, ok := found[bucket]; ok {
				delete(found, bucket)
				found[r.Address.String()] = o
			}
		}
	}
	maps.Copy(found, c.listed(ctx))
	return found, uncompanioned(ctx, c.t, route53.NewFromConfig(cfg))
}

// uncompanioned names each Route 53 record set that lacks the companion
// carrying its mark (_infra-<type>.<name>, or _infra-<type>-wildcard.<parent>
// for a wildcard): the driver reads a record without one as its zone's
// fleet's, so only the cloud itself shows a record left unmarked.
func uncompanioned(ctx context.Context, t *testing.T, c *route53.Client) []string {
	zones, err := c.ListHostedZones(ctx, &route53.ListHostedZonesInput{})
	must(t, err)
	var problems []string
	for _, z := range zones.HostedZones {
		out, err := c.ListResourceRecordSets(ctx, &route53.ListResourceRecordSetsInput{HostedZoneId: z.Id})
		must(t, err)
		held := map[string]bool{}
		for _, rr := range out.ResourceRecordSets {
			held[strings.TrimSuffix(aws.ToString(rr.Name), ".")+" "+string(rr.Type)] = true
		}
		for _, rr := range out.ResourceRecordSets {
			name := strings.TrimSuffix(aws.ToString(rr.Name), ".")
			if rr.Type == r53types.RRTypeSoa || rr.Type == r53types.RRTypeNs || strings.HasPrefix(name, "_infra-") {
				continue
			}
			companion := "_infra-" + strings.ToLower(string(rr.Type)) + "." + name
			if parent, ok := strings.CutPrefix(name, "*."); ok {
				companion = "_infra-" + strings.ToLower(string(rr.Type)) + "-wildcard." + parent
			}
			if !held[companion+" TXT"] {
				problems = append(problems, fmt.Sprintf("%s %s: no companion %s, so unmarked", name, rr.Type, companion))
			}
		}
	}
	return problems
}

// inventoried are the kinds inventory reads with the SDK itself.
var inventoried = map[spec.Kind]bool{spec.ObjectStore: true, spec.S3Bucket: true, spec.Queues: true, spec.Secrets: true,
	spec.SecurityGroup: true, spec.IAM: true}

// listed reads the other kinds the document declares through infra's own
// drivers, each of which the conformance suite holds to the cloud: every
// resource the region holds beyond what it held empty (moto's default VPC),
// with the fleet its mark names.
func (c *awsCloud) listed(ctx context.Context) map[string]string {
	found := map[string]string{}
	b, err := awsprovider.New(ctx, awsprovider.Options{})
	must(c.t, err)
	// As the engine does: the kinds marked by the name prefix (kms-alias)
	// read no owner without the fleet.
	b.SetFleet(crashFleet)
	for _, k := range c.listedKinds() {
		d, _ := b.Driver(k)
		rs, err := d.List(ctx, "eu-west-3")
		must(c.t, err)
		for _, r := range rs {
			a := spec.Address{Provider: spec.AWS, Kind: k, Name: r.Name}.String()
			if c.baseline[a] {
				continue
			}
			got, err := d.Read(ctx, "eu-west-3", r.Name)
			must(c.t, err)
			found[a] = got.Owner
		}
	}
	return found
}

// listedKinds are the kinds of the document inventory does not read itself.
func (c *awsCloud) listedKinds() []spec.Kind {
	seen := map[spec.Kind]bool{}
	var out []spec.Kind
	for _, r := range Compile(c.t, c.text).Resources {
		if k := r.Address.Kind; !inventoried[k] && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// tagMap turns one SDK's tag list into a map.
func tagMap[T any](tags []T, kv func(T) (*string, *string)) map[string]string {
	out := map[string]string{}
	for _, t := range tags {
		k, v := kv(t)
		out[aws.ToString(k)] = aws.ToString(v)
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// calls counts the requests of a clean apply of the fleet.
func (r *crashRig) calls() int {
	r.c.reset()
	proxy, err := faultproxy.Start(r.c.direct(), faultproxy.Options{})
	must(r.t, err)
	defer proxy.Close()
	dir := r.t.TempDir()
	if code, out := r.c.infra(proxy.URL, dir, nil, "apply", "--yes"); code != 0 {
		r.t.Fatalf("a clean apply exited %d:\n%s", code, out)
	}
	n := proxy.Calls()
	r.converge("clean", dir)
	return n
}

// killAtEveryRequest kills an apply at its k-th request, after the cloud
// acted, for every k strike chooses, and has each converge.
func (r *crashRig) killAtEveryRequest() {
	t := r.t
	n := r.calls()
	t.Logf("a clean apply of %d resources makes %d requests", len(Compile(t, r.c.doc()).Resources), n)
	started := time.Now()
	killed := 0
	for _, k := range strike.Points(t, n) {
		r.c.reset()
		proxy, err := faultproxy.Start(r.c.direct(), faultproxy.Options{})
		must(t, err)
		dir := t.TempDir()
		code, out := r.c.infra(proxy.URL, dir, func(p *os.Process) {
			proxy.Hook(k, faultproxy.AfterAnswer, func() { p.Kill() })
		}, "apply", "--yes")
		proxy.Close()
		if code != -1 {
			t.Fatalf("k=%d: the apply was not killed (exit %d):\n%s", k, code, out)
		}
		killed++
		r.converge(fmt.Sprintf("killed at request %d", k), dir)
		if testing.Verbose() {
			t.Logf("k=%d converged (%s so far)", k, time.Since(started).Round(time.Second))
		}
	}
	t.Logf("killed %d of %d applies at their request k; each converged in one re-run (%s)", killed, n, time.Since(started).Round(time.Second))
}

// dropAtEveryRequest drops the answer to an apply's k-th request, after
// the cloud acted, for every k strike chooses, and has each converge.
func (r *crashRig) dropAtEveryRequest() {
	t := r.t
	n := r.calls()
	started := time.Now()
	failed := 0
	ks := strike.Points(t, n)
	for _, k := range ks {
		r.c.reset()
		proxy, err := faultproxy.Start(r.c.direct(), faultproxy.Options{})
		must(t, err)
		proxy.DropResponse(k)
		dir := t.TempDir()
		code, out := r.c.infra(proxy.URL, dir, nil, "apply", "--yes")
		proxy.Close()
		if code != 0 {
			failed++
			t.Logf("k=%d: the apply exited %d:\n%s", k, code, out)
		}
		r.converge(fmt.Sprintf("response %d dropped", k), dir)
		if testing.Verbose() {
			t.Logf("k=%d converged (%s so far)", k, time.Since(started).Round(time.Second))
		}
	}
	t.Logf("dropped the response to request k of %d applies (of %d requests); %d failed and converged on the re-run (%s)", len(ks), n, failed, time.Since(started).Round(time.Second))
}

func TestKillAtEveryRequestOfAnApplyConverges(t *testing.T) {
	newCrashRig(t, crashDoc()).killAtEveryRequest()
}

func TestDroppedResponseAtEveryRequestOfAnApplyConverges(t *testing.T) {
	newCrashRig(t, crashDoc()).dropAtEveryRequest()
}

// The same guarantee for every AWS-local kind, each in a fleet of its row's
// Example (and what it refers to), so that a new kind is struck at every
// request from its row alone, and each test's requests stay few enough to
// strike at every one in CI.
func TestKillAtEveryRequestOfAnApplyOfEachAWSKindConverges(t *testing.T) {
	for _, k := range awsLocalKinds() {
		t.Run(string(k), func(t *testing.T) { newCrashRig(t, exampleDoc(t, k)).killAtEveryRequest() })
	}
}

func TestDroppedResponseAtEveryRequestOfAnApplyOfEachAWSKindConverges(t *testing.T) {
	for _, k := range awsLocalKinds() {
		t.Run(string(k), func(t *testing.T) { newCrashRig(t, exampleDoc(t, k)).dropAtEveryRequest() })
	}
}

// awsLocalKinds are the kinds only AWS offers.
func awsLocalKinds() []spec.Kind {
	var out []spec.Kind
	for _, info := range spec.KindsOf(spec.AWS) {
		if len(info.Providers) == 1 {
			out = append(out, info.Kind)
		}
	}
	return out
}

// exampleDoc is the crash fleet of kind k's example.
func exampleDoc(t *testing.T, k spec.Kind) string {
	b, err := json.Marshal(spec.Document{APIVersion: "infra/v1", Fleet: crashFleet, Accounts: map[spec.Provider]string{spec.AWS: "123456789012"},
		Placement: map[spec.Provider]string{spec.AWS: "eu-west-3"}, Resources: spec.Examples(spec.AWS, crashFleet, k)})
	must(t, err)
	return string(b)
}
