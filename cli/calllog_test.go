package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infra-iac/infra/internal/moto"
)

// INFRA_LOG=trace against the emulator: a line per API call naming the
// service, operation, resource, status and retries, each request and
// response traced, and the secret's value nowhere.
func TestCallLogNamesEveryCallAndNoSecret(t *testing.T) {
	srv := moto.Shared(t)
	srv.Setenv()
	const canary = "canary-3e8f-log-secret"
	dir := t.TempDir()
	fleet := filepath.Join(dir, "fleet.json")
	os.WriteFile(fleet, []byte(`{"apiVersion": "infra/v1", "fleet": "logs", "placement": {"aws": "eu-west-3"},
	  "resources": [{"address": "aws/secrets/logs-token", "spec": {"value": {"fromEnv": "LOGS_TOKEN"}}},
	  {"address": "aws/queues/logs-jobs", "spec": {}}]}`), 0o644)
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		f := DefaultFactory()
		f.IO = Test(nil, &out, &errb)
		f.Getenv = func(k string) string {
			switch k {
			case "LOGS_TOKEN":
				return canary
			case "INFRA_LOG":
				return "trace"
			}
			return os.Getenv(k)
		}
		code := RunWith(f, append(args, "--fleet", fleet, "--state", filepath.Join(dir, "state")), nil)
		return code, out.String(), errb.String()
	}
	code, out, errs := run("apply", "--yes")
	if code != 0 {
		t.Fatalf("apply exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		`call: provider=aws service=Secrets Manager operation="CreateSecret" region=eu-west-3 address=aws/secrets/logs-token status=200`,
		`call: provider=aws service=SQS operation="CreateQueue" region=eu-west-3 address=aws/queues/logs-jobs status=200`,
		`call: provider=aws service=STS operation="GetCallerIdentity"`,
		"trace: ",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr has no %q:\n%.3000s", want, errs)
		}
	}
	if strings.Contains(out+errs, canary) {
		t.Fatalf("the secret's value is in the output")
	}
	if !strings.Contains(errs, "(sensitive)") {
		t.Errorf("the trace masks nothing: the secret's value should be shown masked")
	}

	if os.Getenv("SHOW_LOG") != "" {
		t.Log(errs)
	}
	code, _, errs = run("plan", "--log-level", "debug")
	if code != 0 || !strings.Contains(errs, "call: provider=aws") || strings.Contains(errs, "trace: ") {
		t.Fatalf("--log-level debug: exit %d, want call lines and no trace:\n%.2000s", code, errs)
	}
	if code, _, errs = run("plan", "--log-level", "loud"); code != ExitUsage || !strings.Contains(errs, `log level "loud"`) {
		t.Fatalf("a bad level: exit %d\n%s", code, errs)
	}
}

// The executor's verbs log their own calls at --log-level, as every verb
// that calls a cloud does: the invoke of a function that is not there
// (refused), and the deploy's calls, show in the call log.
func TestExecutorVerbsLogTheirCalls(t *testing.T) {
	srv := moto.Shared(t)
	srv.Setenv()
	dir := t.TempDir()
	fleet := filepath.Join(dir, "fleet.json")
	os.WriteFile(fleet, []byte(`{"apiVersion": "infra/v1", "fleet": "logs", "placement": {"aws": "eu-west-3"},
	  "resources": [{"address": "aws/queues/logs-jobs", "spec": {}}]}`), 0o644)
	pkg := filepath.Join(dir, "bootstrap")
	os.WriteFile(pkg, []byte("not a real binary"), 0o755)
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		f := DefaultFactory()
		f.IO = Test(nil, &out, &errb)
		return RunWith(f, args, nil), errb.String()
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"executor", "invoke", "--operation", "plan", "--function", "no-such-executor", "--fleet", fleet}, `service=Lambda operation="Invoke"`},
		{[]string{"executor", "deploy", "--state", "s3://logs-state/fleets", "--package", pkg, "--fleets", "logs"}, `service=STS operation="GetCallerIdentity"`},
	} {
		code, errs := run(append(tc.args, "--log-level", "debug")...)
		if !strings.Contains(errs, "call: provider=aws "+tc.want) {
			t.Errorf("%s --log-level debug: exit %d, want the line %q:\n%.2000s", strings.Join(tc.args[:2], " "), code, tc.want, errs)
		}
		if code, errs = run(tc.args...); strings.Contains(errs, "call: ") {
			t.Errorf("%s without a level: exit %d, and a call log:\n%.2000s", strings.Join(tc.args[:2], " "), code, errs)
		}
	}
}
