package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// An update reads field: before -> after; a replace names the field that
// forces it and its order.
func TestTextShowsUpdateAndReplace(t *testing.T) {
	w := newWorld(t)
	w.apply(doc(sg, queue))
	p := w.plan(doc(strings.Replace(sg, `"description": "web"`, `"description": "web tier"`, 1),
		strings.Replace(queue, "30", "120", 1)))
	var text bytes.Buffer
	if err := Text(&text, p, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"  ~ aws/queues/jobs                      update  visibilityTimeoutSec: 30 -> 120",
		`-/+ aws/security-group/web               replace description: "web" -> "web tier" (description forces replacement; deletes first`,
		"Plan: 0 to create, 1 to update, 1 to replace, 0 to delete.",
	} {
		if !strings.Contains(text.String(), line) {
			t.Errorf("text lacks %q:\n%s", line, text.String())
		}
	}
}

// A replace that takes a dependent along says so, in text and markdown.
func TestReplaceCauseIsShown(t *testing.T) {
	w := newWorld(t)
	w.apply(doc(sg, instance))
	p := w.plan(doc(strings.Replace(sg, `"description": "web"`, `"description": "web tier"`, 1), instance))
	var text strings.Builder
	if err := Text(&text, p, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "aws/security-group/web is replaced") || !strings.Contains(text.String(), "deletes first") {
		t.Errorf("text plan does not carry the cause and the order:\n%s", text.String())
	}
	if md := Markdown(p, MarkdownOptions{}); !strings.Contains(md, "aws/security-group/web is replaced") {
		t.Errorf("markdown plan does not carry the cause:\n%s", md)
	}
}

// Neither the text nor the JSON of a plan shows a secret the apply wrote.
func TestTextAndJSONNeverShowASecret(t *testing.T) {
	const canary = "CANARY-s3cr3t-7f1e"
	w := newWorld(t)
	w.env["DB_PASSWORD"] = canary
	p := w.apply(doc(password, db, dbURL))
	var out bytes.Buffer
	if err := Text(&out, p, TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&out, p); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), canary) {
		t.Fatalf("the canary leaked:\n%s", out.String())
	}
}

// A plan with nothing to do but something to look at does not claim the
// cloud matches, in any rendering.
func TestAttentionIsNotNoChanges(t *testing.T) {
	w := newWorld(t)
	w.cloud.Put(spec.AWS, spec.Queues, providers.Resource{Name: "jobs", Region: "eu-west-3", Owner: "other",
		Fields: map[string]any{"visibilityTimeoutSec": 30.0}})
	p := w.plan(doc(queue))
	if len(p.Actions) != 0 || len(p.Attention) != 1 || p.Attention[0].Subject != "aws/queues/jobs" {
		t.Fatalf("actions %v, attention %+v", p.Actions, p.Attention)
	}
	var text strings.Builder
	_ = Text(&text, p, TextOptions{})
	if strings.Contains(text.String(), "matches the fleet") || !strings.Contains(text.String(), "1 resource needs attention") {
		t.Errorf("text:\n%s", text.String())
	}
	var js strings.Builder
	_ = JSON(&js, p)
	var decoded struct {
		Attention []spec.Diagnostic `json:"attention"`
	}
	if err := json.Unmarshal([]byte(js.String()), &decoded); err != nil || len(decoded.Attention) != 1 ||
		decoded.Attention[0].Subject != "aws/queues/jobs" || decoded.Attention[0].Message == "" {
		t.Errorf("json attention %+v (%v):\n%s", decoded.Attention, err, js.String())
	}
	if md := Markdown(p, MarkdownOptions{}); !strings.Contains(md, "1 resource needs attention") {
		t.Errorf("markdown:\n%s", md)
	}
	// Nothing to look at: the claim stands.
	g := newWorld(t)
	g.apply(doc(queue))
	var again strings.Builder
	_ = Text(&again, g.plan(doc(queue)), TextOptions{})
	if !strings.Contains(again.String(), "No changes. The cloud matches the fleet.") {
		t.Errorf("text:\n%s", again.String())
	}
}

// Rendering a plan that creates n queues and n secrets, each with its
// fields.
func BenchmarkRender(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		var rs []string
		for i := range n {
			rs = append(rs, fmt.Sprintf(`{"address": "aws/queues/q%d", "spec": {"visibilityTimeoutSec": %d, "tags": {"team": "t%d"}}}`, i, 30+i, i),
				fmt.Sprintf(`{"address": "aws/secrets/s%d", "spec": {"value": {"fromEnv": "S"}}}`, i))
		}
		w := newWorld(&testing.T{})
		w.env["S"] = "x"
		p := w.plan(doc(rs...))
		bench(b, n, p)
	}
}

func bench(b *testing.B, n int, p *engine.Plan) {
	b.Run(fmt.Sprintf("text/%d", n), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := Text(io.Discard, p, TextOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(fmt.Sprintf("json/%d", n), func(b *testing.B) {
		var buf bytes.Buffer
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			if err := JSON(&buf, p); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(buf.Len()), "bytes")
	})
	b.Run(fmt.Sprintf("markdown/%d", n), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Markdown(p, MarkdownOptions{})
		}
	})
}
