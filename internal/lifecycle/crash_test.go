package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/infra-iac/infra/internal/faultproxy"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/internal/strike"
	"github.com/infra-iac/infra/internal/testbin"
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

type crashRig struct {
	t     *testing.T
	srv   *moto.Server
	bin   string
	fleet string
}

func newCrashRig(t *testing.T) *crashRig {
	srv := moto.Shared(t)
	srv.Setenv()
	fleet := filepath.Join(t.TempDir(), "fleet.json")
	if err := os.WriteFile(fleet, []byte(crashDoc()), 0o644); err != nil {
		t.Fatal(err)
	}
	return &crashRig{t: t, srv: srv, bin: testbin.Infra(t), fleet: fleet}
}

// infra runs the command against endpoint; it returns the exit code, or
// -1 when the process was killed.
func (r *crashRig) infra(endpoint, stateDir string, started func(*os.Process), args ...string) (int, string) {
	cmd := exec.Command(r.bin, append(args, "--fleet", r.fleet, "--state", stateDir, "--no-color")...)
	cmd.Env = append(os.Environ(), r.srv.Env()...)
	cmd.Env = append(append(cmd.Env, moto.Endpoint(endpoint)...), "CRASH_SECRET=crash-secret-value")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
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
	r.t.Fatal(err)
	return 0, ""
}

// converge runs the one re-run, then checks the audit, an empty plan, and
// that destroy leaves nothing.
func (r *crashRig) converge(what, stateDir string) {
	t := r.t
	t.Helper()
	if code, out := r.infra(r.srv.URL, stateDir, nil, "apply", "--yes"); code != 0 {
		t.Fatalf("%s: the re-run exited %d:\n%s", what, code, out)
	}
	if problems := r.audit(stateDir, true); len(problems) > 0 {
		t.Fatalf("%s: after one re-run:\n%s", what, strings.Join(problems, "\n"))
	}
	if code, out := r.infra(r.srv.URL, stateDir, nil, "plan", "--detailed-exitcode"); code != 0 {
		t.Fatalf("%s: the plan after the re-run exited %d:\n%s", what, code, out)
	}
	if code, out := r.infra(r.srv.URL, stateDir, nil, "destroy", "--yes"); code != 0 {
		t.Fatalf("%s: destroy exited %d:\n%s", what, code, out)
	}
	if problems := r.audit(stateDir, false); len(problems) > 0 {
		t.Fatalf("%s: after destroy:\n%s", what, strings.Join(problems, "\n"))
	}
}

// audit reads the emulator directly and compares it with the document and
// the ledger: with want, every declared resource exists, tagged for the
// fleet and recorded, and nothing else does; without, nothing exists.
func (r *crashRig) audit(stateDir string, want bool) []string {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion("eu-west-3"), config.WithBaseEndpoint(r.srv.URL))
	if err != nil {
		r.t.Fatal(err)
	}
	found := map[string]map[string]string{} // address → tags
	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	buckets, err := s3c.ListBuckets(ctx, &s3.ListBucketsInput{})
	must(r.t, err)
	for _, b := range buckets.Buckets {
		tags := map[string]string{}
		if out, err := s3c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: b.Name}); err == nil {
			tags = tagMap(out.TagSet, func(t s3types.Tag) (*string, *string) { return t.Key, t.Value })
		}
		found["aws/object-store/"+aws.ToString(b.Name)] = tags
	}
	sqsc := sqs.NewFromConfig(cfg)
	queues, err := sqsc.ListQueues(ctx, &sqs.ListQueuesInput{})
	must(r.t, err)
	for _, u := range queues.QueueUrls {
		out, err := sqsc.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(u)})
		must(r.t, err)
		found["aws/queues/"+u[strings.LastIndex(u, "/")+1:]] = out.Tags
	}
	smc := secretsmanager.NewFromConfig(cfg)
	secrets, err := smc.ListSecrets(ctx, &secretsmanager.ListSecretsInput{})
	must(r.t, err)
	for _, s := range secrets.SecretList {
		found["aws/secrets/"+aws.ToString(s.Name)] = tagMap(s.Tags, func(t smtypes.Tag) (*string, *string) { return t.Key, t.Value })
	}
	ec2c := ec2.NewFromConfig(cfg)
	groups, err := ec2c.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
	must(r.t, err)
	for _, g := range groups.SecurityGroups {
		if aws.ToString(g.GroupName) == "default" {
			continue
		}
		found["aws/security-group/"+aws.ToString(g.GroupName)] = tagMap(g.Tags, func(t ec2types.Tag) (*string, *string) { return t.Key, t.Value })
	}
	iamc := iam.NewFromConfig(cfg)
	users, err := iamc.ListUsers(ctx, &iam.ListUsersInput{})
	must(r.t, err)
	for _, u := range users.Users {
		out, err := iamc.ListUserTags(ctx, &iam.ListUserTagsInput{UserName: u.UserName})
		must(r.t, err)
		found["aws/iam/"+aws.ToString(u.UserName)] = tagMap(out.Tags, func(t iamtypes.Tag) (*string, *string) { return t.Key, t.Value })
	}

	var problems []string
	declared := map[string]bool{}
	for _, d := range Compile(r.t, crashDoc()).Resources {
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
		case found[a][spec.OwnershipTagKey] != crashFleet:
			problems = append(problems, fmt.Sprintf("%s: not tagged %s=%s (tags %v)", a, spec.OwnershipTagKey, crashFleet, found[a]))
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
	must(r.t, r.srv.Reset())
	proxy, err := faultproxy.Start(r.srv.URL, faultproxy.Options{})
	must(r.t, err)
	defer proxy.Close()
	dir := r.t.TempDir()
	if code, out := r.infra(proxy.URL, dir, nil, "apply", "--yes"); code != 0 {
		r.t.Fatalf("a clean apply exited %d:\n%s", code, out)
	}
	n := proxy.Calls()
	r.converge("clean", dir)
	return n
}

func TestKillAtEveryRequestOfAnApplyConverges(t *testing.T) {
	r := newCrashRig(t)
	n := r.calls()
	t.Logf("a clean apply of 20 resources makes %d requests", n)
	started := time.Now()
	killed := 0
	for _, k := range strike.Points(t, n) {
		must(t, r.srv.Reset())
		proxy, err := faultproxy.Start(r.srv.URL, faultproxy.Options{})
		must(t, err)
		dir := t.TempDir()
		code, out := r.infra(proxy.URL, dir, func(p *os.Process) {
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

func TestDroppedResponseAtEveryRequestOfAnApplyConverges(t *testing.T) {
	r := newCrashRig(t)
	n := r.calls()
	started := time.Now()
	failed := 0
	ks := strike.Points(t, n)
	for _, k := range ks {
		must(t, r.srv.Reset())
		proxy, err := faultproxy.Start(r.srv.URL, faultproxy.Options{})
		must(t, err)
		proxy.DropResponse(k)
		dir := t.TempDir()
		code, out := r.infra(proxy.URL, dir, nil, "apply", "--yes")
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
