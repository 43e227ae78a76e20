package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
)

// hostile is what a pull request can put in a string: a screen clear, a
// colour, an 8-bit CSI and a right-to-left override.
const hostile = "\x1b[2J\x1b[31mEVIL\u009b2J\u202egnp"

// rawControl reports whether s holds, outside the colour infra itself adds,
// a character that would act on a terminal.
func rawControl(s string) bool {
	for _, c := range []string{"\x1b[31m", "\x1b[33m", "\x1b[0m"} {
		s = strings.ReplaceAll(s, c, "")
	}
	return spec.PrintableText(s) != s
}

func run(t *testing.T, io *IOStreams, args ...string) int {
	t.Helper()
	f := DefaultFactory()
	f.IO = io
	f.Getenv = func(string) string { return "" }
	return RunWith(f, args, nil)
}

// An error quoting what the user passed is escaped on its way to stderr, a
// usage error too.
func TestErrorsReachStderrEscaped(t *testing.T) {
	for _, args := range [][]string{
		{"check", "--fleet", filepath.Join(t.TempDir(), hostile+".json")},
		{"check", "--bogus" + hostile},
	} {
		var out, errb bytes.Buffer
		if code := run(t, Test(nil, &out, &errb), args...); code == ExitOK {
			t.Fatalf("%q: exit 0", args)
		}
		if rawControl(errb.String()) || !strings.Contains(errb.String(), `\u001b[2J\u001b[31mEVIL\u009b2J\u202egnp`) {
			t.Errorf("%q: stderr %q", args, errb.String())
		}
	}
}

// check's rows are data on stdout: what they quote from the document is
// escaped there, while the colour of the severity stays.
func TestCheckRowsAreEscaped(t *testing.T) {
	fleet := filepath.Join(t.TempDir(), "fleet.json")
	doc := `{"apiVersion": "infra/v1", "fleet": "shop", "placement": {"aws": "eu-west-3"}, "resources": [
		{"address": "aws/security-group/web", "spec": {"description": "web"}},
		{"address": "aws/aws-instance/x", "spec": {"imageId": "latest", "instanceType": "\u001b[2J\u001b[31mEVIL\u009b2J\u202egnp",
		 "securityGroup": {"ref": "aws/security-group/web"}}}], "` + "\\u001b[2J" + `": 1}`
	if err := os.WriteFile(fleet, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	io := Test(nil, &out, &errb)
	io.outTTY = true
	if code := run(t, io, "check", "--fleet", fleet); code != ExitError {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	if rawControl(out.String()) || !strings.Contains(out.String(), `raw:\u001b[2J\u001b[31mEVIL\u009b2J\u202egnp`) ||
		!strings.Contains(out.String(), "\x1b[31merror\x1b[0m: \\u001b[2J: unknown key") {
		t.Errorf("stdout %q", out.String())
	}
}

// Progress and warnings on stderr quote provider errors and cloud names:
// they are escaped too.
func TestProgressIsEscaped(t *testing.T) {
	var errb bytes.Buffer
	io := Test(nil, &bytes.Buffer{}, &errb)
	newProgress(io).event(engine.Event{Kind: engine.EventDeferred, Action: engine.Delete,
		Address: spec.Address{Provider: spec.AWS, Kind: spec.Queues, Name: "q"}, Err: errors.New("refused: " + hostile)})
	if rawControl(errb.String()) || !strings.Contains(errb.String(), `refused: \u001b[2J`) {
		t.Errorf("stderr %q", errb.String())
	}
}

// Each stream has its own colour decision: an error is coloured only when
// stderr is a terminal, whatever stdout is, so escapes never land in a
// log file that stderr is redirected to.
func TestColourPerStream(t *testing.T) {
	for _, c := range []struct {
		outTTY, errTTY, noColor bool
		wantOut, wantErr        bool
	}{
		{outTTY: true, errTTY: false, wantOut: true, wantErr: false},
		{outTTY: false, errTTY: true, wantOut: false, wantErr: true},
		{outTTY: true, errTTY: true, wantOut: true, wantErr: true},
		{outTTY: true, errTTY: true, noColor: true},
		{},
	} {
		var out, errb bytes.Buffer
		io := Test(nil, &out, &errb)
		io.outTTY, io.errTTY, io.NoColor = c.outTTY, c.errTTY, c.noColor
		if io.ColorEnabled() != c.wantOut || io.ErrColorEnabled() != c.wantErr {
			t.Errorf("%+v: stdout colour %v, stderr colour %v", c, io.ColorEnabled(), io.ErrColorEnabled())
		}
		run(t, io, "check", "--fleet", filepath.Join(t.TempDir(), "missing.json"))
		if got := strings.Contains(errb.String(), "\x1b[31merror:"); got != c.wantErr {
			t.Errorf("%+v: stderr coloured %v: %q", c, got, errb.String())
		}
	}
}

// /dev/null is a character device, but not a terminal.
func TestDevNullIsNotATerminal(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Fatal("/dev/null taken for a terminal")
	}
	if s := streamsOf(f, f, f); s.ColorEnabled() || s.ErrColorEnabled() || s.CanPrompt() {
		t.Fatalf("streams on /dev/null: colour %v/%v, prompt %v", s.ColorEnabled(), s.ErrColorEnabled(), s.CanPrompt())
	}
}
