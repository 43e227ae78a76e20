// Package executortest runs the executor as Lambda runs it, for tests: the
// bootstrap binary built for provided.al2023, under the Lambda Runtime
// Interface Emulator on loopback. The test installs the emulator itself
// (a Go module), so CI needs nothing preinstalled.
package executortest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/infra-iac/infra/internal/faultproxy"
	"github.com/infra-iac/infra/internal/moto"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
)

// RIEModule is the emulator's version, checked to work here
// (docs/executor.md).
const RIEModule = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"

// FunctionName is the only name the emulator answers to.
const FunctionName = "function"

var (
	buildOnce sync.Once
	buildDir  string
	bootPath  string
	riePath   string
	buildErr  error
)

// Slowed is env with its AWS endpoint behind a proxy that adds delay to
// every call, as a real region's round trip does. A test that needs a
// fleet to outlast the function's timeout sets the floor this way, not by
// hoping the machine is slow: the apply no longer waits for the ledger's
// saves, so on loopback it is as fast as the emulator.
func Slowed(t testing.TB, env []string, delay time.Duration) []string {
	t.Helper()
	for _, kv := range env {
		target, ok := strings.CutPrefix(kv, "AWS_ENDPOINT_URL=")
		if !ok {
			continue
		}
		p, err := faultproxy.Start(target, faultproxy.Options{Delay: delay})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return append(append([]string{}, env...), moto.Endpoint(p.URL)...)
	}
	t.Fatal("executortest.Slowed: env has no AWS_ENDPOINT_URL")
	return nil
}

// Binaries builds bootstrap (CGO_ENABLED=0, -tags lambda.norpc, as for
// provided.al2023) and installs the emulator, once per test binary, and
// returns their paths. The emulator goes to the user cache, so it is
// downloaded once per machine.
func Binaries(t testing.TB) (bootstrap, rie string) {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "infra-executor")
		if buildErr != nil {
			return
		}
		bootPath = filepath.Join(buildDir, "bootstrap")
		cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", bootPath, "github.com/infra-iac/infra/cmd/infra-executor")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build bootstrap: %v\n%s", err, out)
			return
		}
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		bin := filepath.Join(cache, "infra-test", "rie-bef5c4ba774d")
		riePath = filepath.Join(bin, "aws-lambda-rie")
		if _, err := os.Stat(riePath); err == nil {
			return
		}
		cmd = exec.Command("go", "install", RIEModule)
		cmd.Env = append(os.Environ(), "GOBIN="+bin, "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("install the runtime interface emulator: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bootPath, riePath
}

// Cleanup removes the built binaries; call it from TestMain.
func Cleanup() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}

// RIE is a running emulator with the executor inside.
type RIE struct {
	// URL is the emulator's invoke endpoint, for the Lambda client's
	// BaseEndpoint (AWS_ENDPOINT_URL_LAMBDA).
	URL string
	// Started is when the emulator process was started.
	Started time.Time
	cmd     *exec.Cmd
	log     *syncBuffer
	done    chan struct{}
}

// Start runs the emulator with bootstrap inside, with env added to this
// process's environment (every variable of the emulator reaches the
// handler), and waits until it listens. It is stopped when the test ends.
func Start(t testing.TB, env ...string) *RIE {
	t.Helper()
	r, err := StartE(t, env...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}

// StartE is Start returning its error, for benchmarks that time it.
func StartE(t testing.TB, env ...string) (*RIE, error) {
	boot, rie := Binaries(t)
	// Two real ports: port 0 for the runtime API breaks the emulator.
	p1, err := moto.FreePort()
	if err != nil {
		return nil, err
	}
	p2, err := moto.FreePort()
	if err != nil {
		return nil, err
	}
	r := &RIE{URL: fmt.Sprintf("http://127.0.0.1:%d", p1), log: &syncBuffer{}, done: make(chan struct{})}
	r.cmd = exec.Command(rie, "--runtime-interface-emulator-address", fmt.Sprintf("127.0.0.1:%d", p1),
		"--runtime-api-address", fmt.Sprintf("127.0.0.1:%d", p2), boot)
	r.cmd.Dir = filepath.Dir(boot)
	r.cmd.Env = append(os.Environ(), env...)
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r.Started = time.Now()
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the emulator: %w", err)
	}
	go func() { r.cmd.Wait(); close(r.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		// Any answer means it listens; the emulator has no health path.
		resp, err := http.Get(r.URL + "/")
		if err == nil {
			resp.Body.Close()
			return r, nil
		}
		select {
		case <-r.done:
			return nil, fmt.Errorf("the emulator exited at start:\n%s", r.Log())
		default:
		}
		if time.Now().After(deadline) {
			r.Stop()
			return nil, fmt.Errorf("the emulator did not listen within 30s:\n%s", r.Log())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Log is everything the emulator and the function printed.
func (r *RIE) Log() string { return r.log.String() }

// Stop ends the emulator and the function.
func (r *RIE) Stop() {
	if r.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		<-r.done
	}
}

// InitDuration returns the init phase's duration as the emulator reports
// it ("INIT REPORT(durationMs: N)"), and whether it did. The emulator
// starts the init at the first invoke; the "Init Duration" of its REPORT
// line is not the init's, so it is not read.
func (r *RIE) InitDuration() (time.Duration, bool) {
	const mark = "INIT REPORT(durationMs: "
	s := r.Log()
	i := strings.Index(s, mark)
	if i < 0 {
		return 0, false
	}
	var ms float64
	if _, err := fmt.Sscanf(s[i+len(mark):], "%f", &ms); err != nil {
		return 0, false
	}
	return time.Duration(ms * float64(time.Millisecond)), true
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Queues lists the queues the emulator holds in eu-west-3, sorted, through
// infra's own driver: what a test reads to see what an executor did.
func Queues(t *testing.T) []string {
	t.Helper()
	b, err := awsprovider.New(context.Background(), awsprovider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := b.Driver(spec.Queues)
	rs, err := d.List(context.Background(), "eu-west-3")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	sort.Strings(out)
	return out
}
