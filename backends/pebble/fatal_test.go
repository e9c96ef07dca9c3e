package pebble

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/minca-go/minca/engine"
)

// faulty opens a store whose files named like match fail to be written
// once fail is set.
func faulty(t *testing.T, match string) (*Store, *atomic.Bool, *syncWriter) {
	t.Helper()
	var fail atomic.Bool
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if fail.Load() && op.Kind.ReadOrWrite() == errorfs.OpIsWrite && strings.Contains(filepath.Base(op.Path), match) {
			return errorfs.ErrInjected
		}
		return nil
	})
	log := &syncWriter{}
	s, err := Open(filepath.Join(t.TempDir(), "db"), &Options{
		fs:     errorfs.Wrap(vfs.Default, inj),
		Logger: slog.New(slog.NewTextHandler(log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, &fail, log
}

// syncWriter is a log written from Pebble's goroutines.
type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *syncWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(b)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func put(t *testing.T, s *Store, n int) error {
	t.Helper()
	b, err := s.NewBatch()
	if err != nil {
		return err
	}
	defer b.Close()
	for i := range n {
		b.Set(fmt.Appendf(nil, "k%06d", i), make([]byte, 100))
	}
	return b.Commit(engine.Sync)
}

// within fails t unless f returns within a few seconds: a call that
// would wait for ever on a goroutine Fatalf parked.
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return", what)
		return nil
	}
}

// A MANIFEST write that fails in a flush, on Pebble's own goroutine, ends
// in Fatalf there: the process goes on, the flush's waiter and every later
// call get the failure, and Close returns without waiting for Pebble.
func TestFatalInBackground(t *testing.T) {
	s, fail, log := faulty(t, "MANIFEST")
	if err := put(t, s, 1000); err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	err := within(t, "Compact", func() error { return s.Compact(context.Background()) })
	if err == nil || !strings.Contains(err.Error(), s.dir) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("compact: %v", err)
	}
	if _, err2 := s.Get([]byte("k000001")); err2 == nil || err2.Error() != err.Error() {
		t.Fatalf("get after the failure: %v", err2)
	}
	if err2 := put(t, s, 1); err2 == nil || err2.Error() != err.Error() {
		t.Fatalf("a write after the failure: %v", err2)
	}
	if err2 := within(t, "Close", s.Close); err2 == nil {
		t.Fatal("close after the failure: nil")
	}
	// Parked, not unwound: the failure is logged, as no call returned it then.
	if !strings.Contains(log.String(), "MANIFEST") {
		t.Fatalf("the failure on Pebble's goroutine is not logged: %q", log.String())
	}
	if _, err2 := Open(s.dir, nil); !errors.Is(err2, engine.ErrLocked) {
		t.Fatalf("reopening a store given up: %v", err2)
	}
}

// A write to the log that fails ends in Fatalf on the committing goroutine,
// inside the store's call: the call returns the failure, and so does every
// later one.
func TestFatalInCall(t *testing.T) {
	s, fail, log := faulty(t, ".log")
	fail.Store(true)
	err := within(t, "Commit", func() error { return put(t, s, 10) })
	if err == nil || !strings.Contains(err.Error(), s.dir) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("commit: %v", err)
	}
	if got := s.fatal.get(); got == nil || got.Error() != err.Error() {
		t.Fatalf("the failure recorded: %v, the commit's: %v", got, err)
	}
	if _, err2 := s.Get([]byte("k000001")); err2 == nil {
		t.Fatal("get after the failure: nil")
	}
	within(t, "Close", s.Close)
	// Unwound, not parked: the call returned it, nothing is logged.
	if log.String() != "" {
		t.Fatalf("logged: %s", log.String())
	}
}

// A panic inside Pebble during a call (data damaged past what a checksum
// catches) is the call's error, and the store's from then on.
func TestPanicInCall(t *testing.T) {
	s, _, _ := faulty(t, "none")
	err := func() (err error) {
		defer s.guard(&err)
		panic("index out of range")
	}()
	if !errors.Is(err, engine.ErrCorrupt) || !strings.Contains(err.Error(), s.dir) || !strings.Contains(err.Error(), "index out of range") {
		t.Fatalf("the panic's error: %v", err)
	}
	if _, err2 := s.Get([]byte("k")); err2 == nil || err2.Error() != err.Error() {
		t.Fatalf("get after it: %v", err2)
	}
}

// A read that meets the store closing under it (Pebble panics with its
// ErrClosed) is told the store is closed: nothing is damaged, and Close
// does not report damage for it.
func TestReadAfterCloseIsNotDamage(t *testing.T) {
	s, _, _ := faulty(t, "none")
	if err := put(t, s, 10); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get([]byte("k000001"))
	if !errors.Is(err, engine.ErrClosed) || errors.Is(err, engine.ErrCorrupt) {
		t.Fatalf("get after close: %v", err)
	}
	if got := s.fatal.get(); got != nil {
		t.Fatalf("a read after close recorded a failure: %v", got)
	}
}
