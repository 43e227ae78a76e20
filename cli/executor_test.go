package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infra-iac/infra/executor"
	"github.com/infra-iac/infra/executor/executortest"
	"github.com/infra-iac/infra/internal/moto"
)

// runInfra runs one command line in-process with the real factory.
func runInfra(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := DefaultFactory()
	f.IO = Test(strings.NewReader(""), &out, &errOut)
	code = RunWith(f, args, nil)
	return code, out.String(), errOut.String()
}

// TestExecutorDeployThenInvoke deploys the executor to moto with
// `infra executor deploy`, then, since moto cannot run a Lambda, runs the
// same bootstrap under the runtime emulator with the environment deploy
// gave the function, and drives it with `infra executor invoke`: a plan,
// then an apply of that plan that the function's short timeout cuts, which
// invoke resumes until done.
func TestExecutorDeployThenInvoke(t *testing.T) {
	srv := moto.Fresh(t)
	if err := srv.Config(`{"lambda":{"use_docker":false}}`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(executortest.Cleanup)
	boot, _ := executortest.Binaries(t)

	code, out, errOut := runInfra(t, "executor", "deploy", "--state", "s3://exec-state/fleets", "--package", boot,
		"--credentials-secret", "infra/exec", "--kinds", "secrets,queues", "--github-repo", "acme/shop")
	if code != 0 {
		t.Fatalf("deploy: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"created the state bucket exec-state", "created function infra-executor", "created role infra-executor-invoker", "state s3://exec-state/fleets"} {
		if !strings.Contains(out, want) {
			t.Errorf("deploy output lacks %q:\n%s", want, out)
		}
	}
	if code, out, _ := runInfra(t, "executor", "deploy", "--state", "s3://exec-state/fleets", "--package", boot,
		"--credentials-secret", "infra/exec", "--kinds", "secrets,queues", "--github-repo", "acme/shop"); code != 0 || !strings.Contains(out, "nothing to change") {
		t.Fatalf("second deploy: exit %d\n%s", code, out)
	}

	// The credentials secret holds the value the fleet's secrets take.
	body := `{"Name": "infra/exec", "SecretString": "{\"APP_TOKEN\": \"t0ken\"}"}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "secretsmanager.CreateSecret")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=testing/20260101/eu-west-3/secretsmanager/aws4_request, SignedHeaders=host, Signature=x")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("create the credentials secret: %v %v", resp, err)
	}
	resp.Body.Close()

	var rs []string
	for i := 0; i < 250; i++ {
		rs = append(rs, fmt.Sprintf(`{"address": "aws/secrets/app-%03d", "spec": {"value": {"fromEnv": "APP_TOKEN"}}}`, i))
	}
	fleet := filepath.Join(t.TempDir(), "fleet.json")
	doc := `{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "` + moto.Account + `"}, "placement": {"aws": "eu-west-3"}, "resources": [` + strings.Join(rs, ",") + `]}`
	if err := os.WriteFile(fleet, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}

	env := append(srv.Env(), executor.EnvState+"=s3://exec-state/fleets", executor.EnvCredentialsSecret+"=infra/exec")
	warm := executortest.Start(t, env...)
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", warm.URL)
	code, out, errOut = runInfra(t, "executor", "invoke", "--function", executortest.FunctionName, "--fleet", fleet, "--operation", "plan", "--json")
	if code != 0 {
		t.Fatalf("invoke plan: exit %d\n%s%s", code, out, errOut)
	}
	var plan executor.Response
	if err := json.Unmarshal([]byte(out), &plan); err != nil || plan.Plan == nil || plan.Plan.Summary.Create != 250 {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	warm.Stop()

	// 20 ms a call, two at a time: 250 creates take at least 2.5 s. The
	// stop margin leaves the calls that end an invocation (the last
	// saves, the lock's release), 20 ms each too, time on a loaded
	// machine: the default, a fifth of 2 s, is for calls on loopback.
	rie := executortest.Start(t, append(executortest.Slowed(t, env, 20*time.Millisecond), "AWS_LAMBDA_FUNCTION_TIMEOUT=2",
		executor.EnvParallelism+"=2", executor.EnvStopMargin+"=800ms")...)
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", rie.URL)
	code, out, errOut = runInfra(t, "executor", "invoke", "--function", executortest.FunctionName, "--fleet", fleet,
		"--operation", "apply", "--expect-plan-id", plan.Plan.ID, "--run-id", "42")
	if code != 0 {
		t.Fatalf("invoke apply: exit %d\n%s%s\n%s", code, out, errOut, rie.Log())
	}
	if !strings.Contains(errOut, "invocation 1: incomplete") || !strings.Contains(errOut, ": done (") {
		t.Fatalf("invoke did not loop on incomplete:\n%s", errOut)
	}
	if !strings.Contains(out, "Applied: 250 created, 0 updated, 0 replaced, 0 deleted.") {
		t.Fatalf("result:\n%s", out)
	}
	if strings.Contains(rie.Log(), "t0ken") {
		t.Fatal("a credential reached the function's log")
	}

	// The executor answers output from its state: this fleet provides
	// nothing, so its record is empty, and a capability is not there.
	code, out, errOut = runInfra(t, "executor", "invoke", "--function", executortest.FunctionName, "--fleet", fleet,
		"--operation", "output", "--select", "eu")
	if code != 1 || !strings.Contains(out+errOut, `shop publishes no capability "eu"; it provides: none`) {
		t.Fatalf("invoke output: exit %d\n%s%s", code, out, errOut)
	}

	// A stale id is refused, with the fresh plan printed, and exit 1.
	code, out, errOut = runInfra(t, "executor", "invoke", "--function", executortest.FunctionName, "--fleet", fleet,
		"--operation", "destroy", "--expect-plan-id", plan.Plan.ID, "--run-id", "43")
	if code != 1 || !strings.Contains(errOut, "refused") || !strings.Contains(out, "The fresh plan:") {
		t.Fatalf("stale destroy: exit %d\n%s%s", code, out, errOut)
	}
}

// deploy --function-log-level sets the function's INFRA_LOG, a deploy
// without it takes it away again, and a level the function would refuse
// is refused before anything is deployed.
func TestExecutorDeployFunctionLogLevel(t *testing.T) {
	srv := moto.Fresh(t)
	if err := srv.Config(`{"lambda":{"use_docker":false}}`); err != nil {
		t.Fatal(err)
	}
	// moto runs no function: any bytes make a package.
	boot := filepath.Join(t.TempDir(), "bootstrap")
	if err := os.WriteFile(boot, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	deploy := func(extra ...string) (int, string, string) {
		return runInfra(t, append([]string{"executor", "deploy", "--state", "s3://log-state/fleets", "--package", boot, "--kinds", "queues"}, extra...)...)
	}
	if code, out, errOut := deploy("--function-log-level", "debug"); code != 0 || !strings.Contains(out, "created function infra-executor") {
		t.Fatalf("deploy: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := deploy("--function-log-level", "debug"); code != 0 || !strings.Contains(out, "nothing to change") {
		t.Fatalf("the same deploy again: exit %d\n%s", code, out)
	}
	if code, out, _ := deploy(); code != 0 || !strings.Contains(out, "updated the configuration of function infra-executor (INFRA_STATE)") {
		t.Fatalf("deploy without the level: exit %d\n%s", code, out)
	}
	if code, out, _ := deploy("--function-log-level", "trace"); code != 0 || !strings.Contains(out, "(INFRA_LOG, INFRA_STATE)") {
		t.Fatalf("deploy at trace: exit %d\n%s", code, out)
	}
	if code, out, errOut := deploy("--function-log-level", "loud"); code != ExitUsage || !strings.Contains(errOut, `--function-log-level "loud": want off, debug or trace`) {
		t.Fatalf("a bad level: exit %d\n%s%s", code, out, errOut)
	}
}
