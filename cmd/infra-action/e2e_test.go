package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/infra-iac/infra/executor"
	"github.com/infra-iac/infra/executor/executortest"
	"github.com/infra-iac/infra/internal/moto"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/render"
)

func TestMain(m *testing.M) {
	code := m.Run()
	moto.StopShared()
	executortest.Cleanup()
	os.Exit(code)
}

// End to end: a pull_request event plans through the executor and the
// plan lands on the fake GitHub; the push of the merge commit applies the
// reviewed plan in the executor, running as Lambda runs it (bootstrap
// under the runtime interface emulator) against moto with its state in
// moto's S3; the result lands on the pull request. A second pull request
// with no change merges into an apply that does nothing.
func TestEndToEndPullRequestToMergeThroughTheExecutor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the executor and runs it under the runtime emulator")
	}
	srv, err := moto.Start(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	// moto takes an unsigned PUT: no SDK outside providers/.
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/infra-state", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	rie := executortest.Start(t, append(srv.Env(), executor.EnvState+"=s3://infra-state/executor")...)
	// The action's Lambda client reaches the emulator; everything else it
	// would call (nothing, in executor mode) stays on moto.
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", rie.URL)
	inv, err := awsprovider.NewInvoker(context.Background(), awsprovider.Options{})
	if err != nil {
		t.Fatal(err)
	}

	h := newHarness(t)
	h.inv = inv
	h.writeFleet(`{"address": "aws/queues/e2e-jobs", "spec": {"visibilityTimeoutSec": 45}}`,
		`{"address": "aws/object-store/e2e-assets", "spec": {"versioning": true}}`)

	// The pull request.
	plan := h.run("pull_request", prEvent(7, "feed0001"), planInputs())
	if plan.code != 0 {
		t.Fatalf("plan: exit %d:\n%s\n%s", plan.code, plan.log, rie.Log())
	}
	h.gh.assertRequests(t, listComments7, createOn7)
	comment := h.gh.bodies(7)[0]
	reviewed, head, ok := render.ReadMarkdownPlanID(comment)
	if !ok || head != "feed0001" || reviewed != plan.outputs["plan-id"] || !strings.Contains(comment, "Plan: 2 to create") {
		t.Fatalf("plan comment:\n%s\noutputs %v", comment, plan.outputs)
	}
	if got := executortest.Queues(t); len(got) != 0 {
		t.Fatalf("planning created %v", got)
	}

	// The merge.
	h.gh.merged("feed0002", 7)
	apply := h.run("push", pushEvent("feed0002"), applyInputs())
	if apply.code != 0 {
		t.Fatalf("apply: exit %d:\n%s\n%s", apply.code, apply.log, rie.Log())
	}
	h.gh.assertRequests(t, "GET /repos/acme/shop/commits/feed0002/pulls?per_page=100", listComments7, listComments7, createOn7)
	if got := fmt.Sprint(executortest.Queues(t)); got != "[e2e-jobs]" {
		t.Fatalf("moto holds queues %s", got)
	}
	result := h.gh.bodies(7)[1]
	for _, want := range []string{ApplyMarker("shop"), "applied by the executor `function` (1 invocation(s))", reviewed,
		"**Applied: 2 created, 0 updated, 0 replaced, 0 deleted.**", "| `+` | `aws/queues/e2e-jobs` | create | done |"} {
		if !strings.Contains(result, want) {
			t.Errorf("the result lacks %q:\n%s", want, result)
		}
	}
	t.Logf("result comment:\n%s", result)
	if apply.outputs["plan-id"] != reviewed {
		t.Errorf("applied %q, reviewed %q", apply.outputs["plan-id"], reviewed)
	}

	// A second pull request that changes nothing in the fleet.
	again := h.run("pull_request", prEvent(9, "feed0003"), planInputs())
	if again.code != 0 || again.outputs["has-changes"] != "false" || !strings.Contains(h.gh.bodies(9)[0], "No changes.") {
		t.Fatalf("second plan: exit %d, outputs %v\n%s", again.code, again.outputs, again.log)
	}
	h.gh.merged("feed0004", 9)
	h.gh.take()
	noop := h.run("push", pushEvent("feed0004"), applyInputs())
	if noop.code != 0 {
		t.Fatalf("second apply: exit %d:\n%s", noop.code, noop.log)
	}
	if result := h.gh.bodies(9)[1]; !strings.Contains(result, "Nothing to apply: the cloud already matches the fleet.") || strings.Contains(result, "| `+` |") {
		t.Fatalf("second result:\n%s", result)
	}
	if got := fmt.Sprint(executortest.Queues(t)); got != "[e2e-jobs]" {
		t.Fatalf("after the second merge moto holds %s", got)
	}
}
