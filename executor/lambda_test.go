package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/executor"
	"github.com/infra-iac/infra/executor/executortest"
	"github.com/infra-iac/infra/internal/moto"
	awsprovider "github.com/infra-iac/infra/providers/aws"
)

const stateBucket = "infra-state"

// lambdaEnv starts moto (shared), wipes it, makes the state bucket and
// returns the function's environment.
func lambdaEnv(t testing.TB) (*moto.Server, []string) {
	t.Helper()
	srv := moto.Shared(t)
	srv.Setenv()
	if err := srv.Reset(); err != nil {
		t.Fatal(err)
	}
	// moto takes an unsigned PUT: no SDK needed outside providers/.
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/"+stateBucket, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("create the state bucket: %s", resp.Status)
	}
	return srv, append(srv.Env(), executor.EnvState+"=s3://"+stateBucket+"/executor")
}

// client invokes the emulator through the SDK's Lambda client, one call
// at a time (two at once crash the emulator).
type client struct {
	t   *testing.T
	inv *awsprovider.Invoker
}

func newClient(t *testing.T, rie *executortest.RIE) *client {
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", rie.URL)
	inv, err := awsprovider.NewInvoker(context.Background(), awsprovider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &client{t: t, inv: inv}
}

func (c *client) invoke(req executor.Request) executor.Response {
	c.t.Helper()
	payload, err := json.Marshal(req)
	if err != nil {
		c.t.Fatal(err)
	}
	body, err := c.inv.Invoke(context.Background(), executortest.FunctionName, payload)
	if err != nil {
		c.t.Fatalf("%s: %v", req.Operation, err)
	}
	var resp executor.Response
	if err := json.Unmarshal(body, &resp); err != nil {
		c.t.Fatalf("%s: decode %s: %v", req.Operation, body, err)
	}
	if resp.ProtocolVersion != executor.ProtocolVersion {
		c.t.Fatalf("%s: protocol %d", req.Operation, resp.ProtocolVersion)
	}
	return resp
}

func fleetDoc(names ...string) json.RawMessage {
	var rs []string
	for _, n := range names {
		rs = append(rs, fmt.Sprintf(`{"address": "aws/queues/%s", "spec": {"visibilityTimeoutSec": 45, "tags": {"team": "web"}}}`, n))
	}
	return json.RawMessage(`{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "` + moto.Account + `"},
		"placement": {"aws": "eu-west-3"}, "resources": [` + strings.Join(rs, ",") + `]}`)
}

// TestExecutorUnderTheRuntimeEmulator runs bootstrap as Lambda runs it and
// drives it with the SDK's Lambda client against moto, state in moto's S3:
// plan, apply with the reviewed id, apply with a stale id.
func TestExecutorUnderTheRuntimeEmulator(t *testing.T) {
	_, env := lambdaEnv(t)
	rie := executortest.Start(t, env...)
	c := newClient(t, rie)

	doc := fleetDoc("jobs", "mail")
	plan := c.invoke(executor.Request{Operation: executor.OpPlan, Document: doc, RunID: "1"})
	if plan.Status != executor.StatusDone || plan.Plan == nil || plan.Plan.Summary.Create != 2 {
		t.Fatalf("plan: %s: %s\n%s", plan.Status, plan.Message, rie.Log())
	}

	apply := c.invoke(executor.Request{Operation: executor.OpApply, Document: doc, ExpectPlanID: plan.Plan.ID, RunID: "1"})
	if apply.Status != executor.StatusDone {
		t.Fatalf("apply: %s: %s\n%s", apply.Status, apply.Message, rie.Log())
	}
	if got := fmt.Sprint(executortest.Queues(t)); got != "[jobs mail]" {
		t.Fatalf("moto holds %s", got)
	}
	for _, a := range apply.Applied {
		if a.Status != engine.StatusDone {
			t.Fatalf("applied: %+v", apply.Applied)
		}
	}

	// The reviewed plan was for two queues; the merge declares three.
	stale := c.invoke(executor.Request{Operation: executor.OpApply, Document: fleetDoc("jobs", "mail", "late"),
		ExpectPlanID: plan.Plan.ID, RunID: "2"})
	if stale.Status != executor.StatusRefused || stale.Plan == nil || stale.Plan.ID == plan.Plan.ID || stale.Plan.Summary.Create != 1 {
		t.Fatalf("stale id: %s: %s", stale.Status, stale.Message)
	}
	if got := fmt.Sprint(executortest.Queues(t)); got != "[jobs mail]" {
		t.Fatalf("a refused apply changed moto: %s", got)
	}

	// The converged fleet plans to nothing, from the ledger in moto's S3.
	again := c.invoke(executor.Request{Operation: executor.OpPlan, Document: doc, RunID: "3"})
	if again.Status != executor.StatusDone || again.Plan.HasChanges() {
		t.Fatalf("plan after apply: %s: %+v", again.Message, again.Plan.Summary)
	}

	// A dry-run sweep with the executor's credentials: nothing here starts
	// with the prefix.
	sweep := c.invoke(executor.Request{Operation: executor.OpSweep, Options: executor.Options{Prefix: "ci-nothing-", Regions: []string{"eu-west-3"}}})
	if sweep.Status != executor.StatusDone || sweep.Sweep == nil || len(sweep.Sweep.Candidates) != 0 {
		t.Fatalf("sweep: %s", sweep.Message)
	}
}

// putCredentials stores the executor's credentials secret in moto with an
// unsigned-but-addressed JSON call (no SDK outside providers/).
func putCredentials(t testing.TB, srv *moto.Server, name, value string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"Name": name, "SecretString": value})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "secretsmanager.CreateSecret")
	// moto reads the region from the credential scope.
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=testing/20260101/eu-west-3/secretsmanager/aws4_request, SignedHeaders=host, Signature=x")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("create the credentials secret: %s", resp.Status)
	}
}

