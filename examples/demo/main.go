// Command demo is the README's first command: it starts the AWS emulator
// (moto_server) on a free loopback port, plans and applies
// examples/quickstart/fleet.json with the real infra command and its real
// AWS drivers, shows that the second plan is empty, destroys everything and
// stops what it started. It needs no cloud account.
//
//	go run ./examples/demo
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/infra-iac/infra/cli"
	"github.com/infra-iac/infra/internal/moto"
)

func main() { os.Exit(run()) }

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	work, err := os.MkdirTemp("", "infra-demo")
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		return 1
	}
	defer os.RemoveAll(work)

	step("starting the AWS emulator (moto_server, as installed) on loopback")
	srv, err := moto.StartStock(ctx, work)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		return 1
	}
	defer srv.Stop()
	srv.Setenv()
	fmt.Printf("emulator at %s; AWS_ENDPOINT_URL points the SDK at it\n", srv.URL)

	// The database password comes from the environment and is never
	// printed or stored; a fresh one each run.
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	os.Setenv("QUICKSTART_DB_PASSWORD", hex.EncodeToString(b))

	fleet := filepath.Join("examples", "quickstart", "fleet.json")
	state := filepath.Join(work, "state")
	steps := []struct {
		title string
		args  []string
		want  int
	}{
		{"check the fleet offline", []string{"check"}, cli.ExitOK},
		{"plan against the empty account", []string{"plan"}, cli.ExitOK},
		{"apply", []string{"apply", "--yes"}, cli.ExitOK},
		{"plan again: nothing to do", []string{"plan", "--detailed-exitcode"}, cli.ExitOK},
		{"destroy everything", []string{"destroy", "--yes"}, cli.ExitOK},
		{"plan once more: the fleet would be created from scratch", []string{"plan", "--detailed-exitcode"}, cli.ExitChanges},
	}
	for _, s := range steps {
		step(s.title)
		args := append(append([]string{}, s.args...), "--fleet", fleet)
		if s.args[0] != "check" {
			// check is offline: it reads no state.
			args = append(args, "--state", state)
		}
		fmt.Printf("$ infra %s\n", strings.Join(args, " "))
		if code := cli.Run(args, nil); code != s.want {
			fmt.Fprintf(os.Stderr, "demo: infra %s exited %d, want %d\n", s.args[0], code, s.want)
			return 1
		}
	}
	step("done: the emulator stops now")
	return 0
}

func step(s string) { fmt.Printf("\n== %s\n", s) }
