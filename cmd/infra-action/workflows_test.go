package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-githubactions"
	"gopkg.in/yaml.v2"

	"github.com/infra-iac/infra/cli/workflows"
	"github.com/infra-iac/infra/executor/executortest"
)

// lintProject lays out a repository for actionlint: ci.yml as it is, and
// the user workflows with infra-iac/infra@... replaced by ./, beside a copy
// of action.yml, so that actionlint checks every input they pass against
// action.yml (it does not check a remote action's inputs).
func lintProject(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	dir := t.TempDir()
	// actionlint finds the project by its .git.
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(root, "action.yml"), filepath.Join(dir, "action.yml"))
	copyFile(t, filepath.Join(root, ".github", "workflows", "ci.yml"), filepath.Join(dir, ".github", "workflows", "ci.yml"))
	for _, name := range workflows.Names {
		b, err := workflows.Files.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		local := strings.ReplaceAll(string(b), "uses: infra-iac/infra@main", "uses: ./")
		writeFile(t, filepath.Join(dir, ".github", "workflows", name), local)
	}
	return dir
}

func actionlint(t *testing.T, dir string) (string, error) {
	cmd := exec.Command(tool(t, actionlintModule), "-no-color")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestWorkflowsAndActionPassActionlint(t *testing.T) {
	if testing.Short() {
		t.Skip("installs actionlint")
	}
	dir := lintProject(t)
	if out, err := actionlint(t, dir); err != nil {
		t.Fatalf("actionlint %s: %v\n%s", actionlintModule, err, out)
	}
	// The check has teeth: an input action.yml does not declare fails it.
	sweep := filepath.Join(dir, ".github", "workflows", "sweep.yml")
	b, _ := os.ReadFile(sweep)
	writeFile(t, sweep, strings.Replace(string(b), "sweep-prefix:", "sweep-prefx:", 1))
	if out, err := actionlint(t, dir); err == nil || !strings.Contains(out, `input "sweep-prefx" is not defined in action "infra"`) {
		t.Fatalf("actionlint did not check the inputs against action.yml: %v\n%s", err, out)
	}
}

// docs/ci.md shows each workflow exactly as cli/workflows has it.
func TestDocsShowTheWorkflowsVerbatim(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range workflows.Names {
		b, _ := workflows.Files.ReadFile(name)
		block := "<!-- cli/workflows/" + name + " -->\n```yaml\n" + string(b) + "```\n"
		if !strings.Contains(string(doc), block) {
			t.Errorf("docs/ci.md does not show cli/workflows/%s verbatim", name)
		}
	}
}

type actionMeta struct {
	Inputs  map[string]map[string]any `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID               string            `yaml:"id"`
			Uses             string            `yaml:"uses"`
			Run              string            `yaml:"run"`
			WorkingDirectory string            `yaml:"working-directory"`
			Env              map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

// action.yml and the binary agree: every input reaches the binary under
// the name it reads, every output is one it sets, and no other action is
// used.
func TestActionYAMLMatchesTheBinary(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var m actionMeta
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Runs.Using != "composite" || len(m.Runs.Steps) != 2 {
		t.Fatalf("runs: %+v", m.Runs)
	}
	if !strings.Contains(m.Runs.Steps[0].Run, "go build") || !strings.Contains(m.Runs.Steps[0].Run, "./cmd/infra-action") ||
		m.Runs.Steps[0].WorkingDirectory != "${{ github.action_path }}" {
		t.Errorf("the first step does not build ./cmd/infra-action in the action's path: %+v", m.Runs.Steps[0])
	}
	run := m.Runs.Steps[1]
	for _, s := range m.Runs.Steps {
		if s.Uses != "" {
			t.Errorf("action.yml uses another action, %s: act and air-gapped runners cannot fetch it", s.Uses)
		}
	}
	var names []string
	for name := range m.Inputs {
		names = append(names, name)
	}
	sort.Strings(names)
	env := map[string]string{}
	for _, name := range names {
		if name == "working-directory" {
			if run.WorkingDirectory != "${{ inputs.working-directory }}" {
				t.Errorf("working-directory is not the run step's: %q", run.WorkingDirectory)
			}
			continue
		}
		key := "INPUT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		if run.Env[key] != "${{ inputs."+name+" }}" {
			t.Errorf("input %s does not reach the binary as %s (env has %q)", name, key, run.Env[key])
		}
		env[key] = "x-" + name
	}
	// Every input passed is one the binary reads.
	vars := map[string]string{}
	for k, v := range env {
		vars[k] = v
	}
	vars["INPUT_COMMAND"], vars["INPUT_COMMENT"], vars["INPUT_SWEEP_DELETE"], vars["INPUT_ON_PLAN_CHANGED"] = "plan", "false", "true", "apply"
	vars["INPUT_TARGETS"], vars["INPUT_REPLACE"] = "aws/queues/jobs\naws/queues/mail", "aws/queues/jobs, aws/queues/mail"
	vars["INPUT_LOCK_TIMEOUT"] = "90s"
	in, err := readInputs(githubactions.New(githubactions.WithWriter(io.Discard), githubactions.WithGetenv(func(k string) string { return vars[k] })))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{"command": in.command, "fleet": strings.Join(in.fleets, " "), "state": in.state, "executor": in.executor,
		"github-token": in.token, "sweep-prefix": in.sweepPrefix, "sweep-older-than": in.sweepAge, "on-plan-changed": in.onPlanChanged}
	for name, v := range got {
		if want := vars["INPUT_"+strings.ToUpper(strings.ReplaceAll(name, "-", "_"))]; v != want {
			t.Errorf("input %s: the binary read %q, action.yml passes %q", name, v, want)
		}
	}
	if fmt.Sprint(in.scope.Targets) != "[aws/queues/jobs aws/queues/mail]" || fmt.Sprint(in.scope.Replace) != "[aws/queues/jobs aws/queues/mail]" {
		t.Errorf("targets and replace not read: %+v", in.scope)
	}
	if in.lockTimeout != 90*time.Second {
		t.Errorf("lock-timeout not read: %s", in.lockTimeout)
	}
	if in.comment || !in.sweepDelete {
		t.Errorf("boolean inputs not read: %+v", in)
	}
	for _, out := range []string{"plan-id", "has-changes", "has-destroys", "summary", "exports"} {
		if m.Outputs[out].Value != "${{ steps.run.outputs."+out+" }}" || run.ID != "run" {
			t.Errorf("output %s is not the run step's: %q", out, m.Outputs[out].Value)
		}
	}
	if len(m.Outputs) != 5 {
		t.Errorf("outputs: %v", m.Outputs)
	}
}

// docs/ci.md's local executor runs the emulator the tests run, under the
// one name it answers to, and points only the Lambda client at it.
func TestDocsRunTheLocalExecutorAsTheTestsDo(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## Testing a workflow against a local executor\n")
	if !ok {
		t.Fatal("docs/ci.md has no section on a local executor")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, want := range []string{
		"go install " + executortest.RIEModule,
		"-tags lambda.norpc",
		"CGO_ENABLED=0",
		"export AWS_ENDPOINT_URL_LAMBDA=",
		"--function " + executortest.FunctionName + " ",
		"INPUT_EXECUTOR=" + executortest.FunctionName + " ",
		"INFRA_STATE=s3://",
	} {
		if !strings.Contains(section, want) {
			t.Errorf("the local executor section lacks %q", want)
		}
	}
}
