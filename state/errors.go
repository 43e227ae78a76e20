package state

import (
	"errors"
	"fmt"
	"time"
)

// FormatError refuses a ledger or cache that this build cannot trust: bytes
// that are not JSON, a missing or unknown format version, a row naming an
// unknown provider or kind, a repeated row. Detail says what is wrong and
// what to do, because the person reading it has a broken run in front of
// them and needs the way out, not a parser's complaint.
type FormatError struct {
	// File is where the bytes came from. Empty when the codec was handed
	// bytes directly; a store fills it in so the message names the file.
	File string
	// Record is "ledger" or "cache".
	Record string
	// Detail follows the file's name: "is not a file infra wrote: …; …".
	Detail string
}

func (e *FormatError) Error() string {
	name := e.File
	if name == "" {
		name = "the " + e.Record
	}
	return name + " " + e.Detail
}

// LockedError is what taking a lock that someone else holds returns. It
// names the holder and the way out, so a second apply fails at once with
// something to do instead of waiting or interleaving.
type LockedError struct {
	// Where is the store's location (Store.Where).
	Where string
	// Info is the holder's lock as it was read.
	Info LockInfo
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("%s is locked by %s: wait for it to finish, or, if that run is dead, run `infra unlock %s`",
		e.Where, describeLock(e.Info), e.Info.ID)
}

// UnlockRefusedError is what Unlock returns for an id that is not the
// current lock's. Breaking a lock by the wrong id would most likely break a
// live run that took the lock after the stale one was seen, so the refusal
// names who holds it now and lets the person decide.
type UnlockRefusedError struct {
	Where string
	// Given is the id that was asked for.
	Given string
	// Info is the lock actually held.
	Info LockInfo
}

// mayUnlock is Unlock's check, in either store, of the lock read there (ok:
// there is one) against the id it was asked to break.
func mayUnlock(where, id string, held LockInfo, ok bool) error {
	if !ok {
		return fmt.Errorf("state: %s: %w", where, ErrNotLocked)
	}
	if held.ID != id {
		return &UnlockRefusedError{Where: where, Given: id, Info: held}
	}
	return nil
}

func (e *UnlockRefusedError) Error() string {
	return fmt.Sprintf("refusing to unlock %s: %q is not the id of its lock, which is held by %s; if that run is dead, run `infra unlock %s`",
		e.Where, e.Given, describeLock(e.Info), e.Info.ID)
}

// ErrNotLocked is wrapped by Unlock when there is no lock to break.
var ErrNotLocked = errors.New("not locked")

// ConflictError is what a guarded save returns when the file changed since
// this store last loaded or saved it. Nothing is overwritten: the other
// writer's change survives, and the run that lost starts again from it.
type ConflictError struct {
	// File is the file (or object) that changed underneath.
	File string
	// Reason says how it changed: "changed since this run read it", …
	Reason string
	// Holder is the fleet's lock at the time of the conflict when it was
	// someone else's, so the message can name the likely winner.
	Holder *LockInfo
}

func (e *ConflictError) Error() string {
	who := ""
	if e.Holder != nil {
		who = " (the lock is now held by " + describeLock(*e.Holder) + ")"
	}
	return fmt.Sprintf("%s %s%s: nothing was overwritten; run the command again so it starts from the current state",
		e.File, e.Reason, who)
}

// describeLock is the one way a lock is named in messages: who, what, when
// and which lock.
func describeLock(i LockInfo) string {
	s := i.Holder
	if s == "" {
		s = "an unknown holder"
	}
	if i.Command != "" {
		s += fmt.Sprintf(" running %q", i.Command)
	}
	if i.RunID != "" {
		s += " (run " + i.RunID + ")"
	}
	if !i.Created.IsZero() {
		s += " since " + i.Created.UTC().Format(time.RFC3339)
	}
	return s + ", lock " + i.ID
}
