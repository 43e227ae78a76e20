package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// beforeRename, when set by a test, runs after the temporary file is
// written and before it replaces the real one: the moment a crash would
// matter.
var beforeRename func(tmp string) error

// writeAtomic replaces dir/name with data so that a reader, or a run that
// follows a crash, sees either the old bytes or the new ones, never a
// prefix: the bytes go to a temporary file in the same directory, are
// flushed, and the file is renamed over the old one. A crash can leave a
// stray ".<name>.tmp-*" file behind, which nothing reads.
func writeAtomic(dir, name string, data []byte) (err error) {
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreMissing(os.Remove(tmp.Name())))
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return errors.Join(fmt.Errorf("state: writing %s: %w", name, err), tmp.Close())
	}
	if err := tmp.Sync(); err != nil {
		return errors.Join(fmt.Errorf("state: writing %s: %w", name, err), tmp.Close())
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("state: writing %s: %w", name, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	if beforeRename != nil {
		if err := beforeRename(tmp.Name()); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	// The rename is durable only once the directory is flushed too.
	return syncDir(dir)
}

func ignoreMissing(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
