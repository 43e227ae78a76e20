package state

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/infra-iac/infra/spec"
)

func openTemp(t *testing.T) (*FileStore, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := OpenFile(dir, "web")
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func TestOpenFileLayout(t *testing.T) {
	s, dir := openTemp(t)
	if want := filepath.Join(dir, "web"); s.Where() != want {
		t.Fatalf("Where() = %q, want %q", s.Where(), want)
	}
	if _, err := os.Stat(s.Where()); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("OpenFile created the directory; a plan must leave nothing behind")
	}
	def, err := OpenFile("", "web")
	if err != nil {
		t.Fatal(err)
	}
	if def.Where() != filepath.Join(".infra", "web") {
		t.Fatalf("default Where() = %q", def.Where())
	}
	for _, bad := range []string{"", "../etc", "a/b", "Web"} {
		if _, err := OpenFile(dir, bad); err == nil {
			t.Errorf("OpenFile accepted the fleet name %q", bad)
		}
	}
}

func TestMissingFilesAreEmpty(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	l, err := s.LoadLedger(ctx)
	if err != nil || len(l.Rows) != 0 || l.Rows == nil || l.Version != LedgerVersion {
		t.Fatalf("got %+v, %v", l, err)
	}
	c, err := s.LoadCache(ctx)
	if err != nil || len(c.Resources) != 0 || c.Resources == nil {
		t.Fatalf("got %+v, %v", c, err)
	}
}

// loadAndSave loads s's ledger, records rows in it and saves it.
func loadAndSave(t *testing.T, s *FileStore, rows ...Row) *Ledger {
	t.Helper()
	ctx := context.Background()
	l, err := s.LoadLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		l.Put(r)
	}
	if err := s.SaveLedger(ctx, l); err != nil {
		t.Fatal(err)
	}
	return l
}

func TestFileStoreRoundTrip(t *testing.T) {
	s, dir := openTemp(t)
	ctx := context.Background()
	l := loadAndSave(t, s, row(spec.AWS, spec.ObjectStore, "assets", "eu-west-3"))
	// Saving twice in a row is fine: the store remembers what it wrote.
	l.Put(row(spec.AWS, spec.Queues, "jobs", "eu-west-3"))
	if err := s.SaveLedger(ctx, l); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadCache(ctx); err != nil {
		t.Fatal(err)
	}
	c := sampleCache()
	if err := s.SaveCache(ctx, c); err != nil {
		t.Fatal(err)
	}

	other, err := OpenFile(dir, "web")
	if err != nil {
		t.Fatal(err)
	}
	gotL, err := other.LoadLedger(ctx)
	if err != nil || !reflect.DeepEqual(gotL, l) {
		t.Fatalf("ledger: got %+v, %v", gotL, err)
	}
	gotC, err := other.LoadCache(ctx)
	if err != nil || !reflect.DeepEqual(gotC, c) {
		t.Fatalf("cache: got %+v, %v", gotC, err)
	}
	onDisk, err := os.ReadFile(filepath.Join(dir, "web", "ledger.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := EncodeLedger(l)
	if string(onDisk) != string(want) {
		t.Fatalf("ledger.json holds\n%s", onDisk)
	}
	if _, err := os.Stat(filepath.Join(dir, "web", "cache.json")); err != nil {
		t.Fatal(err)
	}
	ignore, err := os.ReadFile(filepath.Join(dir, "web", ".gitignore"))
	if err != nil || !strings.Contains(string(ignore), "\n*\n") {
		t.Fatalf(".gitignore: %q, %v", ignore, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".gitignore")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a .gitignore was written above the fleet's directory")
	}
}

func TestEmptyLedgerKeepsItsFile(t *testing.T) {
	s, _ := openTemp(t)
	loadAndSave(t, s)
	data, err := os.ReadFile(filepath.Join(s.Where(), LedgerFile))
	if err != nil || !strings.Contains(string(data), `"rows": []`) {
		t.Fatalf("%q, %v", data, err)
	}
}

func TestLoadRefusalNamesTheFile(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	write(t, s, LedgerFile, `{"version": 7, "rows": []}`)
	write(t, s, CacheFile, `not json`)
	_, err := s.LoadLedger(ctx)
	want := filepath.Join(s.Where(), LedgerFile) + " is in format version 7, but this build understands 1: upgrade infra"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	_, err = s.LoadCache(ctx)
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), filepath.Join(s.Where(), CacheFile)+" is not a file infra wrote: ") {
		t.Fatalf("got %v", err)
	}
}

