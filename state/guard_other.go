//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package state

// guarded runs fn. Without flock, the store's mutex keeps goroutines apart
// and the fleet lock keeps processes apart; what is left is a window of a
// few microseconds between a save's check and its rename.
func (s *FileStore) guarded(fn func() error) error { return fn() }

// syncDir does nothing: these systems (Windows first) cannot open a
// directory to flush it, so the rename's durability after a power cut is
// the file system's. A crash of the process is covered either way.
func syncDir(string) error { return nil }
