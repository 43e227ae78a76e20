package sweep_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/smithy-go/middleware"

	"github.com/infra-iac/infra/cli"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/internal/testbin"
	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/sweep"
)

// These tests run the sweep against moto_server: the acceptance list of the
// sweep issue, mostly through the real infra binary, as the scheduled
// workflow runs it.

func TestMain(m *testing.M) { moto.Main(m, testbin.Remove) }

// newMoto wipes the shared emulator and returns a backend on it, for making
// the resources a test sweeps.
func newMoto(t *testing.T, opts ...func(*config.LoadOptions) error) (*awsprovider.Backend, *moto.Server) {
	t.Helper()
	srv := moto.Fresh(t)
	b, err := awsprovider.New(context.Background(), awsprovider.Options{ConfigOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	return b, srv
}

// create makes one resource through infra's own driver; owner "" leaves it
// untagged. An IAM user gets an attached managed policy.
func create(t testing.TB, b providers.Backend, k spec.Kind, name, owner string) {
	t.Helper()
	fields := fieldsFor(k)
	if k == spec.IAM {
		fields["policies"] = []any{"arn:aws:iam::aws:policy/ReadOnlyAccess"}
	}
	d, _ := b.Driver(k)
	if _, err := d.Create(context.Background(), providers.Target{Name: name, Region: region, Fields: fields, Owner: owner}); err != nil {
		t.Fatalf("create %s/%s: %v", k, name, err)
	}
}

// fieldsFor is the least a kind's create needs.
func fieldsFor(k spec.Kind) map[string]any {
	fields := map[string]any{}
	switch k {
	case spec.Secrets:
		fields["value"] = spec.NewSensitive("debris")
	case spec.SecurityGroup:
		// A user tag: the driver sends an empty tag specification
		// otherwise, which EC2 refuses.
		fields["description"] = "debris"
		fields["tags"] = map[string]any{"purpose": "debris"}
	}
	return fields
}

// names lists what a kind holds in the emulator.
func names(t *testing.T, b providers.Backend, k spec.Kind) []string {
	t.Helper()
	d, _ := b.Driver(k)
	rs, err := d.List(context.Background(), region)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

type result struct {
	code           int
	stdout, stderr string
}

// contains fails the test for each want that text (named what) lacks.
func contains(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s has no %q:\n%s", what, w, text)
		}
	}
}

// exits fails the test unless the run exited with code.
func (r result) exits(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\n%s\n%s", r.code, code, r.stdout, r.stderr)
	}
}

// infra runs the real binary against endpoint (the emulator, or a proxy in
// front of it).
func infra(t *testing.T, srv *moto.Server, endpoint string, args ...string) result {
	t.Helper()
	return infraEnv(t, srv, moto.Endpoint(endpoint), args...)
}

