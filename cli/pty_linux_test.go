package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: a real terminal for the streams to
// detect, without a module for it.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("name the pseudo-terminal: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// With stdout on a terminal and stderr on a file, the error in the file
// carries no escape; with stderr on the terminal, it is coloured there.
func TestColourFollowsEachRealStream(t *testing.T) {
	master, tty := openPTY(t)
	if !isTerminal(tty) {
		t.Fatal("a pseudo-terminal not taken for a terminal")
	}
	missing := filepath.Join(t.TempDir(), "missing.json")

	log, err := os.Create(filepath.Join(t.TempDir(), "stderr.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	io := streamsOf(os.Stdin, tty, log)
	if !io.ColorEnabled() || io.ErrColorEnabled() {
		t.Fatalf("stdout a terminal, stderr a file: colour %v/%v", io.ColorEnabled(), io.ErrColorEnabled())
	}
	run(t, io, "check", "--fleet", missing)
	written, err := os.ReadFile(log.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(written), "error: ") || bytes.Contains(written, []byte("\x1b")) {
		t.Fatalf("stderr log: %q", written)
	}

	io = streamsOf(os.Stdin, log, tty)
	if io.ColorEnabled() || !io.ErrColorEnabled() {
		t.Fatalf("stdout a file, stderr a terminal: colour %v/%v", io.ColorEnabled(), io.ErrColorEnabled())
	}
	run(t, io, "check", "--fleet", missing)
	if err := master.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Skipf("no deadline on the pseudo-terminal: %v", err)
	}
	buf := make([]byte, 4096)
	n, err := master.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf[:n], []byte("\x1b[31merror: ")) {
		t.Fatalf("terminal got %q", buf[:n])
	}
}
