// Package iamsim evaluates IAM identity policies for tests with a real
// evaluator: @cloud-copilot/iam-simulate, which implements every condition
// operator and checks each action and resource type against the IAM
// service reference. moto does not evaluate resource or condition keys,
// and infra does not write an evaluator. The package is installed with npm
// into the user cache, once per machine (Node 20 and npm are on the
// machines CI runs on; .ci/run checks them).
package iamsim

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Package is the evaluator's npm package, pinned.
const Package = "@cloud-copilot/iam-simulate@0.1.173"

//go:embed simulate.mjs
var script []byte

// Request is one API request to evaluate: an action on one resource ARN
// ("*" for an action that takes none), with its request context
// (aws:ResourceTag/…, aws:RequestTag/…, aws:TagKeys, iam:PassedToService).
type Request struct {
	Action   string         `json:"action"`
	Resource string         `json:"resource"`
	Context  map[string]any `json:"context"`
	// BucketABAC: the S3 bucket has ABAC on. Without it S3 gives IAM none
	// of the bucket's tags, and the evaluator drops them from Context.
	BucketABAC bool `json:"bucketAbac"`
}

// Decisions of the evaluator.
const (
	Allowed          = "Allowed"
	ImplicitlyDenied = "ImplicitlyDenied"
	ExplicitlyDenied = "ExplicitlyDenied"
)

var (
	once   sync.Once
	dir    string
	setErr error
)

// Evaluate decides each request under policy, the identity policy of a
// role in account: Allowed, ImplicitlyDenied or ExplicitlyDenied. A
// request the evaluator refuses (an unknown action, a resource type the
// action does not take) fails the test with the evaluator's words.
func Evaluate(t testing.TB, account, policy string, reqs []Request) []string {
	t.Helper()
	once.Do(func() { dir, setErr = install() })
	if setErr != nil {
		t.Fatal(setErr)
	}
	in, err := json.Marshal(map[string]any{"account": account, "policy": json.RawMessage(policy), "requests": reqs})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(dir, "simulate.mjs"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("iamsim: node simulate.mjs: %v\n%s", err, stderr.String())
	}
	var results []struct {
		Decision string `json:"decision"`
		Error    string `json:"error"`
	}
	if err := json.Unmarshal(out, &results); err != nil || len(results) != len(reqs) {
		t.Fatalf("iamsim: %d answers to %d requests (%v):\n%s", len(results), len(reqs), err, out)
	}
	decisions := make([]string, len(reqs))
	for i, r := range results {
		if r.Error != "" {
			t.Errorf("iamsim: %s on %s: the evaluator refused the request: %s", reqs[i].Action, reqs[i].Resource, r.Error)
		}
		decisions[i] = r.Decision
	}
	return decisions
}

// install puts the package and the script in the user cache, unless an
// earlier run did: installed into a temporary folder, then renamed, so
// two test processes never see half an install.
func install() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	final := filepath.Join(cache, "infra-test", "iam-simulate-0.1.173")
	if _, err := os.Stat(filepath.Join(final, "node_modules", "@cloud-copilot", "iam-simulate", "package.json")); err == nil {
		return final, os.WriteFile(filepath.Join(final, "simulate.mjs"), script, 0o644)
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", fmt.Errorf("iamsim: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(final), ".iam-simulate-*")
	if err != nil {
		return "", fmt.Errorf("iamsim: %w", err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix", tmp, Package)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("iamsim: npm install %s (needs Node 20 and the npm registry): %v\n%s", Package, err, out)
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, statErr := os.Stat(final); statErr != nil {
			return "", fmt.Errorf("iamsim: %w", err)
		}
		// Another process installed it first.
	}
	return final, os.WriteFile(filepath.Join(final, "simulate.mjs"), script, 0o644)
}
