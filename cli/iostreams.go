package cli

import (
	"io"
	"os"
)

// IOStreams are where a command reads and writes. Data goes to Out;
// progress, warnings and errors go to ErrOut.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	inTTY, outTTY, errTTY bool
	// NoColor is set by NO_COLOR or --no-color.
	NoColor bool
}

// System returns the process's streams, with terminal detection.
func System() *IOStreams {
	return &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		inTTY: isTerminal(os.Stdin), outTTY: isTerminal(os.Stdout), errTTY: isTerminal(os.Stderr)}
}

// Test returns streams over the given writers, none of them a terminal.
func Test(in io.Reader, out, errOut io.Writer) *IOStreams {
	return &IOStreams{In: in, Out: out, ErrOut: errOut}
}

// ColorEnabled: colour only on a terminal, and never with NO_COLOR.
func (s *IOStreams) ColorEnabled() bool { return s.outTTY && !s.NoColor }

// CanPrompt reports whether a person can answer a question.
func (s *IOStreams) CanPrompt() bool { return s.inTTY && s.errTTY }

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