// infraEnv runs the real binary against the emulator with extra
// environment variables.
func infraEnv(t *testing.T, srv *moto.Server, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(testbin.Infra(t), args...)
	cmd.Env = append(append(append(os.Environ(), srv.Env()...), "NO_COLOR=1"), env...)
	// An entry without "=" unsets the variable.
	for _, kv := range env {
		if !strings.Contains(kv, "=") {
			cmd.Env = slices.DeleteFunc(cmd.Env, func(e string) bool { return strings.HasPrefix(e, kv+"=") || e == kv })
		}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

func TestMotoSevenNames(t *testing.T) {
	b, srv := newMoto(t)
	kinds := []spec.Kind{spec.ObjectStore, spec.Queues, spec.Secrets}
	for _, k := range kinds {
		for _, n := range sevenNames {
			if k == spec.ObjectStore && n == "CI-TESTS-d" {
				continue // S3 refuses capitals in a bucket name
			}
			create(t, b, k, n, ownerOf(n))
		}
	}
	args := []string{"sweep", "--prefix", "ci-tests-", "--region", region, "--kind", "object-store", "--kind", "queues", "--kind", "secrets"}
	dry := infra(t, srv, srv.URL, args...)
	dry.exits(t, 0)
	t.Logf("dry run:\n%s", dry.stdout)
	contains(t, "the dry run", dry.stdout,
		"aws: 123456789012 in eu-west-3\n",
		"would delete 6\n",
		"aws/queues/archive-of-ci-tests-c", "never a substring",
		"aws/secrets/CI-TESTS-d", "case-sensitive",
		"aws/object-store/production-billing",
		"aws/secrets/ci-tests-old-fleet-thing", "tagged managed-by-infra=shop")
	for _, k := range kinds {
		if got := len(names(t, b, k)); got < 6 {
			t.Fatalf("the dry run deleted: %s has %d", k, got)
		}
	}

	del := infra(t, srv, srv.URL, append(args, "--yes")...)
	del.exits(t, 0)
	if !strings.HasSuffix(del.stdout, "deleted 6 of 6 in 1 round(s)\n") {
		t.Errorf("stdout:\n%s", del.stdout)
	}
	for _, k := range kinds {
		left := " " + strings.Join(names(t, b, k), " ") + " "
		for _, n := range sevenNames {
			if k == spec.ObjectStore && n == "CI-TESTS-d" {
				continue
			}
			gone := n == "ci-tests-a" || n == "ci-tests-b"
			if strings.Contains(left, " "+n+" ") == gone {
				t.Errorf("%s/%s: present=%v after the sweep", k, n, !gone)
			}
		}
	}
	again := infra(t, srv, srv.URL, append(args, "--yes")...)
	if again.code != 0 || !strings.HasSuffix(again.stdout, "nothing to sweep — the account is clean\n") {
		t.Errorf("second sweep: exit %d\n%s", again.code, again.stdout)
	}
}

// TestMotoDefaultClouds: without --region, every cloud is tried in its own
// configured region; one without credentials is reported as not swept,
// and the others are swept.
func TestMotoDefaultClouds(t *testing.T) {
	b, srv := newMoto(t)
	create(t, b, spec.Queues, "ci-tests-q", "")
	noScaleway := []string{"SCW_CONFIG_PATH=" + filepath.Join(t.TempDir(), "none.yaml"), "SCW_ACCESS_KEY", "SCW_SECRET_KEY", "SCW_DEFAULT_PROJECT_ID"}
	r := infraEnv(t, srv, noScaleway, "sweep", "--prefix", "ci-tests-", "--kind", "queues")
	r.exits(t, 0)
	contains(t, "stdout", r.stdout, "aws: 123456789012 in eu-west-3\n", "scaleway: not swept: ", "aws/queues/ci-tests-q", "would delete 1\n")

	// With no AWS credentials either, there is nothing to sweep: an error,
	// never a clean account.
	r = infraEnv(t, srv, append(noScaleway, "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY="), "sweep", "--prefix", "ci-tests-", "--kind", "queues")
	r.exits(t, 1)
	contains(t, "stderr", r.stderr, "error: no cloud to sweep (aws: no AWS credentials were found")
}

// faultProxy stands in front of moto and answers chosen calls itself, to
// make the refusals moto does not (it never refuses a delete for a
// dependant the driver does not clear).
type faultProxy struct {
	*httptest.Server
	mu    sync.Mutex
	calls map[string]int // operation -> count, all forwarded or answered
	rule  func(p *faultProxy, op string, form url.Values) (int, string, bool)
	state map[string]int
}

func newFaultProxy(t *testing.T, target string, rule func(p *faultProxy, op string, form url.Values) (int, string, bool)) *faultProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{calls: map[string]int{}, rule: rule, state: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		op := r.Method + " " + r.URL.Path
		form, _ := url.ParseQuery(string(body))
		if target := r.Header.Get("X-Amz-Target"); target != "" {
			op = target[strings.LastIndex(target, ".")+1:]
		} else if a := form.Get("Action"); a != "" {
			op = a
		}
		p.mu.Lock()
		p.calls[op]++
		status, answer, hit := 0, "", false
		if p.rule != nil {
			status, answer, hit = p.rule(p, op, form)
		}
		p.mu.Unlock()
		if hit {
			w.Header().Set("Content-Type", "text/xml")
			w.WriteHeader(status)
			io.WriteString(w, answer)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func queryError(code, message string) string {
	return `<ErrorResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/"><Error><Type>Sender</Type><Code>` + code +
		`</Code><Message>` + message + `</Message></Error><RequestId>fault-proxy</RequestId></ErrorResponse>`
}

// TestMotoDependencyRounds: two users share an attached policy. IAM refuses
// to delete ci-tests-u1 while the policy's other dependant, ci-tests-u2,
// still exists (the proxy plays IAM's part; moto's driver path detaches
// first and never refuses). Whatever round 1 refuses goes in a later round,
// and the run exits 0.
func TestMotoDependencyRounds(t *testing.T) {
	b, srv := newMoto(t)
	create(t, b, spec.IAM, "ci-tests-u1", "")
	create(t, b, spec.IAM, "ci-tests-u2", "")
	create(t, b, spec.IAM, "production-deployer", "")
	create(t, b, spec.Queues, "ci-tests-q", "")
	proxy := newFaultProxy(t, srv.URL, func(p *faultProxy, op string, form url.Values) (int, string, bool) {
		if op != "DeleteUser" {
			return 0, "", false
		}
		switch form.Get("UserName") {
		case "ci-tests-u2":
			p.state["u2 deleted"]++
		case "ci-tests-u1":
			// Refused twice (the driver's own try, then its try after
			// clearing the user), and for as long as u2 exists.
			if p.state["u1 refused"] < 2 || p.state["u2 deleted"] == 0 {
				p.state["u1 refused"]++
				return http.StatusConflict, queryError("DeleteConflict", "Cannot delete entity, must detach all policies first."), true
			}
		}
		return 0, "", false
	})
	r := infra(t, srv, proxy.URL, "sweep", "--prefix", "ci-tests-", "--region", region, "--kind", "iam", "--kind", "queues", "--yes")
	r.exits(t, 0)
	t.Logf("stderr:\n%s", r.stderr)
	contains(t, "stderr", r.stderr,
		"delete aws/iam/ci-tests-u1 ... refused for now, will retry: aws/iam/ci-tests-u1: delete: conflict: ",
		"DeleteConflict: Cannot delete entity, must detach all policies first.",
		"round 2: retrying 1 refused delete(s)")
	contains(t, "stdout", r.stdout, "deleted 3 of 3 in 2 round(s)\n")
	if got := names(t, b, spec.IAM); len(got) != 1 || got[0] != "production-deployer" {
		t.Errorf("iam users left: %v", got)
	}
	// u2 twice (moto refuses a user with a policy attached; the driver
	// then detaches it and deletes again); u1 twice in round 1 (refused,
	// then refused again after clearing), once in round 2.
	if proxy.calls["DeleteUser"] != 5 {
		t.Errorf("DeleteUser calls: %d", proxy.calls["DeleteUser"])
	}
}

// TestMotoPermanentRefusal: a bucket with an object in it is refused in
// every round (BucketNotEmpty; the sweep never empties a bucket). The run
// exits 1 and names the survivor in S3's words.
func TestMotoPermanentRefusal(t *testing.T) {
	b, srv := newMoto(t)
	create(t, b, spec.ObjectStore, "ci-tests-full", "")
	create(t, b, spec.Queues, "ci-tests-q", "")
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/ci-tests-full/report.txt", strings.NewReader("data"))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("put object: %v %v", err, resp)
	}
	r := infra(t, srv, srv.URL, "sweep", "--prefix", "ci-tests-", "--region", region, "--kind", "object-store", "--kind", "queues", "--yes")
	r.exits(t, 1)
	t.Logf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	contains(t, "stdout", r.stdout,
		"left 1:\n  aws/object-store/ci-tests-full (eu-west-3): aws/object-store/ci-tests-full: delete: conflict: ",
		"api error BucketNotEmpty: The bucket you tried to delete is not empty",
		"deleted 1 of 2 in 2 round(s); 1 left\n")
	contains(t, "stderr", r.stderr, "error: 1 resource(s) with the prefix ci-tests- are left: aws/object-store/ci-tests-full")
}

// TestMotoOlderThan: a resource made a minute ago is kept by --older-than
// 2h, whichever way its kind reports its creation time (the bucket listing,
// the queue's attributes, the secret listing).
func TestMotoOlderThan(t *testing.T) {
	b, srv := newMoto(t)
	for _, k := range []spec.Kind{spec.ObjectStore, spec.Queues, spec.Secrets} {
		create(t, b, k, "ci-tests-fresh", "")
	}
	r := infra(t, srv, srv.URL, "sweep", "--prefix", "ci-tests-", "--older-than", "2h", "--region", region,
		"--kind", "object-store", "--kind", "queues", "--kind", "secrets", "--yes")
	r.exits(t, 0)
	for _, k := range []string{"object-store", "queues", "secrets"} {
		if !strings.Contains(r.stdout, "aws/"+k+"/ci-tests-fresh") {
			t.Errorf("%s not reported:\n%s", k, r.stdout)
		}
	}
	if strings.Count(r.stdout, "not older than 2h") != 3 || !strings.HasSuffix(r.stdout, "nothing to sweep — the account is clean\n") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	for _, k := range []spec.Kind{spec.ObjectStore, spec.Queues, spec.Secrets} {
		if got := names(t, b, k); len(got) != 1 {
			t.Errorf("%s: %v", k, got)
		}
	}
}

// TestMotoRefusedListing: a listing AWS refuses (AccessDenied) or throttles
// past the SDK's adaptive retries fails the sweep; it is never "clean".
// AccessDenied runs the binary. A throttle runs in-process with the SDK's
// attempts cut to 2: the binary makes 10 with adaptive back-off (about a
// minute against this proxy), and the point is what happens after the last.
func TestMotoRefusedListing(t *testing.T) {
	b, srv := newMoto(t)
	create(t, b, spec.IAM, "ci-tests-u", "")
	args := []string{"sweep", "--prefix", "ci-tests-", "--region", region, "--kind", "iam", "--kind", "queues", "--yes"}
	for _, code := range []string{"AccessDenied", "Throttling"} {
		proxy := newFaultProxy(t, srv.URL, func(p *faultProxy, op string, form url.Values) (int, string, bool) {
			if op == "ListUsers" {
				return http.StatusBadRequest, queryError(code, "refused by the fault proxy"), true
			}
			return 0, "", false
		})
		var r result
		if code == "AccessDenied" {
			r = infra(t, srv, proxy.URL, args...)
		} else {
			// Throttling is retried for the whole retry budget: a short one
			// ends the same way, sooner.
			t.Setenv("INFRA_RETRY_BUDGET", "2s")
			r = infraInProcess(t, proxy.URL, []func(*config.LoadOptions) error{config.WithRetryMaxAttempts(2)}, args...)
		}
		t.Logf("%s: exit %d after %d ListUsers call(s)", code, r.code, proxy.calls["ListUsers"])
		if r.code != 1 || strings.Contains(r.stdout, "clean") {
			t.Fatalf("%s: exit %d\n%s\n%s", code, r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, "could not list or read 1:\n  aws/iam in eu-west-3: list: ") || !strings.Contains(r.stdout, code+": refused by the fault proxy") ||
			!strings.HasSuffix(r.stdout, "the sweep is incomplete: 1 listing(s) or read(s) failed\n") {
			t.Errorf("%s: stdout:\n%s", code, r.stdout)
		}
		if got := names(t, b, spec.IAM); len(got) != 1 {
			t.Errorf("%s: iam users: %v", code, got)
		}
	}
}

// infraInProcess runs the CLI in this process with an AWS backend on
// endpoint, made with extra SDK options.
func infraInProcess(t *testing.T, endpoint string, sdk []func(*config.LoadOptions) error, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	f := cli.DefaultFactory()
	f.IO = cli.Test(strings.NewReader(""), &out, &errb)
	f.Backends = func(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error) {
		b, err := awsprovider.New(ctx, awsprovider.Options{ConfigOptions: append(sdk, config.WithBaseEndpoint(endpoint))})
		return map[spec.Provider]providers.Backend{spec.AWS: b}, map[spec.Provider]string{}, err
	}
	code := cli.RunWith(f, args, nil)
	return result{code, out.String(), errb.String()}
}

// callCounter counts SDK calls by service and operation, one per attempt
// (it sits after the retry middleware), so a throttle retried shows.
type callCounter struct {
	mu sync.Mutex
	by map[string]int
}

func (c *callCounter) option() func(*config.LoadOptions) error {
	return config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
		return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("sweepCount", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			c.mu.Lock()
			c.by[awsmiddleware.GetServiceID(ctx)+" "+awsmiddleware.GetOperationName(ctx)]++
			c.mu.Unlock()
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
	}})
}

func (c *callCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.by {
		n += v
	}
	return n
}

// TestSweep500 sweeps 500 prefixed resources across 5 kinds (100 each of
// buckets, queues, secrets, IAM users and security groups, untagged) next
// to 5 that are not debris, and logs the wall time and the API calls. The
// figures go into docs/performance.md (## sweep); nothing here is a timed
// assertion, because the emulator's speed is the machine's.
func TestSweep500(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: makes 500 resources in the emulator")
	}
	b, _ := newMoto(t)
	kinds := []spec.Kind{spec.ObjectStore, spec.Queues, spec.Secrets, spec.IAM, spec.SecurityGroup}
	t0 := time.Now()
	work := make(chan [2]string)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for kn := range work {
				k := spec.Kind(kn[0])
				d, _ := b.Driver(k)
				if _, err := d.Create(context.Background(), providers.Target{Name: kn[1], Region: region, Fields: fieldsFor(k)}); err != nil {
					t.Errorf("create %s/%s: %v", k, kn[1], err)
				}
			}
		}()
	}
	for _, k := range kinds {
		work <- [2]string{string(k), "keep-" + string(k)}
		for i := 0; i < 100; i++ {
			work <- [2]string{string(k), fmt.Sprintf("ci-tests-%03d", i)}
		}
	}
	close(work)
	wg.Wait()
	if t.Failed() {
		return
	}
	made := time.Since(t0)

	counter := &callCounter{by: map[string]int{}}
	sb, err := awsprovider.New(context.Background(), awsprovider.Options{ConfigOptions: []func(*config.LoadOptions) error{counter.option()}})
	if err != nil {
		t.Fatal(err)
	}
	opts := sweep.Options{
		Backends: map[spec.Provider]providers.Backend{spec.AWS: sb},
		Regions:  map[spec.Provider][]string{spec.AWS: {region}},
		Kinds:    kinds,
		Prefix:   "ci-tests-",
		Delete:   true,
	}
	t1 := time.Now()
	rep, err := sweep.Run(context.Background(), opts)
	elapsed := time.Since(t1)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if rep.Deleted != 500 || len(rep.Kept) != 5 || rep.Rounds != 1 {
		t.Errorf("deleted %d, kept %d, rounds %d", rep.Deleted, len(rep.Kept), rep.Rounds)
	}
	for _, k := range kinds {
		if got := names(t, b, k); len(got) != 1 || got[0] != "keep-"+string(k) {
			t.Errorf("%s left: %d", k, len(got))
		}
	}
	var ops []string
	for op, n := range counter.by {
		ops = append(ops, fmt.Sprintf("%s=%d", op, n))
	}
	sort.Strings(ops)
	// The calls do not depend on the machine, so they are asserted: the
	// minimum by the sweep's rules. One account check; each kind listed
	// twice (the survey, then the verification: security groups, buckets,
	// queues and users in one page, secrets in pages of 100, so 2 the
	// first time); the mark
	// read of each prefixed resource whose listing has no tags (buckets,
	// queues, users); one delete each. With no age floor, no call asks
	// for a creation time (a queue's GetQueueAttributes).
	if min := 1 + (2 + 2 + 2 + 2 + 2 + 1) + 300 + 500; counter.total() != min || counter.by["SQS GetQueueAttributes"] != 0 {
		t.Errorf("%d calls, want the minimum %d: %s", counter.total(), min, strings.Join(ops, ", "))
	}
	t.Logf("made 505 resources in %s", made.Round(time.Millisecond))
	t.Logf("swept 500 of 505 in %s (%d rounds), %d API calls: %s", elapsed.Round(time.Millisecond), rep.Rounds, counter.total(), strings.Join(ops, ", "))
}

