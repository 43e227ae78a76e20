package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/internal/strike"
	"github.com/infra-iac/infra/internal/testbin"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// These tests run the real infra binary as separate processes against the
// AWS emulator: what a user's shell or CI does.

// chainFleet is 20 resources with a dependency chain: ten secrets each
// composed from the one before, five queues, five security groups. Every
// name starts with prefix, so runs can share one emulator without a reset.
func chainFleet(t *testing.T, dir, fleet, prefix string) string {
	t.Helper()
	var rs []string
	rs = append(rs, fmt.Sprintf(`{"address": "aws/secrets/%schain-00", "spec": {"value": {"fromEnv": "CHAIN_SEED"}}}`, prefix))
	for i := 1; i < 10; i++ {
		rs = append(rs, fmt.Sprintf(`{"address": "aws/secrets/%schain-%02d", "spec": {"value": {"composed": {"format": "{0}+%d", "args": [{"secretValue": "aws/secrets/%schain-%02d"}]}}}}`, prefix, i, i, prefix, i-1))
	}
	for i := 0; i < 5; i++ {
		rs = append(rs, fmt.Sprintf(`{"address": "aws/queues/%squeue-%d", "spec": {"visibilityTimeoutSec": %d}}`, prefix, i, 30+i))
		rs = append(rs, fmt.Sprintf(`{"address": "aws/security-group/%sgroup-%d", "spec": {"description": "group %d", "ingress": [{"port": %d, "cidr": "10.0.0.0/8"}]}}`, prefix, i, i, 8000+i))
	}
	doc := `{"apiVersion": "infra/v1", "fleet": "` + fleet + `", "accounts": {"aws": "123456789012"}, "placement": {"aws": "eu-west-3"},
  "resources": [` + strings.Join(rs, ",\n") + `]}`
	path := filepath.Join(dir, "fleet.json")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func processEnv(srv *moto.Server) []string {
	env := append(os.Environ(), srv.Env()...)
	return append(env, "CHAIN_SEED=seed-value", "NO_COLOR=1")
}

// TestSIGKILLAtEveryStepConverges kills an apply of a 20-resource chain
// after its k-th action, for every k, then applies again: the plan is then
// empty, and every resource in the account is declared, tagged and in the
// ledger, once.
func TestSIGKILLAtEveryStepConverges(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the crash test runs up to 40 applies against the emulator")
	}
	bin := testbin.Infra(t)
	srv := moto.Shared(t)
	runs, killedMidway := 0, 0
	for _, k := range strike.Points(t, 20) {
		dir := t.TempDir()
		name := fmt.Sprintf("crash-%d", k)
		fleet := chainFleet(t, dir, name, fmt.Sprintf("k%d-", k))
		stateDir := filepath.Join(dir, "state")
		args := []string{"apply", "--yes", "--fleet", fleet, "--state", stateDir}

		cmd := exec.Command(bin, args...)
		cmd.Env = processEnv(srv)
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done, killed := 0, false
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), " ... ok") {
				done++
				if done == k {
					cmd.Process.Signal(syscall.SIGKILL)
					killed = true
					break
				}
			}
		}
		go func() {
			for sc.Scan() {
			}
		}()
		cmd.Wait()
		runs++
		if killed && k < 20 {
			killedMidway++
		}

		re := exec.Command(bin, args...)
		re.Env = processEnv(srv)
		if out, err := re.CombinedOutput(); err != nil {
			t.Fatalf("k=%d: re-run: %v\n%s", k, err, out)
		}
		runs++
		plan := exec.Command(bin, "plan", "--detailed-exitcode", "--fleet", fleet, "--state", stateDir)
		plan.Env = processEnv(srv)
		if out, err := plan.CombinedOutput(); err != nil {
			t.Fatalf("k=%d: plan after re-run is not empty: %v\n%s", k, err, out)
		}
		auditAccount(t, k, srv, stateDir, name, fmt.Sprintf("k%d-", k))
	}
	t.Logf("%d applies; %d of them killed mid-apply", runs, killedMidway)
}

// auditAccount checks every resource in the emulator is declared, tagged
// for the fleet and in the ledger, exactly once.
func auditAccount(t *testing.T, k int, srv *moto.Server, stateDir, fleet, prefix string) {
	t.Helper()
	srv.Setenv()
	ctx := context.Background()
	b, err := awsprovider.New(ctx, awsprovider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store, _ := state.OpenFile(stateDir, fleet)
	ledger, err := store.LoadLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, kind := range []spec.Kind{spec.Secrets, spec.Queues, spec.SecurityGroup} {
		d, _ := b.Driver(kind)
		rs, err := d.List(ctx, "eu-west-3")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if !strings.HasPrefix(r.Name, prefix) {
				continue // another run's
			}
			a := spec.Address{Provider: spec.AWS, Kind: kind, Name: r.Name}
			found = append(found, a.String())
			if r.Owner == "" && !r.Complete {
				full, err := d.Read(ctx, "eu-west-3", r.Name)
				if err == nil {
					r = full
				}
			}
			if r.Owner != fleet {
				t.Errorf("k=%d: %s is not tagged for the fleet (owner %q)", k, a, r.Owner)
			}
			if _, ok := ledger.Get(a); !ok {
				t.Errorf("k=%d: %s is not in the ledger", k, a)
			}
		}
	}
	sort.Strings(found)
	if len(found) != 20 || len(ledger.Rows) != 20 {
		t.Errorf("k=%d: %d resources in the account, %d rows in the ledger: %v", k, len(found), len(ledger.Rows), found)
	}
}

// TestTwoAppliesAtOnce: exactly one proceeds; the other exits 1 within a
// second, naming the holder.
func TestTwoAppliesAtOnce(t *testing.T) {
	bin := testbin.Infra(t)
	srv := moto.Shared(t)
	dir := t.TempDir()
	fleet := chainFleet(t, dir, "race", "race-")
	stateDir := filepath.Join(dir, "state")
	type result struct {
		code    int
		elapsed time.Duration
		stderr  string
	}
	results := make(chan result, 2)
	start := make(chan struct{})
	for i := 0; i < 2; i++ {
		go func() {
			cmd := exec.Command(bin, "apply", "--yes", "--fleet", fleet, "--state", stateDir)
			cmd.Env = processEnv(srv)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			<-start
			t0 := time.Now()
			err := cmd.Run()
			code := 0
			if exit, ok := err.(*exec.ExitError); ok {
				code = exit.ExitCode()
			}
			results <- result{code, time.Since(t0), errb.String()}
		}()
	}
	close(start)
	a, b := <-results, <-results
	if a.code == 0 {
		a, b = b, a
	}
	if b.code != 0 {
		t.Fatalf("the winner failed: %s", b.stderr)
	}
	if a.code != 1 || !strings.Contains(a.stderr, "is locked by") || !strings.Contains(a.stderr, "infra unlock ") {
		t.Fatalf("the loser: exit %d\n%s", a.code, a.stderr)
	}
	if a.elapsed > time.Second {
		t.Errorf("the loser took %s to give up", a.elapsed)
	}
	t.Logf("loser exited in %s: %s", a.elapsed.Round(time.Millisecond), strings.TrimSpace(a.stderr))
	var lock map[string]any
	if b, err := os.ReadFile(filepath.Join(stateDir, "race", "lock.json")); err == nil {
		json.Unmarshal(b, &lock)
		t.Errorf("a lock was left behind: %v", lock)
	}
}
