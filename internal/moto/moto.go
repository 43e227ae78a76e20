// Package moto starts moto_server, the AWS API emulator, on a free loopback
// port for tests and the demo. Code under test never knows about it: it
// reaches the emulator only through the SDK's own AWS_ENDPOINT_URL.
//
// The server runs with its S3 object writes serialized (serialized.py): moto
// checks a conditional write and then writes, in two steps, on a threaded
// server, so two racing If-None-Match: * writes can both succeed there,
// where S3 lets exactly one through. Serialized, the emulator is as atomic
// as S3, and a test of infra's S3 lock passes or fails on the lock alone.
// The cost is nil: object writes are a small part of any test's calls.
//
// Stock mode (StartStock, SharedStock) runs moto_server as installed, with
// none of the patches: it is what a user runs, and the demo and the S3
// driver's own tests hold infra to it. Nothing in infra needs a patch to
// work; each one makes the emulator behave as AWS does where a test
// observes the difference (serialized.py says which, and why).
package moto

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is a running moto_server.
type Server struct {
	URL  string
	Port int
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// control reaches moto's own API, never through a proxy the environment
// names.
var control = &http.Client{Transport: &http.Transport{Proxy: nil}}

// Account is the account moto reports for any credentials.
const Account = "123456789012"

// Start launches moto_server on a free loopback port and waits until it
// answers. logDir receives moto.log.
func Start(ctx context.Context, logDir string) (*Server, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	return startOn(ctx, logDir, port, false)
}

// StartStock is Start without the patches: moto_server as installed.
func StartStock(ctx context.Context, logDir string) (*Server, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	return startOn(ctx, logDir, port, true)
}

// startOn launches moto_server on port, patched unless stock.
func startOn(ctx context.Context, logDir string, port int, stock bool) (*Server, error) {
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, fmt.Errorf("moto_server is not installed (pip install 'moto[server]'): %w", err)
	}
	logPath := filepath.Join(logDir, fmt.Sprintf("moto-%d.log", port))
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := []string{"-H", "127.0.0.1", "-p", fmt.Sprint(port)}
	cmd := exec.Command(bin, args...)
	if !stock {
		script := filepath.Join(logDir, fmt.Sprintf("moto-%d.py", port))
		if err := os.WriteFile(script, serialized, 0o644); err != nil {
			logFile.Close()
			return nil, err
		}
		cmd = exec.Command(interpreter(bin), append([]string{script}, args...)...)
	}
	cmd.Env = append(os.Environ(), "MOTO_IAM_LOAD_MANAGED_POLICIES=true")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, so Stop takes the Flask workers with it; and
	// a parent that dies without stopping it (a test timeout, a kill) takes
	// it along instead of leaking a server.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start moto_server: %w", err)
	}
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), Port: port, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { cmd.Wait(); logFile.Close(); close(s.done) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := control.Get(s.URL + "/moto-api/")
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("moto_server exited at start; see %s", logPath)
		case <-ctx.Done():
			s.Stop()
			return nil, ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("moto_server did not answer within 60s; see %s", logPath)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s, nil
}

// serialized starts moto_server with its S3 object writes serialized, and
// the other patches that make it behave as AWS does.
//
//go:embed serialized.py
var serialized []byte

// interpreter returns the Python that runs moto_server: the one its
// script names on its first line, or, when moto_server is not a Python
// script (a pyenv shim is a shell script), the python3 on the PATH, which
// such a shim resolves the same way.
func interpreter(motoServer string) string {
	f, err := os.Open(motoServer)
	if err == nil {
		defer f.Close()
		line, _ := bufio.NewReader(f).ReadString('\n')
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "#!"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 1 && strings.Contains(filepath.Base(fields[0]), "python") {
				return fields[0]
			}
			if len(fields) == 2 && filepath.Base(fields[0]) == "env" && strings.Contains(fields[1], "python") {
				return fields[1]
			}
		}
	}
	return "python3"
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Env returns the environment that points the AWS SDK at the server, with
// static test credentials.
func (s *Server) Env() []string {
	return append(Endpoint(s.URL),
		"AWS_ACCESS_KEY_ID=testing",
		"AWS_SECRET_ACCESS_KEY=testing",
		"AWS_SESSION_TOKEN=",
		"AWS_REGION=eu-west-3",
		"AWS_CONFIG_FILE=/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"AWS_EC2_METADATA_DISABLED=true",
	)
}

