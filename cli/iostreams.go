package cli

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/infra-iac/infra/spec"
)

// IOStreams are where a command reads and writes. Data goes to Out;
// progress, warnings and errors go to ErrOut. Each output stream has its
// own colour decision, since either may be redirected alone: colour only
// where that stream is a terminal.
//
// Everything written to ErrOut is escaped (spec.PrintableText): stderr
// quotes documents, clouds and state files, and none of it may act on a
// terminal or a log viewer. Out carries data and colour of infra's own, so
// its renderers escape what they quote themselves.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	// errRaw is stderr unescaped, for the colour infra itself adds.
	errRaw                io.Writer
	inTTY, outTTY, errTTY bool
	// NoColor is set by NO_COLOR or --no-color.
	NoColor bool
}

// System returns the process's streams, with terminal detection.
func System() *IOStreams { return streamsOf(os.Stdin, os.Stdout, os.Stderr) }

func streamsOf(in, out, errOut *os.File) *IOStreams {
	s := Test(in, out, errOut)
	s.inTTY, s.outTTY, s.errTTY = isTerminal(in), isTerminal(out), isTerminal(errOut)
	return s
}

// Test returns streams over the given writers, none of them a terminal.
func Test(in io.Reader, out, errOut io.Writer) *IOStreams {
	return &IOStreams{In: in, Out: out, ErrOut: printableWriter{errOut}, errRaw: errOut}
}

// ColorEnabled says whether stdout is coloured: only on a terminal, and
// never with NO_COLOR or --no-color.
func (s *IOStreams) ColorEnabled() bool { return s.outTTY && !s.NoColor }

// ErrColorEnabled says the same of stderr, which is decided on its own: a
// terminal on stdout says nothing about where errors go.
func (s *IOStreams) ErrColorEnabled() bool { return s.errTTY && !s.NoColor }

// CanPrompt reports whether a person can answer a question.
func (s *IOStreams) CanPrompt() bool { return s.inTTY && s.errTTY }

// errLine writes one line to stderr, in color when stderr is coloured.
// text is escaped here; the colour is infra's own.
func (s *IOStreams) errLine(color, text string) {
	text = spec.PrintableText(text)
	if s.errRaw == nil || !s.ErrColorEnabled() {
		fmt.Fprintln(s.ErrOut, text)
		return
	}
	fmt.Fprintln(s.errRaw, color+text+ansiReset)
}

// errDiagnostics writes diagnostic rows to stderr with stderr's colour.
func (s *IOStreams) errDiagnostics(ds []spec.Diagnostic) {
	w := s.errRaw
	if w == nil {
		w = s.ErrOut
	}
	printDiagnostics(w, ds, s.ErrColorEnabled())
}

// errWidth is stderr's width in columns on a terminal, 0 otherwise.
func (s *IOStreams) errWidth() int {
	f, ok := s.errRaw.(*os.File)
	if !ok || !s.errTTY {
		return 0
	}
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return w
}

// isTerminal: a character device is not enough (/dev/null is one).
func isTerminal(f *os.File) bool { return f != nil && term.IsTerminal(int(f.Fd())) }

// PrintableWriter returns w with every write escaped as stderr is, for a
// log that quotes documents and clouds (the GitHub Action's).
func PrintableWriter(w io.Writer) io.Writer { return printableWriter{w} }

// printableWriter escapes each write (spec.PrintableText): what fmt writes
// in one call, so a character is never split.
type printableWriter struct{ w io.Writer }

func (p printableWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, spec.PrintableText(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}

const (
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiReset  = "\x1b[0m"
)