func write(t *testing.T, s *FileStore, name, data string) {
	t.Helper()
	if err := os.MkdirAll(s.Where(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Where(), name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, s *FileStore, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.Where(), name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestGuardedSaveAfterAnotherStoreSaved(t *testing.T) {
	a, dir := openTemp(t)
	b, err := OpenFile(dir, "web")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mine, err := a.LoadLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	loadAndSave(t, b, row(spec.AWS, spec.IAM, "ci", "eu-west-3"))
	before := read(t, b, LedgerFile)

	mine.Put(row(spec.AWS, spec.Queues, "jobs", "eu-west-3"))
	err = a.SaveLedger(ctx, mine)
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("want a *ConflictError, got %v", err)
	}
	path := filepath.Join(dir, "web", LedgerFile)
	if ce.File != path || !strings.HasPrefix(err.Error(), path+" was created since this run found it missing") ||
		!strings.Contains(err.Error(), "nothing was overwritten") {
		t.Fatalf("message: %v", err)
	}
	if read(t, b, LedgerFile) != before {
		t.Fatal("the losing save overwrote the file")
	}

	// Having lost, the run loads again and its next save goes through.
	again, err := a.LoadLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	again.Put(row(spec.AWS, spec.Queues, "jobs", "eu-west-3"))
	if err := a.SaveLedger(ctx, again); err != nil {
		t.Fatal(err)
	}
}

func TestGuardedSaveRefusals(t *testing.T) {
	ctx := context.Background()
	orig := `{"version": 1, "rows": []}`
	cases := []struct {
		name   string
		load   bool
		before string // "" = no file before the load
		meddle func(t *testing.T, s *FileStore)
		reason string
	}{
		{"changed", true, orig, func(t *testing.T, s *FileStore) {
			write(t, s, LedgerFile, `{"version": 1, "rows": [{"provider": "aws", "kind": "iam", "name": "x", "region": "r"}]}`)
		}, "changed since this run read it"},
		{"removed", true, orig, func(t *testing.T, s *FileStore) {
			if err := os.Remove(filepath.Join(s.Where(), LedgerFile)); err != nil {
				t.Fatal(err)
			}
		}, "was removed since this run read it"},
		{"created", true, "", func(t *testing.T, s *FileStore) { write(t, s, LedgerFile, orig) },
			"was created since this run found it missing"},
		{"never read", false, orig, func(*testing.T, *FileStore) {}, "exists, but this run never read it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := openTemp(t)
			if c.before != "" {
				write(t, s, LedgerFile, c.before)
			}
			if c.load {
				if _, err := s.LoadLedger(ctx); err != nil {
					t.Fatal(err)
				}
			}
			c.meddle(t, s)
			after, _ := os.ReadFile(filepath.Join(s.Where(), LedgerFile))
			l := NewLedger()
			l.Put(row(spec.AWS, spec.Queues, "mine", "eu-west-3"))
			err := s.SaveLedger(ctx, l)
			var ce *ConflictError
			if !errors.As(err, &ce) || !strings.HasPrefix(ce.Reason, c.reason) || !strings.Contains(err.Error(), ce.File+" "+c.reason) {
				t.Fatalf("got %v, want the reason %q", err, c.reason)
			}
			now, _ := os.ReadFile(filepath.Join(s.Where(), LedgerFile))
			if string(now) != string(after) {
				t.Fatal("a refused save changed the file")
			}
		})
	}
}

func TestConflictNamesTheRivalHolder(t *testing.T) {
	a, dir := openTemp(t)
	ctx := context.Background()
	if _, err := a.LoadCache(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := OpenFile(dir, "web")
	if err != nil {
		t.Fatal(err)
	}
	lock := mustLock(t, b, LockInfo{Holder: "bob@ci pid 7", Command: "apply"})
	if _, err := b.LoadCache(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.SaveCache(ctx, sampleCache()); err != nil {
		t.Fatal(err)
	}
	err = a.SaveCache(ctx, NewCache())
	if err == nil || !strings.Contains(err.Error(), "the lock is now held by bob@ci pid 7 running \"apply\"") {
		t.Fatalf("got %v", err)
	}
	if err := lock.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A failure between writing the new bytes and putting them in place — the
// moment a crash would hurt — leaves the old file whole and no temporary
// file behind.
func TestFailedWriteLeavesTheOldFile(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	old := loadAndSave(t, s, row(spec.AWS, spec.IAM, "ci", "eu-west-3"))
	before := read(t, s, LedgerFile)

	var tmpSeen string
	beforeRename = func(tmp string) error {
		tmpSeen = tmp
		data, err := os.ReadFile(tmp)
		if err != nil || !strings.Contains(string(data), "jobs") {
			t.Errorf("temporary file not written before the rename: %q, %v", data, err)
		}
		return errors.New("simulated crash")
	}
	t.Cleanup(func() { beforeRename = nil })

	l := old.Clone()
	l.Put(row(spec.AWS, spec.Queues, "jobs", "eu-west-3"))
	if err := s.SaveLedger(ctx, l); err == nil || !strings.Contains(err.Error(), "simulated crash") {
		t.Fatalf("got %v", err)
	}
	if read(t, s, LedgerFile) != before {
		t.Fatal("a failed write changed the ledger")
	}
	if filepath.Dir(tmpSeen) != s.Where() {
		t.Fatalf("temporary file %q is not beside the ledger (a rename across file systems is not atomic)", tmpSeen)
	}
	if _, err := os.Stat(tmpSeen); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the temporary file was left behind")
	}
	beforeRename = nil
	// The store still expects the old file, so the retry goes through.
	if err := s.SaveLedger(ctx, l); err != nil {
		t.Fatal(err)
	}
}

func TestCanceledContext(t *testing.T) {
	s, _ := openTemp(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.LoadLedger(ctx); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if err := s.SaveCache(ctx, NewCache()); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if _, err := s.Lock(ctx, LockInfo{}); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// A run may replace a cache it never read (the cache is written whole from
// what was observed), but not a ledger, and not a cache it did read.
func TestSaveWithoutLoad(t *testing.T) {
	s, dir := openTemp(t)
	ctx := context.Background()
	write(t, s, CacheFile, `{"version": 1, "resources": {}}`)
	write(t, s, LedgerFile, `{"version": 1, "rows": []}`)
	if err := s.SaveCache(ctx, sampleCache()); err != nil {
		t.Fatalf("a cache never read: %v", err)
	}
	var ce *ConflictError
	if err := s.SaveLedger(ctx, NewLedger()); !errors.As(err, &ce) {
		t.Fatalf("a ledger never read: %v", err)
	}
	other, _ := OpenFile(dir, "web")
	if err := other.SaveCache(ctx, NewCache()); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCache(ctx, sampleCache()); !errors.As(err, &ce) {
		t.Fatalf("a cache changed since this store wrote it: %v", err)
	}
}
