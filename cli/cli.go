// Package cli is the infra command line: one file per verb, each an options
// struct, its flags and a run function that calls the engine and renders.
// It lives outside cmd/infra so that a fleet program (fleet.Main) can offer
// every verb too; Go cannot import a main package.
package cli

import (
	"fmt"
	"os"

	"github.com/infra-iac/infra/spec"
)

// Main runs the infra command with os.Args and returns the exit code.
func Main() int { return Run(os.Args[1:], nil) }

// Run runs one command line. When doc is not nil it is the fleet document
// (a fleet program passes the one it built) and --fleet is not consulted.
func Run(args []string, doc *spec.Document) int {
	fmt.Fprintln(os.Stderr, "error: the infra CLI is being built")
	return 1
}
