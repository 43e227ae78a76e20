package scwfake_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v2"

	"github.com/infra-iac/infra/internal/scwfake"
)

// fixtures are the recordings of real Scaleway API exchanges (MPL-2.0
// data, read in place; see their README), at ../shared/fixtures/scaleway
// from the repository root.
const fixtures = "../../../shared/fixtures/scaleway"

// served are the recordings' product folders whose REST exchanges the fake
// answers. object (S3) and the SQS data plane go to moto; rdb (Managed
// Database) is not a product infra uses.
var served = []string{"account", "container", "function", "iam", "mnq", "registry", "sdb", "secret"}

type cassette struct {
	Interactions []struct {
		Request struct {
			Method string `yaml:"method"`
			URL    string `yaml:"url"`
			Body   string `yaml:"body"`
		} `yaml:"request"`
		Response struct {
			Code int    `yaml:"code"`
			Body string `yaml:"body"`
		} `yaml:"response"`
	} `yaml:"interactions"`
}

func loadCassette(t *testing.T, path string) cassette {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c cassette
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}

func cassettes(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, dir := range served {
		files, err := filepath.Glob(filepath.Join(fixtures, dir, "*.cassette.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, files...)
	}
	if len(out) == 0 {
		t.Fatalf("no recordings under %s: the fixtures are part of the test (CI has them beside the repository)", fixtures)
	}
	return out
}

var transient = map[string]bool{"pending": true, "creating": true, "deleting": true, "updating": true,
	"provisioning": true, "locking": true, "upgrading": true}

// terminal reports whether a recorded answer shows a settled state: an
// error, or a status that is not transient. The replay settles the fake
// before such a request, since the recordings drop repeated polls.
func terminal(code int, body string) bool {
	if code >= 400 {
		return true
	}
	var m map[string]any
	if json.Unmarshal([]byte(body), &m) != nil {
		return true
	}
	s, _ := m["status"].(string)
	return !transient[s]
}

// TestReplayRecordings sends every recorded request of the served
// products to a fresh fake per recording, in order, and requires the same
// status and the same JSON field set: top-level keys, and the keys of list
// items.
func TestReplayRecordings(t *testing.T) {
	total := 0
	for _, path := range cassettes(t) {
		name := strings.TrimPrefix(path, fixtures+"/")
		t.Run(name, func(t *testing.T) {
			n := replay(t, loadCassette(t, path))
			total += n
		})
	}
	t.Logf("%d recorded exchanges replayed", total)
}

var uuidRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// replayer maps what the recording names to what the fake made.
type replayer struct {
	fake *scwfake.Server
	ids  map[string]string
	key  string // the last API key the fake made, for scrubbed URLs
}

func (r *replayer) rewrite(s string) string {
	for rec, got := range r.ids {
		s = strings.ReplaceAll(s, rec, got)
	}
	if r.key != "" {
		s = strings.ReplaceAll(s, "SCWXXXXXXXXXXXXXXXXX", r.key)
	}
	return s
}

// learn maps the ids of a recorded answer to those of the fake's.
func (r *replayer) learn(rec, got any) {
	rm, ok1 := rec.(map[string]any)
	gm, ok2 := got.(map[string]any)
	if !ok1 || !ok2 {
		return
	}
	for _, k := range []string{"id", "access_key"} {
		a, _ := rm[k].(string)
		b, _ := gm[k].(string)
		if a != "" && b != "" && a != b {
			r.ids[a] = b
			if k == "access_key" {
				r.key = b
			}
		}
	}
	for k, v := range rm {
		rl, ok1 := v.([]any)
		gl, ok2 := gm[k].([]any)
		if ok1 && ok2 && len(rl) == len(gl) {
			for i := range rl {
				r.learn(rl[i], gl[i])
			}
		}
	}
}

// seed makes known to the fake the projects and API keys the recording
// reads without creating them (they existed before the recording).
func seed(fake *scwfake.Server, c cassette) {
	created := map[string]bool{}
	org := ""
	for _, it := range c.Interactions {
		var m map[string]any
		_ = json.Unmarshal([]byte(it.Response.Body), &m)
		if o, _ := m["organization_id"].(string); o != "" && org == "" {
			org = o
		}
	}
	for _, it := range c.Interactions {
		u, err := url.Parse(it.Request.URL)
		if err != nil {
			continue
		}
		var m map[string]any
		_ = json.Unmarshal([]byte(it.Response.Body), &m)
		if it.Request.Method == http.MethodPost && it.Response.Code == 200 {
			if id, _ := m["id"].(string); id != "" {
				created[id] = true
			}
			if k, _ := m["access_key"].(string); k != "" {
				created[k] = true
			}
		}
		if strings.HasPrefix(u.Path, "/account/v3/projects/") && it.Response.Code == 200 && !created[m["id"].(string)] {
			fake.AddProject(m["id"].(string), m["organization_id"].(string), fmt.Sprint(m["name"]))
		}
		if strings.HasPrefix(u.Path, "/iam/v1alpha1/api-keys/") && it.Response.Code == 200 && !created[fmt.Sprint(m["access_key"])] {
			fake.AddAPIKey(m["access_key"].(string), fmt.Sprint(m["default_project_id"]), fmt.Sprint(m["application_id"]))
		}
		// A project a request names must exist for the fake to accept it.
		for _, p := range append(uuidRe.FindAllString(it.Request.Body, -1), u.Query()["project_id"]...) {
			if !created[p] && strings.Contains(it.Request.Body+u.RawQuery, p) &&
				(strings.Contains(it.Request.Body, `"project_id":"`+p) || u.Query().Get("project_id") == p) {
				fake.AddProject(p, org, "recorded")
			}
		}
	}
}

// replay runs one recording and returns how many exchanges it compared.
func replay(t *testing.T, c cassette) int {
	fake := scwfake.Start(scwfake.Options{SQSEndpoint: "https://sqs.mnq.fr-par.scaleway.com"})
	defer fake.Close()
	seed(fake, c)
	r := &replayer{fake: fake, ids: map[string]string{}}
	n := 0
	upload := ""
	for i, it := range c.Interactions {
		u, err := url.Parse(it.Request.URL)
		if err == nil && upload != "" && it.Request.Method == http.MethodPut && strings.Contains(u.RawQuery, "X-Amz-Signature") {
			// The function code upload goes to the presigned URL the
			// fake's upload-url answer gave.
			resp, err := http.DefaultClient.Do(mustRequest(t, http.MethodPut, upload, it.Request.Body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode/100 != it.Response.Code/100 {
				t.Errorf("exchange %d: code upload: status %d, recorded %d", i, resp.StatusCode, it.Response.Code)
			}
			n++
			continue
		}
		if err != nil || u.Host != "api.scaleway.com" {
			continue // S3 and the SQS data plane are moto's
		}
		if terminal(it.Response.Code, it.Response.Body) {
			fake.Settle()
		}
		// The recording shows Queues' eventual consistency: sqs-info
		// refused right after an activation, a new credential not found
		// yet. The fake lags on request.
		if (it.Response.Code == 403 && strings.HasSuffix(u.Path, "/sqs-info")) ||
			(it.Response.Code == 404 && it.Request.Method == http.MethodGet && strings.Contains(u.Path, "/sqs-credentials/")) {
			fake.Lag()
		}
		body := r.rewrite(it.Request.Body)
		req, err := http.NewRequest(it.Request.Method, fake.URL+r.rewrite(u.RequestURI()), strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		n++
		where := fmt.Sprintf("exchange %d: %s %s", i, it.Request.Method, u.Path)
		if resp.StatusCode != it.Response.Code {
			t.Errorf("%s: status %d, recorded %d\n  fake: %s\n  recorded: %s", where, resp.StatusCode, it.Response.Code, clip(got), clip([]byte(it.Response.Body)))
			continue
		}
		for _, p := range compareShape([]byte(it.Response.Body), got) {
			t.Errorf("%s: %s", where, p)
		}
		var rec, fk any
		if json.Unmarshal([]byte(it.Response.Body), &rec) == nil && json.Unmarshal(got, &fk) == nil {
			r.learn(rec, fk)
			if m, ok := fk.(map[string]any); ok && strings.HasSuffix(u.Path, "/upload-url") {
				upload, _ = m["url"].(string)
			}
		}
	}
	return n
}

func mustRequest(t *testing.T, method, u, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// compareShape compares the JSON field sets of a recorded and a fake
// answer: the top-level keys, and for each list of objects the keys its
// items carry. Values are not compared: ids, times and names differ.
func compareShape(recorded, got []byte) []string {
	recorded, got = bytes.TrimSpace(recorded), bytes.TrimSpace(got)
	if len(recorded) == 0 && len(got) == 0 {
		return nil
	}
	var rec, fk map[string]any
	if err := json.Unmarshal(recorded, &rec); err != nil {
		return nil // not a JSON object (an empty 204): the status said it all
	}
	if err := json.Unmarshal(got, &fk); err != nil {
		return []string{fmt.Sprintf("recorded a JSON object, the fake answered %q", clip(got))}
	}
	var out []string
	if d := diffKeys(keysOf(rec), keysOf(fk)); d != "" {
		out = append(out, "top-level keys: "+d)
	}
	for k, v := range rec {
		rl, ok := v.([]any)
		if !ok {
			continue
		}
		gl, _ := fk[k].([]any)
		ri, gi := itemKeys(rl), itemKeys(gl)
		if ri == nil || (gi == nil && len(gl) == 0) {
			continue // an empty list on either side has no item shape to compare
		}
		if d := diffKeys(ri, gi); d != "" {
			out = append(out, fmt.Sprintf("keys of %s items: %s", k, d))
		}
	}
	return out
}

func keysOf(m map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

// itemKeys is the union of the keys of a list's object items; nil when it
// holds none.
func itemKeys(l []any) map[string]bool {
	var out map[string]bool
	for _, x := range l {
		if m, ok := x.(map[string]any); ok {
			if out == nil {
				out = map[string]bool{}
			}
			for k := range m {
				out[k] = true
			}
		}
	}
	return out
}

func diffKeys(rec, got map[string]bool) string {
	var missing, extra []string
	for k := range rec {
		if !got[k] {
			missing = append(missing, k)
		}
	}
	for k := range got {
		if !rec[k] {
			extra = append(extra, k)
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return ""
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return fmt.Sprintf("missing %v, extra %v", missing, extra)
}

// TestReplayComparisonCanFail shows the comparison is not vacuous: one
// field name changed in a copy of a recorded answer is reported, at the
// top level and inside a list item.
func TestReplayComparisonCanFail(t *testing.T) {
	c := loadCassette(t, filepath.Join(fixtures, "secret", "data-source-secret-basic.cassette.yaml"))
	var single, list string
	for _, it := range c.Interactions {
		u, _ := url.Parse(it.Request.URL)
		if it.Response.Code != 200 || u.Host != "api.scaleway.com" {
			continue
		}
		switch {
		case strings.HasSuffix(u.Path, "/secrets") && it.Request.Method == http.MethodGet && strings.Contains(it.Response.Body, `"secrets":[{`):
			list = it.Response.Body
		case it.Request.Method == http.MethodPost && strings.HasSuffix(u.Path, "/secrets"):
			single = it.Response.Body
		}
	}
	if single == "" || list == "" {
		t.Fatal("the recording no longer has a secret and a non-empty listing")
	}
	if p := compareShape([]byte(single), []byte(single)); len(p) != 0 {
		t.Fatalf("an answer differs from itself: %v", p)
	}
	mutated := strings.Replace(single, `"deletion_requested_at"`, `"deletion_requested"`, 1)
	p := compareShape([]byte(single), []byte(mutated))
	if len(p) != 1 || !strings.Contains(p[0], "deletion_requested_at") || !strings.Contains(p[0], "deletion_requested]") {
		t.Fatalf("a renamed top-level field was not reported: %v", p)
	}
	mutated = strings.Replace(list, `"version_count"`, `"versions_count"`, 1)
	p = compareShape([]byte(list), []byte(mutated))
	if len(p) != 1 || !strings.Contains(p[0], "keys of secrets items") {
		t.Fatalf("a renamed field of a list item was not reported: %v", p)
	}
}
