//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package state

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// guarded runs fn holding an exclusive flock on the fleet's guard file, so
// that a guarded save's check and rename, or a release's check and remove,
// cannot interleave with another process's. The kernel drops the flock if
// the process dies, so a crash never leaves the guard held.
func (s *FileStore) guarded(fn func() error) error {
	f, err := os.OpenFile(s.path(guardFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	// The guard file is never written, so closing it cannot lose anything;
	// unlocking it cannot fail in a way that outlives the close.
	defer f.Close()
	if err := flock(f, syscall.LOCK_EX); err != nil {
		return fmt.Errorf("state: locking %s: %w", f.Name(), err)
	}
	defer flock(f, syscall.LOCK_UN)
	return fn()
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// syncDir flushes a directory, making a rename in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("state: flushing %s: %w", dir, err)
	}
	return nil
}
