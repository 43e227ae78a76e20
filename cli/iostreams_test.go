package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/render"
)

// Colour only on a terminal, and never with NO_COLOR or --no-color; the
// plain text is the coloured text minus the escapes.
func TestColourRules(t *testing.T) {
	for _, c := range []struct {
		tty, noColor bool
		env          string
		want         bool
	}{
		{tty: true, want: true},
		{tty: false, want: false},
		{tty: true, env: "1", want: false},
		{tty: true, noColor: true, want: false},
	} {
		io := Test(nil, &bytes.Buffer{}, &bytes.Buffer{})
		io.outTTY = c.tty
		g := &globals{f: &Factory{IO: io, Getenv: func(k string) string {
			if k == "NO_COLOR" {
				return c.env
			}
			return ""
		}}, noColor: c.noColor}
		if got := g.io().ColorEnabled(); got != c.want {
			t.Errorf("tty=%v NO_COLOR=%q --no-color=%v: colour %v, want %v", c.tty, c.env, c.noColor, got, c.want)
		}
	}
	p := &engine.Plan{Actions: []engine.Action{{Action: engine.Create}}, Summary: engine.Summary{Create: 1}}
	var plain, colour bytes.Buffer
	render.Text(&plain, p, render.TextOptions{})
	render.Text(&colour, p, render.TextOptions{Color: true})
	if strings.Contains(plain.String(), "\x1b[") || !strings.Contains(colour.String(), "\x1b[32m") {
		t.Fatalf("plain %q colour %q", plain.String(), colour.String())
	}
	stripped := strings.NewReplacer("\x1b[0m", "", "\x1b[32m", "", "\x1b[2m", "").Replace(colour.String())
	if stripped != plain.String() {
		t.Fatalf("colour minus escapes %q != plain %q", stripped, plain.String())
	}
}
