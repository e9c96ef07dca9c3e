package enginetest

import (
	"errors"
	"fmt"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
)

// errOf runs the first step of a sequence and returns the error it yields.
func errOf[T any](seq iter.Seq2[T, error]) error {
	for _, err := range seq {
		return err
	}
	return nil
}

// Every call on a closed store fails with ErrClosed, whatever the
// backend does once closed: none panics, none reaches the closed backend
// and reports what it says of that instead.
func (h *harness) testCallsAfterClose(t *testing.T) {
	sp := SpaceID("closed")
	w := writer(t, sp)
	v0 := must[*record.Version](t)(w.First("app.note", "0"))
	v1 := must[*record.Version](t)(w.Next(v0, "1"))
	s := h.store(t, nil)
	admit(t, s, "p", v0)
	data := []byte("a file held as the store closes")
	hash := canonical.IDOf(data)
	if err := s.PutFile(ctx, hash, data); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	d0 := Digest(v0)
	calls := map[string]func() error{
		"Admit":        func() error { _, err := s.Admit(ctx, "p", []*record.Version{v1}); return err },
		"Prepare":      func() error { _, err := s.Prepare(ctx, []*record.Version{v1}); return err },
		"ReadAhead":    func() error { _, err := s.ReadAhead([]*record.Version{v1}); return err },
		"Changes":      func() error { return errOf(s.Changes(ctx, 0)) },
		"ChangeLog":    func() error { return errOf(s.ChangeLog(ctx, 0)) },
		"Check":        func() error { _, err := s.Check(ctx, nil); return err },
		"NamedFiles":   func() error { return s.NamedFiles(ctx, sp, func(engine.NamedFile) bool { return true }) },
		"NamingFile":   func() error { _, _, err := s.NamingFile(ctx, sp, hash); return err },
		"TidyFiles":    func() error { _, err := s.TidyFiles(ctx, 0); return err },
		"VerifyFiles":  func() error { _, err := s.VerifyFiles(ctx); return err },
		"CreateFile":   func() error { _, err := s.CreateFile(ctx); return err },
		"PutFile":      func() error { return s.PutFile(ctx, canonical.IDOf([]byte("new")), []byte("new")) },
		"FileInfo":     func() error { _, err := s.FileInfo(ctx, hash); return err },
		"OpenFile":     func() error { _, err := s.OpenFile(ctx, hash); return err },
		"File":         func() error { _, err := s.File(ctx, hash); return err },
		"HasFile":      func() error { _, err := s.HasFile(ctx, hash); return err },
		"Files":        func() error { return s.Files(ctx, func(engine.FileInfo) bool { return true }) },
		"DeleteFile":   func() error { return s.DeleteFile(ctx, hash) },
		"MissingFiles": func() error { return s.MissingFiles(ctx, sp, func(engine.NamedFile) bool { return true }) },
		"OpenPartial": func() error {
			_, err := s.OpenPartial(ctx, engine.FileRef{Hash: canonical.IDOf([]byte("x")), Size: 1})
			return err
		},
		"SyncOrder":      func() error { return errOf(s.SyncOrder(ctx, sp, engine.SyncKey{})) },
		"Export":         func() error { return errOf(s.Export(ctx, sp)) },
		"ExportJSON":     func() error { return errOf(s.ExportJSON(ctx, sp)) },
		"LineProofs":     func() error { _, err := s.LineProofs(ctx, sp); return err },
		"LineHeldFrom":   func() error { _, err := s.LineHeldFrom(ctx, sp, v0.Author, v0.Collection, 0); return err },
		"Line":           func() error { _, err := s.Line(ctx, sp, v0.Author, v0.Collection, 0); return err },
		"Wake":           func() error { return s.Wake(ctx, d0) },
		"SetStanding":    func() error { return s.SetStanding(ctx, d0, engine.Withdrawn) },
		"Stats":          func() error { _, err := s.Stats(ctx); return err },
		"Version":        func() error { _, err := s.Version(ctx, d0); return err },
		"VersionJSON":    func() error { _, err := s.VersionJSON(ctx, d0); return err },
		"Current":        func() error { _, err := s.Current(ctx, sp, v0.Key); return err },
		"CurrentJSON":    func() error { _, err := s.CurrentJSON(ctx, sp, v0.Key); return err },
		"History":        func() error { _, err := s.History(ctx, sp, v0.Key); return err },
		"Standing":       func() error { _, _, err := s.Standing(ctx, d0); return err },
		"Spaces":         func() error { _, err := s.Spaces(ctx); return err },
		"Meta":           func() error { _, _, err := s.Meta(ctx, "m"); return err },
		"SetMeta":        func() error { return s.SetMeta(ctx, "m", []byte("v")) },
		"Tables":         func() error { _, err := s.Tables(ctx); return err },
		"Waiting":        func() error { return s.Waiting(func(*record.Version, []string) bool { return true }) },
		"WaitingSources": func() error { _, err := s.WaitingSources(0); return err },
		"VersionsJSON": func() error {
			return s.VersionsJSON(ctx, []canonical.ID{d0}, func(int, []byte) error { return nil })
		},
		"VersionsStored": func() error {
			return s.VersionsStored(ctx, []canonical.ID{d0}, 1<<20, func(int, []byte) error { return nil })
		},
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close again: %v", err)
	}
}

