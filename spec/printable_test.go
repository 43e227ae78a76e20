package spec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// A string from a document or a cloud is shown with every character that
// could act on a terminal, or reorder what a reviewer reads, written as an
// escape; everything else stays as written.
func TestPrintable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"t3.micro", "t3.micro"},
		{"\x1b[2J\x1b[31mEVIL", `\u001b[2J\u001b[31mEVIL`},
		{"a\nb\tc\rd", `a\u000ab\u0009c\u000dd`},
		{"del\x7f", `del\u007f`},
		{"csi\u009b2J", `csi\u009b2J`},
		{"admin\u202e\u2066txt.exe", `admin\u202e\u2066txt.exe`},
		{"line\u2028sep", `line\u2028sep`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"née café 東京 🚀 a\\b", "née café 東京 🚀 a\\b"},
		{"", ""},
	} {
		if got := Printable(c.in); got != c.want {
			t.Errorf("Printable(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Text that spans lines keeps its newlines and tabs, and nothing else.
	if got, want := PrintableText("one\n\ttwo\x1b[2J\r\n"), "one\n\ttwo\\u001b[2J\\u000d\n"; got != want {
		t.Errorf("PrintableText = %q, want %q", got, want)
	}
}

func FuzzPrintable(f *testing.F) {
	f.Add("\x1b]8;;http://x\x07link\x1b]8;;\x07")
	f.Add("\u202egnp.exe")
	f.Add("\xc2\x9b31m")
	f.Fuzz(func(t *testing.T, s string) {
		p := Printable(s)
		if !utf8.ValidString(p) {
			t.Fatalf("Printable(%q) = %q is not UTF-8", s, p)
		}
		for _, r := range p {
			if needsEscape(r) {
				t.Fatalf("Printable(%q) = %q holds %U", s, p, r)
			}
		}
		if Printable(p) != p {
			t.Fatalf("Printable is not idempotent on %q", s)
		}
		if !needsAnyEscape(s) && p != s {
			t.Fatalf("Printable changed %q, which needs no escape, to %q", s, p)
		}
		if tx := PrintableText(s); strings.Count(tx, "\n") != strings.Count(s, "\n") {
			t.Fatalf("PrintableText(%q) = %q changed the lines", s, tx)
		}
	})
}

func needsAnyEscape(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if needsEscape(r) {
			return true
		}
	}
	return false
}

// A diagnostic printed with %v is escaped like every row.
func TestDiagnosticStringIsPrintable(t *testing.T) {
	d := Errorf(RowUnknownInstanceType, "aws/queues/\x1b[2J", "write \"raw:\x1b[31m\"", "invalid \u202e")
	if got, want := d.String(), `error: aws/queues/\u001b[2J: invalid \u202e (write "raw:\u001b[31m") [unknown-instance-type]`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestPrintableJSONKeepsTheValue(t *testing.T) {
	v := map[string]any{"type": "t3\u009b2J\u202egnp\u007f", "list": []any{"a\u2028b"}}
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got := PrintableJSON(raw)
	if PrintableText(string(got)) != string(got) {
		t.Fatalf("a control or bidirectional character got through: %q", got)
	}
	var back map[string]any
	if err := json.Unmarshal(got, &back); err != nil || !reflect.DeepEqual(back, v) {
		t.Fatalf("the value changed: %v %v", back, err)
	}
	if !strings.Contains(string(got), "\n  ") {
		t.Errorf("the layout changed: %s", got)
	}
}
