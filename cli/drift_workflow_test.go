package cli

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v2"

	"github.com/infra-iac/infra/internal/moto"
)

// workflowStep is what this test reads of a GitHub workflow's step.
type workflowStep struct {
	ID   string            `yaml:"id"`
	Name string            `yaml:"name"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	Env  map[string]string `yaml:"env"`
	Run  string            `yaml:"run"`
}

// jobRun is what one run of a job did: the steps that ran, the one that
// failed, and each gh command line the steps ran.
type jobRun struct {
	ran    []string
	failed string
	gh     []string
	// body is the last --body-file gh was given.
	body string
}

// actionsRunner runs a job's run steps the way a GitHub runner does: in
// order, each as `bash -e` with its env (expressions resolved from exprs),
// GITHUB_OUTPUT read back for the next steps' if, and no step after a
// failure. gh is a fake that records its arguments and answers issue list
// with openIssue. A step that uses an action is skipped: the test's own
// environment stands for what those actions set up (Go, credentials).
type actionsRunner struct {
	t        *testing.T
	dir      string
	env      []string
	exprs    map[string]string
	skipUses []string
}

var (
	stepIf   = regexp.MustCompile(`^steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+) == '([^']*)'$`)
	stepExpr = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)
	// stepOutput is an earlier step's output, in an expression.
	stepOutput = regexp.MustCompile(`^steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)$`)
)