// Endpoint is the environment that sends the AWS SDK to url: the SDK's
// own AWS_ENDPOINT_URL, which is all a user sets.
func Endpoint(url string) []string {
	return []string{"AWS_ENDPOINT_URL=" + url}
}

// Setenv points this process's AWS SDK at the server.
func (s *Server) Setenv() {
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
}

// Reset wipes every resource in the emulator.
func (s *Server) Reset() error {
	resp, err := control.Post(s.URL+"/moto-api/reset", "application/json", nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("moto reset: %s", resp.Status)
	}
	return nil
}

// Config posts moto's own configuration, such as {"lambda":{"use_docker":false}}.
func (s *Server) Config(body string) error {
	resp, err := control.Post(s.URL+"/moto-api/config", "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("moto config: %s", resp.Status)
	}
	return nil
}

// Stop ends the server and its children.
func (s *Server) Stop() error {
	if s == nil || s.cmd.Process == nil {
		return nil
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	return nil
}

// sharedServer is one server a test binary starts at its first use.
type sharedServer struct {
	once  sync.Once
	srv   *Server
	err   error
	stock bool
}

var shared, sharedStock = &sharedServer{}, &sharedServer{stock: true}

func (s *sharedServer) get(t testing.TB) *Server {
	t.Helper()
	s.once.Do(func() {
		dir, err := os.MkdirTemp("", "moto")
		if err != nil {
			s.err = err
			return
		}
		port, err := FreePort()
		if err != nil {
			s.err = err
			return
		}
		s.srv, s.err = startOn(context.Background(), dir, port, s.stock)
	})
	if s.err != nil {
		t.Fatalf("moto: %v", s.err)
	}
	return s.srv
}

// Shared starts one server for the test binary (call Stop from TestMain).
// When moto_server is not installed the test fails: CI installs it, and a
// skipped emulator test would hide a missing dependency.
func Shared(t testing.TB) *Server {
	t.Helper()
	return shared.get(t)
}

// SharedStock is Shared for a stock server (StartStock), the binary's
// one, beside the patched one.
func SharedStock(t testing.TB) *Server {
	t.Helper()
	return sharedStock.get(t)
}

// Fresh is the shared server, wiped, with this process's AWS SDK pointed
// at it: where a test that owns the emulator for its length starts.
func Fresh(t testing.TB) *Server {
	t.Helper()
	return fresh(t, Shared(t))
}

// FreshStock is Fresh for the stock server (SharedStock).
func FreshStock(t testing.TB) *Server {
	t.Helper()
	return fresh(t, SharedStock(t))
}

func fresh(t testing.TB, srv *Server) *Server {
	t.Helper()
	srv.Setenv()
	if err := srv.Reset(); err != nil {
		t.Fatal(err)
	}
	return srv
}

// Main runs a test binary's tests, stops the shared server after them and
// runs the cleanups: a package's TestMain is
// `func TestMain(m *testing.M) { moto.Main(m) }`.
func Main(m *testing.M, cleanups ...func()) {
	code := m.Run()
	StopShared()
	for _, c := range cleanups {
		c()
	}
	os.Exit(code)
}

// StopShared stops the servers Shared and SharedStock started, if any.
// Call it from TestMain.
func StopShared() {
	for _, s := range []*sharedServer{shared, sharedStock} {
		if s.srv != nil {
			s.srv.Stop()
		}
	}
}
