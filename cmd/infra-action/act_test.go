package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/render"
)

// actWorkflow runs the action as a user's workflow would, from the
// repository's own action.yml (uses: ./).
const actWorkflow = `name: infra plan
on:
  pull_request:
permissions:
  contents: read
  pull-requests: write
jobs:
  plan:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - id: infra
        uses: ./
        with:
          command: plan
          fleet: fleet.json
          state: .infra-act
      - name: Show the outputs
        run: echo "outputs plan-id=${{ steps.infra.outputs.plan-id }} has-changes=${{ steps.infra.outputs.has-changes }} summary=${{ steps.infra.outputs.summary }}"
`

const actFleet = `{
  "apiVersion": "infra/v1",
  "fleet": "act",
  "accounts": {"aws": "123456789012"},
  "placement": {"aws": "eu-west-3"},
  "resources": [
    {"address": "aws/queues/act-jobs", "spec": {"visibilityTimeoutSec": 45}}
  ]
}
`

// action.yml itself, run by nektos/act in host mode (no Docker): act
// builds the action from this repository's source with the host's Go, runs
// it on a pull_request event, and the plan lands as a comment on the fake
// GitHub, with the cloud played by moto.
func TestActionYAMLUnderAct(t *testing.T) {
	if testing.Short() {
		t.Skip("installs nektos/act and builds the action")
	}
	act := tool(t, actModule)
	srv, err := moto.Start(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	gh := newFakeGitHub(t, token)

	repo := mirrorRepo(t)
	writeFile(t, filepath.Join(repo, ".github", "workflows", "act-plan.yml"), actWorkflow)
	writeFile(t, filepath.Join(repo, "fleet.json"), actFleet)
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "act test")
	// Without an origin act names the repository nektos/act.
	git(t, repo, "remote", "add", "origin", "https://github.com/acme/shop.git")
	head := strings.TrimSpace(git(t, repo, "rev-parse", "HEAD"))
	event, _ := json.Marshal(prEvent(7, head))
	eventPath := filepath.Join(t.TempDir(), "event.json")
	writeFile(t, eventPath, string(event))

	args := []string{"pull_request", "-e", eventPath, "-W", ".github/workflows/act-plan.yml",
		"-P", "ubuntu-latest=-self-hosted", "--action-cache-path", t.TempDir(), "--no-cache-server",
		"-s", "GITHUB_TOKEN=" + token, "--env", "GITHUB_API_URL=" + gh.URL()}
	for _, kv := range srv.Env() {
		args = append(args, "--env", kv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, act, args...)
	cmd.Dir = repo
	cmd.Stdin = nil
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	log := out.String()
	if err != nil {
		t.Fatalf("act: %v\n%s", err, log)
	}
	bodies := gh.bodies(7)
	if len(bodies) != 1 || !strings.HasPrefix(bodies[0], render.PlanMarker("act")) || !strings.Contains(bodies[0], "aws/queues/act-jobs") {
		t.Fatalf("comments on #7 after act: %q\n%s", bodies, log)
	}
	id, sha, _ := render.ReadMarkdownPlanID(bodies[0])
	if sha != head || !strings.Contains(log, "outputs plan-id="+id+" has-changes=true summary=Plan: 1 to create") {
		t.Fatalf("the comment is for %s (want %s), or the outputs did not reach the workflow:\n%s", sha, head, log)
	}
	if strings.Contains(log, token) {
		t.Fatal("the token appears in act's output")
	}
}

// mirrorRepo copies the working tree (tracked files and untracked ones git
// does not ignore) into a new directory: the action builds from it.
func mirrorRepo(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	dst := t.TempDir()
	files := git(t, root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	for _, f := range strings.Split(files, "\x00") {
		if f == "" {
			continue
		}
		src := filepath.Join(root, f)
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, or not a file
		}
		copyFile(t, src, filepath.Join(dst, f))
	}
	return dst
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=infra", "GIT_AUTHOR_EMAIL=infra@example.invalid",
		"GIT_COMMITTER_NAME=infra", "GIT_COMMITTER_EMAIL=infra@example.invalid")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}
