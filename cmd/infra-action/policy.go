package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

// policyTimeout bounds one run of the policy command.
const policyTimeout = 5 * time.Minute

// policy runs the policy input's command on plan p (docs/ci.md#policy):
// bash, in the working directory, with the plan JSON on stdin and in the
// file INFRA_PLAN_JSON, and INFRA_FLEET set. Its output goes to the log.
// It returns nil when there is no policy or it passes, and otherwise the
// blocking row for the plan: infra writes no policy language, it runs
// the user's (conftest, opa eval, a script).
func (a *action) policy(ctx context.Context, p *operations.Plan) *spec.Diagnostic {
	if a.in.policy == "" {
		return nil
	}
	var plan bytes.Buffer
	if err := render.JSON(&plan, p); err != nil {
		return policyRow(p.Fleet, "the plan could not be written as JSON for it: "+err.Error())
	}
	// The fleet's name may be anything a broken document says: it is no
	// part of the file's name.
	tmp, err := os.CreateTemp("", "infra-plan-*.json")
	if err != nil {
		return policyRow(p.Fleet, "the plan could not be written for it: "+err.Error())
	}
	file := tmp.Name()
	defer os.Remove(file)
	_, werr := tmp.Write(plan.Bytes())
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		return policyRow(p.Fleet, "the plan could not be written for it: "+errors.Join(werr, cerr).Error())
	}
	ctx, cancel := context.WithTimeout(ctx, policyTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", a.in.policy)
	cmd.Stdin = bytes.NewReader(plan.Bytes())
	cmd.Env = append(os.Environ(), "INFRA_PLAN_JSON="+file, "INFRA_FLEET="+p.Fleet)
	// A child that outlives the killed shell and keeps its output open
	// does not hold the step past the timeout.
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	fmt.Fprintf(a.log, "policy for fleet %s:\n%s", p.Fleet, out)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return policyRow(p.Fleet, fmt.Sprintf("it ran out of its %s", policyTimeout))
	case errors.As(err, &exit):
		return policyRow(p.Fleet, fmt.Sprintf("it exited %d: %s", exit.ExitCode(), lastLines(string(out), 5)))
	}
	return policyRow(p.Fleet, "it could not run: "+err.Error())
}

func policyRow(fleet, why string) *spec.Diagnostic {
	d := spec.Errorf(spec.RowPolicyFailed, "policy", "change the fleet so that the policy passes, or the policy (the input policy); the step log has its whole output",
		"the policy command refuses the plan of fleet %s: %s", fleet, why)
	return &d
}

// lastLines is the last n non-empty lines of s, joined, for a row.
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 {
		return "(no output)"
	}
	return strings.Join(lines, " / ")
}

// refusePlan marks a plan the policy refused: the row is blocking, so the
// comment shows it among the errors and nothing applies the plan.
func refusePlan(p *operations.Plan, row *spec.Diagnostic) {
	p.Diagnostics = spec.SortDiagnostics(append(p.Diagnostics, *row))
	p.Applicable = false
}