// A Route 53 record's mark is its companion's, not its zone's: in a zone
// another fleet owns, a debris record a test fleet made is deleted with
// its companion, in one batch of DELETEs (all the sweep's role may send);
// one another fleet's companion names, and one without the prefix, stay.
func TestMotoRoute53RecordWithItsCompanion(t *testing.T) {
	b, _ := newMoto(t)
	ctx := context.Background()
	zd, _ := b.Driver(spec.Route53Zone)
	zone, err := zd.Create(ctx, providers.Target{Name: "example.com", Region: region, Owner: "dns"})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := b.Driver(spec.Route53Record)
	for name, owner := range map[string]string{"ci-tests-a.example.com:A": "ci-tests-run", "ci-tests-b.example.com:A": "app", "keep.example.com:A": "ci-tests-run"} {
		fields := map[string]any{"zone": "example.com", "ttl": 300.0, "values": []any{"192.0.2.1"}}
		if _, err := d.Create(ctx, providers.Target{Name: name, Region: region, Owner: owner, Fields: fields}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var batches [][]string
	record := config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("batches", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if c, ok := in.Parameters.(*route53.ChangeResourceRecordSetsInput); ok {
				var batch []string
				for _, ch := range c.ChangeBatch.Changes {
					batch = append(batch, fmt.Sprintf("%s %s %s", ch.Action, aws.ToString(ch.ResourceRecordSet.Name), ch.ResourceRecordSet.Type))
				}
				mu.Lock()
				batches = append(batches, batch)
				mu.Unlock()
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
	}})
	sb, err := awsprovider.New(ctx, awsprovider.Options{ConfigOptions: []func(*config.LoadOptions) error{record}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := sweep.Run(ctx, sweep.Options{
		Backends: map[spec.Provider]providers.Backend{spec.AWS: sb},
		Regions:  map[spec.Provider][]string{spec.AWS: {region}},
		Kinds:    []spec.Kind{spec.Route53Record},
		Prefix:   "ci-tests-",
		Delete:   true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Deleted != 1 {
		t.Errorf("deleted %d, want 1: %+v", rep.Deleted, rep)
	}
	if want := [][]string{{"DELETE ci-tests-a.example.com. A", "DELETE _infra-a.ci-tests-a.example.com. TXT"}}; !reflect.DeepEqual(batches, want) {
		t.Errorf("the sweep sent %v, want %v", batches, want)
	}
	if got := names(t, b, spec.Route53Record); !reflect.DeepEqual(got, []string{"ci-tests-b.example.com:A", "keep.example.com:A"}) {
		t.Errorf("left %v", got)
	}
	out, err := route53.NewFromConfig(mustConfig(t)).ListResourceRecordSets(ctx, &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(zone.Attributes["zoneId"])})
	if err != nil {
		t.Fatal(err)
	}
	for _, rr := range out.ResourceRecordSets {
		if strings.Contains(aws.ToString(rr.Name), "ci-tests-a") {
			t.Errorf("%s %s is left", aws.ToString(rr.Name), rr.Type)
		}
	}
}

func mustConfig(t *testing.T) aws.Config {
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion(region))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
