package state

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/infra-iac/infra/spec"
)

// The test binary doubles as the other process in the tests below: run
// with INFRA_STATE_HELPER set, it plays that part instead of running tests.
func TestMain(m *testing.M) {
	switch os.Getenv("INFRA_STATE_HELPER") {
	case "":
		os.Exit(m.Run())
	case "lock":
		os.Exit(helperLock())
	case "churn":
		os.Exit(helperChurn())
	default:
		fmt.Fprintln(os.Stderr, "unknown helper")
		os.Exit(2)
	}
}

func helper(t *testing.T, role, dir string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"INFRA_STATE_HELPER=" + role, "INFRA_STATE_DIR=" + dir}, env...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

// lockResult is what a lock helper reports on stdout.
type lockResult struct {
	Won     bool          `json:"won"`
	Info    LockInfo      `json:"info"`
	Error   string        `json:"error"`
	Elapsed time.Duration `json:"elapsed"`
}

// helperLock waits for the start file, takes the lock once, reports, and
// exits holding it if it won, as a run that died would.
func helperLock() int {
	startFile := os.Getenv("INFRA_STATE_START")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(startFile); err == nil {
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "never started")
			return 2
		}
	}
	s, err := OpenFile(os.Getenv("INFRA_STATE_DIR"), "web")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	began := time.Now()
	lock, err := s.Lock(context.Background(), LockInfo{RunID: os.Getenv("INFRA_STATE_RUN"), Command: "apply"})
	res := lockResult{Elapsed: time.Since(began)}
	var le *LockedError
	switch {
	case err == nil:
		res.Won, res.Info = true, lock.Info()
	case errors.As(err, &le):
		res.Info, res.Error = le.Info, err.Error()
	default:
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		return 2
	}
	return 0
}

// Processes race for the lock: exactly one wins; every other fails at once
// with a LockedError naming the winner and the way out.
func TestLockRaceProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	start := filepath.Join(t.TempDir(), "go")
	const n = 4
	cmds := make([]*exec.Cmd, n)
	outs := make([]*strings.Builder, n)
	for i := range n {
		cmds[i] = helper(t, "lock", dir, "INFRA_STATE_START="+start, fmt.Sprint("INFRA_STATE_RUN=run-", i))
		outs[i] = &strings.Builder{}
		cmds[i].Stdout = outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond) // let them all reach the start line
	if err := os.WriteFile(start, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	results := make([]lockResult, n)
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v", i, err)
		}
		if err := json.Unmarshal([]byte(outs[i].String()), &results[i]); err != nil {
			t.Fatalf("helper %d said %q: %v", i, outs[i], err)
		}
	}
	var winner *lockResult
	for i := range results {
		if results[i].Won {
			if winner != nil {
				t.Fatalf("two processes won: %+v and %+v", winner.Info, results[i].Info)
			}
			winner = &results[i]
		}
	}
	if winner == nil {
		t.Fatalf("nobody won: %+v", results)
	}
	if want := fmt.Sprintf(" pid %d", cmds[indexOf(results, winner)].Process.Pid); !strings.HasSuffix(winner.Info.Holder, want) {
		t.Fatalf("winner's holder %q does not name its pid", winner.Info.Holder)
	}
	for _, r := range results {
		if r.Won {
			continue
		}
		if r.Info != winner.Info {
			t.Fatalf("a loser names %+v, want the winner %+v", r.Info, winner.Info)
		}
		for _, w := range []string{"is locked by " + winner.Info.Holder, `"apply"`, winner.Info.RunID, "`infra unlock " + winner.Info.ID + "`"} {
			if !strings.Contains(r.Error, w) {
				t.Errorf("loser's message lacks %q: %s", w, r.Error)
			}
		}
		if r.Elapsed > time.Second {
			t.Errorf("a loser took %v to be refused", r.Elapsed)
		}
	}
	// The winner exited without releasing, like a run that died: its lock
	// stays until someone breaks it by its id.
	s, _ := OpenFile(dir, "web")
	if err := s.Unlock(context.Background(), winner.Info.ID); err != nil {
		t.Fatal(err)
	}
}

func indexOf(rs []lockResult, r *lockResult) int {
	for i := range rs {
		if &rs[i] == r {
			return i
		}
	}
	return -1
}

// churnLedgers are the two ledgers the churn helper alternates between,
// large enough that a write takes more than one system call.
func churnLedgers() [2]*Ledger {
	var ls [2]*Ledger
	for i := range ls {
		ls[i] = NewLedger()
		for j := range 400 + 300*i {
			ls[i].Put(row(spec.AWS, spec.IAM, fmt.Sprintf("user-%d-%04d", i, j), "eu-west-3"))
		}
	}
	return ls
}

// helperChurn saves the two ledgers in turn until it is killed, saying
// "ready" after its first save. It loads once: a store remembers what it
// saved, so each save is guarded without reading the ledger back.
func helperChurn() int {
	s, err := OpenFile(os.Getenv("INFRA_STATE_DIR"), "web")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx := context.Background()
	ls := churnLedgers()
	if _, err := s.LoadLedger(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	for i := 0; ; i++ {
		if err := s.SaveLedger(ctx, ls[i%2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if i == 0 {
			fmt.Println("ready")
		}
	}
}

// A process killed while it writes the ledger, over and over, at random
// moments: the ledger left behind is always one it wrote in full.
func TestKilledWriterLeavesAWholeLedger(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ls := churnLedgers()
	const rounds = 12
	midWrite := 0
	defer func() { t.Logf("%d of %d kills left a temporary file: they came mid-write", midWrite, rounds) }()
	for round := range rounds {
		dir := t.TempDir()
		cmd := helper(t, "churn", dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || line != "ready\n" {
			_ = cmd.Process.Kill()
			t.Fatalf("round %d: helper said %q, %v", round, line, err)
		}
		time.Sleep(time.Duration(rand.IntN(30_000)) * time.Microsecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait() // killed: its exit status is the kill

		s, _ := OpenFile(dir, "web")
		got, err := s.LoadLedger(context.Background())
		if err != nil {
			t.Fatalf("round %d: after the kill: %v", round, err)
		}
		if !reflect.DeepEqual(got, ls[0]) && !reflect.DeepEqual(got, ls[1]) {
			t.Fatalf("round %d: the ledger is neither one the writer wrote (%d rows)", round, len(got.Rows))
		}
		if tmps, _ := filepath.Glob(filepath.Join(dir, "web", ".ledger.json.tmp-*")); len(tmps) > 0 {
			midWrite++
		}
		// What the kill can leave is a temporary file, which nothing reads;
		// the next save goes through.
		if err := s.SaveLedger(context.Background(), ls[0]); err != nil {
			t.Fatalf("round %d: saving after the kill: %v", round, err)
		}
	}
}