// secretsDoc declares n secrets whose value comes from the credentials
// secret (fromEnv reads it in the executor). Secrets list completely in
// one call per hundred, so re-planning stays cheap while creating them
// takes two calls each: a fleet the deadline cuts but every invocation
// advances.
func secretsDoc(n int) json.RawMessage {
	var rs []string
	for i := 0; i < n; i++ {
		rs = append(rs, fmt.Sprintf(`{"address": "aws/secrets/app-%03d", "spec": {"value": {"fromEnv": "APP_TOKEN"}}}`, i))
	}
	return json.RawMessage(`{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "` + moto.Account + `"},
		"placement": {"aws": "eu-west-3"}, "resources": [` + strings.Join(rs, ",") + `]}`)
}

// TestExecutorDeadlineUnderTheRuntimeEmulator gives the function a short
// timeout and a fleet that cannot be created within it: the executor
// answers incomplete before the emulator's deadline, with the ledger
// saved, and invoking it again with the same request resumes until the
// fleet converges. The values come from the credentials secret, read at
// cold start.
func TestExecutorDeadlineUnderTheRuntimeEmulator(t *testing.T) {
	srv, env := lambdaEnv(t)
	const token = "tok-3f9a-never-printed"
	putCredentials(t, srv, "infra/executor", `{"APP_TOKEN": "`+token+`", "SCW_SECRET_KEY": "scw-never-printed"}`)
	env = append(env, executor.EnvCredentialsSecret+"=infra/executor")
	const n = 250
	doc := secretsDoc(n)
	// Warm moto's services first with a normal function: each service's
	// first call there takes seconds, which is not what this test is about.
	warm := executortest.Start(t, env...)
	c := newClient(t, warm)
	plan := c.invoke(executor.Request{Operation: executor.OpPlan, Document: doc, RunID: "9"})
	if plan.Status != executor.StatusDone || plan.Plan.Summary.Create != n {
		t.Fatalf("plan: %s: %s", plan.Status, plan.Message)
	}
	warm.Stop()

	// 20 ms a call, two at a time: 250 creates take at least 2.5 s. The
	// stop margin leaves the calls that end an invocation (the last
	// saves, the lock's release), 20 ms each too, time on a loaded
	// machine: the default, a fifth of 2 s, is for calls on loopback.
	rie := executortest.Start(t, append(executortest.Slowed(t, env, 20*time.Millisecond), "AWS_LAMBDA_FUNCTION_TIMEOUT=2",
		executor.EnvParallelism+"=2", executor.EnvStopMargin+"=800ms")...)
	c = newClient(t, rie)
	req := executor.Request{Operation: executor.OpApply, Document: doc, ExpectPlanID: plan.Plan.ID, RunID: "9"}
	var statuses []string
	done := 0
	for i := 0; i < 40; i++ {
		t0 := time.Now()
		resp := c.invoke(req)
		statuses = append(statuses, fmt.Sprintf("%s(%d in %s)", resp.Status, countDone(resp), time.Since(t0).Round(time.Millisecond)))
		done += countDone(resp)
		if resp.Status == executor.StatusIncomplete {
			continue
		}
		if resp.Status != executor.StatusDone {
			t.Fatalf("invocation %d: %s: %s\n%s", i+1, resp.Status, resp.Message, rie.Log())
		}
		break
	}
	t.Logf("invocations: %s", strings.Join(statuses, " "))
	if len(statuses) < 2 || !strings.HasPrefix(statuses[0], "incomplete") || !strings.HasPrefix(statuses[len(statuses)-1], "done") {
		t.Fatalf("want incomplete, then done: %v", statuses)
	}
	log := warm.Log() + rie.Log()
	if strings.Contains(log, "Task timed out") {
		t.Fatalf("the function overran its deadline:\n%s", rie.Log())
	}
	if strings.Contains(log, token) || strings.Contains(log, "scw-never-printed") {
		t.Fatal("a credential reached the function's log")
	}
	if done != n {
		t.Fatalf("%d actions done over the run, want %d", done, n)
	}
	// Converged: another invocation of the same run has nothing left.
	if resp := c.invoke(req); resp.Status != executor.StatusDone || !strings.Contains(resp.Message, "nothing left") {
		t.Fatalf("after convergence: %s: %s", resp.Status, resp.Message)
	}
	final := c.invoke(executor.Request{Operation: executor.OpPlan, Document: doc, RunID: "9"})
	if final.Status != executor.StatusDone || final.Plan.HasChanges() {
		t.Fatalf("final plan: %s: %+v", final.Message, final.Plan.Summary)
	}
}

func countDone(r executor.Response) int {
	n := 0
	for _, a := range r.Applied {
		if a.Status == engine.StatusDone {
			n++
		}
	}
	return n
}
