package fleet

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/infra-iac/infra/cli"
	"github.com/infra-iac/infra/spec"
)

// Main gives a fleet program every infra verb. With the program in ./infra:
//
//	go run ./infra synth    # print the fleet document
//	go run ./infra check    # offline diagnostics
//	go run ./infra plan     # what apply would do
//
// synth prints the document as JSON on stdout. Every other verb runs the
// infra command line on this fleet's document, so `infra plan --fleet
// ./infra` (which runs `go run ./infra synth`) and `go run ./infra plan`
// see the same fleet. Main exits the process with the verb's exit code.
func Main(f *Fleet) {
	os.Exit(Run(f, os.Args[1:], os.Stdout, os.Stderr))
}

// Run is Main without the process: it runs one command line on f's
// document, writes synth's output to stdout and diagnostics to stderr, and
// returns the exit code. It lets a test, or a program that builds several
// fleets, do what Main does.
//
// Problems the document cannot carry (a zero Ref, a malformed Format) make
// every verb fail, since the document is then not the fleet that was
// written. They are printed together with check's rows for the same
// document, so every problem shows at once, whether the program runs the
// verb itself or `infra check --fleet ./infra` runs its synth. synth still
// prints the document, for inspection. Every other problem is left to the
// verb: check and plan report it with their own rows.
func Run(f *Fleet, args []string, stdout, stderr io.Writer) int {
	doc, own := f.document()
	synth := verb(args) == "synth"
	if synth {
		out, err := spec.EncodeDocument(doc)
		if err != nil {
			fmt.Fprintf(stderr, "error: cannot encode the fleet document: %v\n", err)
			return 1
		}
		if _, err := stdout.Write(out); err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 1
		}
	}
	if spec.HasErrors(own) {
		printDiagnostics(stderr, mergeDiagnostics(own, spec.Validate(doc)))
		fmt.Fprintln(stderr, "error: the fleet program has problems its document cannot carry; fix them first")
		return 1
	}
	printDiagnostics(stderr, own)
	if synth {
		return 0
	}
	return cli.Run(args, doc)
}

// verb is the first argument that is not a flag or a global flag's value.
func verb(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--state" || a == "-state":
			i++ // its value follows
		case !strings.HasPrefix(a, "-"):
			return a
		}
	}
	return ""
}

// printDiagnostics writes rows the way `infra check` does, so the two read
// as one table.
func printDiagnostics(w io.Writer, ds []spec.Diagnostic) {
	errs := 0
	for _, d := range ds {
		line := fmt.Sprintf("%s: %s: %s", d.Severity, d.Subject, d.Message)
		if d.Resolution != "" {
			line += " (hint: " + d.Resolution + ")"
		}
		fmt.Fprintln(w, line+" ["+string(d.ID)+"]")
		if d.Severity == spec.Error {
			errs++
		}
	}
	if len(ds) > 0 {
		fmt.Fprintf(w, "%d error(s), %d warning(s)\n", errs, len(ds)-errs)
	}
}
