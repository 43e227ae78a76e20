package spec

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Printable returns s with every character that could act on a terminal,
// or change what a reader sees, written as an escape such as \u001b: the C0
// controls (tab, newline and carriage return included), DEL, the C1
// controls, the bidirectional formatting characters, the line and
// paragraph separators and the byte order mark; a byte that is not UTF-8 is written \xff.
// Everything else, backslash included, stays as written, so that ordinary
// names read as they are.
//
// Every string that comes from a document, a cloud or a state file is
// passed through it before it reaches a terminal, a log, a pull-request
// comment or an annotation: a pull request must not be able to clear a
// reviewer's screen, colour a line or reorder the text of a plan.
func Printable(s string) string { return printable(s, false) }

// PrintableText is Printable for text of several lines: newlines and tabs
// stay, every other character Printable escapes is escaped.
func PrintableText(s string) string { return printable(s, true) }

func printable(s string, lines bool) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || (needsEscape(r) && !(lines && keptInText(r))) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s // the common case: nothing to escape, nothing allocated
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			writeHex(&b, uint64(s[i]), 2)
		case needsEscape(r) && !(lines && keptInText(r)):
			b.WriteString(`\u`)
			writeHex(&b, uint64(r), 4)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape: the controls (C0, DEL, C1), the bidirectional formatting
// characters (marks, embeddings, overrides, isolates), the line and
// paragraph separators, and the invisible byte order mark.
func needsEscape(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029, r == 0xfeff:
		return true
	}
	return false
}

func keptInText(r rune) bool { return r == '\n' || r == '\t' }

func writeHex(b *strings.Builder, v uint64, width int) {
	h := strconv.FormatUint(v, 16)
	for n := len(h); n < width; n++ {
		b.WriteByte('0')
	}
	b.WriteString(h)
}

// PrintableJSON escapes, in JSON text, the characters Printable escapes
// that encoding/json writes raw (DEL, C1 controls, bidirectional marks,
// line separators, the byte order mark), as \uXXXX: the same JSON value,
// which no terminal reads as a control. encoding/json already escapes C0,
// and such characters can stand only inside strings, so the layout (the
// indentation's newlines) is untouched.
func PrintableJSON(b []byte) []byte {
	i := 0
	for i < len(b) {
		r, size := utf8.DecodeRune(b[i:])
		if r >= 0x7f && needsEscape(r) {
			break
		}
		i += size
	}
	if i == len(b) {
		return b
	}
	var out strings.Builder
	out.Grow(len(b) + 8)
	out.Write(b[:i])
	for i < len(b) {
		r, size := utf8.DecodeRune(b[i:])
		if r >= 0x7f && needsEscape(r) {
			out.WriteString(`\u`)
			writeHex(&out, uint64(r), 4)
		} else {
			out.Write(b[i : i+size])
		}
		i += size
	}
	return []byte(out.String())
}
