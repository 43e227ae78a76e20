// Command infra-action is the GitHub Action of infra (action.yml builds it
// from the action's own source with the runner's Go and runs it).
//
//	command: plan      on pull_request: plan every fleet and keep one comment
//	                   per fleet on the pull request up to date
//	command: apply     on push to the default branch: apply the plan reviewed
//	                   on the merged pull request, and nothing else
//	command: pr-apply  on issue_comment: "/infra apply" on an approved pull
//	                   request applies its reviewed plan before the merge
//	command: sweep     `infra sweep` to the job summary
//	command: discover  `infra discover` to the job summary
//
// Inputs come as INPUT_* variables, outputs go to GITHUB_OUTPUT, the
// report to GITHUB_STEP_SUMMARY; docs/ci.md describes them.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/infra-iac/infra/cli"
	"github.com/infra-iac/infra/operations"
)

func main() { os.Exit(realMain()) }

func realMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, env{
		getenv: os.Getenv,
		stdout: os.Stdout,
		// Long enough for GitHub's slowest answers, short enough that a
		// hung connection does not hold the job for hours.
		http: &http.Client{Timeout: 60 * time.Second},
		clouds: clouds{
			Backends: operations.NewBackends(backendOptions()),
			Store:    operations.OpenState,
			Synth:    operations.SynthProgram,
			Getenv:   os.Getenv,
		},
		invoker: func(ctx context.Context) (invoker, error) {
			return operations.NewLambdaInvoker(ctx, backendOptions())
		},
	})
}

// backendOptions are the backends' for the job's log: progress lines, and
// the call log at INFRA_LOG's level (debug, trace) as the command line
// writes it.
func backendOptions() operations.BackendOptions {
	log := cli.PrintableWriter(os.Stdout)
	level, _ := operations.LogLevel(os.Getenv("INFRA_LOG")) // anything else is off, as it was
	return operations.CallLogOptions(log, level, func(line string) { fmt.Fprintln(log, line) })
}
