package executor_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/infra-iac/infra/executor"
)

// The function honours INFRA_LOG as the command line does: at debug its
// log has a line per API call naming the service and operation, at trace
// each request and response too, and the credentials secret's value
// (which the fleet's secret takes, through fromEnv) is never in it.
func TestExecutorCallLog(t *testing.T) {
	srv, env := lambdaEnv(t)
	const canary = "canary-3e8f-log-secret"
	putCredentials(t, srv, "infra/log-creds", `{"APP_TOKEN": "`+canary+`"}`)
	handler := func(level string) (*executor.Handler, *bytes.Buffer) {
		vars := map[string]string{executor.EnvCredentialsSecret: "infra/log-creds", executor.EnvLog: level}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			vars[k] = v
		}
		var log bytes.Buffer
		return executor.New(executor.FromEnv(func(k string) string { return vars[k] }, &log)), &log
	}

	h, log := handler("trace")
	resp, _ := h.Handle(context.Background(), executor.Request{Operation: executor.OpApply, Document: secretsDoc(1),
		Options: executor.Options{Unreviewed: true}})
	if resp.Status != executor.StatusDone {
		t.Fatalf("apply: %s: %s\n%s", resp.Status, resp.Message, log)
	}
	for _, want := range []string{
		`call: provider=aws service=Secrets Manager operation="GetSecretValue" region=eu-west-3`,
		`call: provider=aws service=Secrets Manager operation="CreateSecret" region=eu-west-3 address=aws/secrets/app-000 status=200`,
		`call: provider=aws service=S3 operation="PutObject"`,
		"trace: ",
		"(sensitive)",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the function's log has no %q:\n%.3000s", want, log)
		}
	}
	if strings.Contains(log.String(), canary) {
		t.Fatal("the credentials secret's value is in the function's log")
	}

	h, log = handler("debug")
	if resp, _ := h.Handle(context.Background(), executor.Request{Operation: executor.OpPlan, Document: secretsDoc(1)}); resp.Status != executor.StatusDone {
		t.Fatalf("plan: %s: %s", resp.Status, resp.Message)
	}
	if !strings.Contains(log.String(), `call: provider=aws service=Secrets Manager operation="ListSecrets"`) ||
		strings.Contains(log.String(), "trace: ") || strings.Contains(log.String(), canary) {
		t.Fatalf("debug: want call lines, no trace and no secret:\n%.3000s", log)
	}

	h, _ = handler("loud")
	if resp, _ := h.Handle(context.Background(), executor.Request{Operation: executor.OpPlan, Document: secretsDoc(1)}); resp.Status != executor.StatusFailed ||
		!strings.Contains(resp.Message, `INFRA_LOG="loud": want off, debug or trace`) {
		t.Fatalf("a bad level: %s: %s", resp.Status, resp.Message)
	}
}