// Writes and reads running as the store closes each end whole, or fail
// with ErrClosed and leave nothing of themselves; Close waits for those in
// progress and reports nothing leaked or failed.
func (h *harness) testCloseUnderWrites(t *testing.T) {
	sp := SpaceID("closing")
	w := writer(t, sp)
	s := h.store(t, nil)
	v := must[*record.Version](t)(w.First("app.note", "0"))
	admit(t, s, "p", v)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	started := make(chan struct{}, 64)
	loop := func(name string, call func(i int) error) {
		wg.Go(func() {
			for i := 0; ; i++ {
				if i == 1 {
					started <- struct{}{}
				}
				if err := call(i); err != nil {
					if !errors.Is(err, engine.ErrClosed) {
						errs <- fmt.Errorf("%s: %w", name, err)
					}
					return
				}
			}
		})
	}
	var mu sync.Mutex // the writer makes one line
	last := v
	loops := map[string]func(i int) error{
		"Admit": func(i int) error {
			mu.Lock()
			defer mu.Unlock()
			next, err := w.Next(last, fmt.Sprint(i))
			if err != nil {
				return err
			}
			if _, err := s.Admit(ctx, "p", []*record.Version{next}); err != nil {
				return err
			}
			last = next
			return nil
		},
		"SetMeta": func(i int) error { return s.SetMeta(ctx, "m", fmt.Append(nil, i)) },
		"PutFile": func(i int) error {
			data := fmt.Appendf(nil, "file %d", i)
			return s.PutFile(ctx, canonical.IDOf(data), data)
		},
		"SetStanding": func(i int) error {
			to := engine.Withdrawn
			if i%2 == 1 {
				to = engine.Stands
			}
			return s.SetStanding(ctx, Digest(v), to)
		},
		"Export": func(int) error {
			for _, err := range s.Export(ctx, sp) {
				if err != nil {
					return err
				}
			}
			return nil
		},
		"Files": func(int) error { return s.Files(ctx, func(engine.FileInfo) bool { return true }) },
	}
	for name, call := range loops {
		loop(name, call)
	}
	for range loops {
		<-started
	}
	time.Sleep(20 * time.Millisecond) // each in some call or other
	if err := s.Close(); err != nil {
		t.Errorf("closed under writes: %v", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a call as the store closed: %v", err)
	}
}

// An Export whose reader is slow (blocked on what it writes) as the store
// closes: Close waits for it however long it takes (closed under the
// read, the KV would fail it, Pebble reporting the iterator leaked), and
// the read stops at its next step with ErrClosed, not damage and not a
// panic. Close then returns with nothing to report.
func (h *harness) testCloseUnderASlowExport(t *testing.T) {
	sp := SpaceID("slow export")
	w := writer(t, sp)
	s := h.store(t, nil)
	v := must[*record.Version](t)(w.First("app.note", "0"))
	admit(t, s, "p", v)
	for i := 1; i < 5; i++ {
		v = must[*record.Version](t)(w.Next(v, fmt.Sprint(i)))
		admit(t, s, "p", v)
	}
	inside, release := make(chan struct{}), make(chan struct{})
	type result struct {
		n   int
		err error
	}
	read := make(chan result, 1)
	go func() {
		var r result
		for _, err := range s.Export(ctx, sp) {
			if err != nil {
				r.err = err
				break
			}
			if r.n == 0 {
				close(inside)
				<-release // the writer blocked
			}
			r.n++
		}
		read <- r
	}()
	<-inside
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	// Close has begun once a new call is refused.
	for {
		if _, err := s.Stats(ctx); errors.Is(err, engine.ErrClosed) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned under a blocked reader: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	r := <-read
	if !errors.Is(r.err, engine.ErrClosed) || r.n != 1 {
		t.Errorf("the slow reader: %d versions, then %v; want 1, then ErrClosed", r.n, r.err)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close under a slow reader: %v", err)
	}
}