func (r *actionsRunner) run(steps []workflowStep, openIssue string) jobRun {
	t := r.t
	t.Helper()
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	runnerTemp := filepath.Join(tmp, "runner-temp")
	ghLog := filepath.Join(tmp, "gh.log")
	for _, d := range []string{bin, runnerTemp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fake := `#!/bin/sh
echo "gh $*" >> "$GH_LOG"
args="$*"
while [ $# -gt 0 ]; do
  if [ "$1" = --body-file ]; then cp "$2" "$GH_LOG.body"; fi
  shift
done
case "$args" in
  "issue list"*) echo "$GH_OPEN_ISSUE" ;;
esac
`
	if err := os.WriteFile(filepath.Join(bin, "gh"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	var res jobRun
	outputs := map[string]map[string]string{}
	expand := func(s string) string {
		return stepExpr.ReplaceAllStringFunc(s, func(m string) string {
			expr := stepExpr.FindStringSubmatch(m)[1]
			if o := stepOutput.FindStringSubmatch(expr); o != nil {
				return outputs[o[1]][o[2]]
			}
			v, ok := r.exprs[expr]
			if !ok {
				t.Fatalf("the workflow uses ${{ %s }}, which this test does not provide", expr)
			}
			return v
		})
	}
	for i, s := range steps {
		if s.Uses != "" {
			action, _, _ := strings.Cut(s.Uses, "@")
			if !contains(r.skipUses, action) {
				t.Fatalf("step %d uses %s, whose effect this test does not stand in for", i, s.Uses)
			}
			continue
		}
		name := s.Name
		if name == "" {
			name = s.ID
		}
		if s.If != "" {
			m := stepIf.FindStringSubmatch(s.If)
			if m == nil {
				t.Fatalf("step %q: the test cannot evaluate if: %s", name, s.If)
			}
			if outputs[m[1]][m[2]] != m[3] {
				continue
			}
		}
		script := filepath.Join(tmp, fmt.Sprintf("step-%d.sh", i))
		out := filepath.Join(tmp, fmt.Sprintf("step-%d.out", i))
		if err := os.WriteFile(script, []byte(expand(s.Run)), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("bash", "-e", script)
		cmd.Dir = r.dir
		cmd.Env = append(append(os.Environ(), r.env...),
			"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
			"RUNNER_TEMP="+runnerTemp, "GITHUB_OUTPUT="+out, "GH_LOG="+ghLog, "GH_OPEN_ISSUE="+openIssue)
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+expand(v))
		}
		log, err := cmd.CombinedOutput()
		res.ran = append(res.ran, name)
		t.Logf("step %q:\n%s", name, log)
		if err != nil {
			res.failed = name
			break
		}
		if s.ID != "" {
			outputs[s.ID] = map[string]string{}
			b, _ := os.ReadFile(out)
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				if k, v, ok := strings.Cut(l, "="); ok {
					outputs[s.ID][k] = v
				}
			}
		}
	}
	if b, err := os.ReadFile(ghLog); err == nil {
		res.gh = strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	if b, err := os.ReadFile(ghLog + ".body"); err == nil {
		res.body = string(b)
	}
	return res
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// The drift workflow init writes, its own steps run as written against a
// fleet on moto: no issue while the estate matches; an out-of-band change
// opens one, titled with the fleet, whose body is the markdown drift report; the next run edits it rather
// than opening a second, and converging again closes it. A failure to plan
// fails the job instead of reading as drift or as no drift.
func TestInitDriftWorkflowAgainstADriftedFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a fleet program and runs it against the emulator")
	}
	srv := moto.Shared(t)
	dir, _ := initProject(t, "drift")
	shell(t, dir, nil, "go mod tidy")
	b, err := os.ReadFile(filepath.Join(dir, ".github", "workflows", "infra-drift.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []workflowStep `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	steps := wf.Jobs["drift"].Steps
	if len(steps) == 0 {
		t.Fatalf("no steps in job drift:\n%s", b)
	}
	stateDir := filepath.Join(dir, "live-state")
	r := &actionsRunner{t: t, dir: dir, env: srv.Env(),
		skipUses: []string{"actions/checkout", "actions/setup-go", "aws-actions/configure-aws-credentials"},
		exprs: map[string]string{
			"vars.INFRA_STATE": stateDir, "github.token": "gh-token", "github.server_url": "https://github.example",
			"github.repository": "acme/shop", "github.run_id": "4242",
		}}
	const planStep, openStep, closeStep = "infra drift --detailed-exitcode", "Open or update the drift issue", "Close the drift issue"
	const list = `gh issue list --label infra-drift --state open --search "infra drift: fleet drift" in:title --json number,title --jq .[] | select(.title == "infra drift: fleet drift") | .number`

	// main applied: no drift, no issue to close.
	shell(t, dir, srv.Env(), "go run ./infra apply --yes --state "+stateDir)
	run := r.run(steps, "")
	if run.failed != "" || strings.Join(run.ran, "|") != planStep+"|"+closeStep {
		t.Fatalf("matching estate: ran %q, failed %q", run.ran, run.failed)
	}
	if strings.Join(run.gh, "\n") != list {
		t.Fatalf("matching estate, no open issue: gh %q", run.gh)
	}

	// Someone deletes the bucket by hand: drift.
	req, _ := http.NewRequest(http.MethodDelete, srv.URL+"/drift-assets", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete the bucket behind infra's back: %s", resp.Status)
	}
	run = r.run(steps, "")
	if run.failed != "" || strings.Join(run.ran, "|") != planStep+"|"+openStep {
		t.Fatalf("drift: ran %q, failed %q", run.ran, run.failed)
	}
	if len(run.gh) != 3 || !strings.HasPrefix(run.gh[0], "gh label create infra-drift ") ||
		run.gh[1] != list || !strings.HasPrefix(run.gh[2], "gh issue create --title infra drift: fleet drift --label infra-drift --body-file ") {
		t.Fatalf("drift, no open issue: gh %q", run.gh)
	}
	for _, want := range []string{
		"The live estate changed out of band since the last apply (checked by [this run](https://github.example/acme/shop/actions/runs/4242)).",
		"### infra drift: fleet `drift`",
		"Drift: 1 of 1 managed resource(s) changed out of band since ",
		"| `aws/object-store/drift-assets` | deleted | exists in `eu-west-3` | gone |",
	} {
		if !strings.Contains(run.body, want) {
			t.Errorf("the issue body lacks %q:\n%s", want, run.body)
		}
	}
	if strings.Contains(run.body, "```") {
		t.Errorf("the issue body is the text plan in a code block, not the markdown rendering:\n%s", run.body)
	}

	// Still drifted, with the issue open: edited, not duplicated.
	run = r.run(steps, "7")
	if run.failed != "" || len(run.gh) != 3 || !strings.HasPrefix(run.gh[2], "gh issue edit 7 --body-file ") {
		t.Fatalf("drift, issue 7 open: ran %q, failed %q, gh %q", run.ran, run.failed, run.gh)
	}

	// main applied again: the issue is closed.
	shell(t, dir, srv.Env(), "go run ./infra apply --yes --state "+stateDir)
	run = r.run(steps, "7")
	if run.failed != "" || strings.Join(run.ran, "|") != planStep+"|"+closeStep ||
		len(run.gh) != 2 || !strings.HasPrefix(run.gh[1], "gh issue close 7 --comment ") {
		t.Fatalf("converged, issue 7 open: ran %q, failed %q, gh %q", run.ran, run.failed, run.gh)
	}

	// A drift that fails is neither drift nor its absence: the job fails.
	r.exprs["vars.INFRA_STATE"] = "s3://"
	run = r.run(steps, "7")
	if run.failed != planStep || len(run.gh) != 0 {
		t.Fatalf("failed plan: ran %q, failed %q, gh %q", run.ran, run.failed, run.gh)
	}
}
