package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// A StoreError says the store once and what is wrong once: the sentinel
// it is, and its cause, are seen by errors.Is and not spelt out again.
func TestStoreError(t *testing.T) {
	e := Errorf(ErrCorrupt, "damaged: %s: %w", "000123.sst", fs.ErrNotExist)
	if e.Error() != "damaged: 000123.sst: file does not exist" || !errors.Is(e, ErrCorrupt) || !errors.Is(e, fs.ErrNotExist) {
		t.Fatalf("Errorf: %q", e)
	}
	if e := Errorf(ErrLocked, "locked"); e.Error() != "locked" || !errors.Is(e, ErrLocked) {
		t.Fatalf("Errorf without a cause: %q", e)
	}
	named := &StoreError{Subject: "pebble store db", Msg: "damaged: 000123.sst: checksum mismatch", Kind: ErrCorrupt}
	if named.Error() != "pebble store db: damaged: 000123.sst: checksum mismatch" {
		t.Fatalf("%q", named)
	}
	wrapped := fmt.Errorf("reading: %w", named)
	if Reason(wrapped) != "damaged: 000123.sst: checksum mismatch" || Subject(wrapped) != "pebble store db" || !errors.Is(wrapped, ErrCorrupt) {
		t.Fatalf("Reason %q, Subject %q", Reason(wrapped), Subject(wrapped))
	}
	// The outermost subject is the one said; an error naming none says
	// all of itself.
	outer := &StoreError{Subject: "store pebble:db", Msg: Reason(wrapped), Err: wrapped}
	if Subject(outer) != "store pebble:db" || outer.Error() != "store pebble:db: damaged: 000123.sst: checksum mismatch" {
		t.Fatalf("%q", outer)
	}
	plain := errors.Join(errors.New("a"), e)
	if Reason(plain) != plain.Error() || Subject(plain) != "" {
		t.Fatalf("Reason of an error naming no store: %q", Reason(plain))
	}
}
