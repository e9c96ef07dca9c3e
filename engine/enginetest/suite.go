// Package enginetest is the conformance suite every engine.KV backend runs
// from its own tests: [Run] checks the store's guarantees (02 §4.5, §9.5,
// DESIGN.md The engine) on a backend, and, given a way to reopen a store at
// a path, crash safety with real processes killed by SIGKILL and the
// single-process lock.
package enginetest

import (
	"context"
	"errors"
	"testing"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
)

// Option adds to what Run checks.
type Option func(*config)

type config struct {
	openPath func(path string) (engine.KV, error)
}

// Reopen gives the suite a way to open a store at a path (a new one when
// the path does not exist): it then also checks crash safety and the lock.
func Reopen(open func(path string) (engine.KV, error)) Option {
	return func(c *config) { c.openPath = open }
}

// Run runs the suite. open returns a new, empty KV; the suite closes it.
func Run(t *testing.T, open func(t *testing.T) engine.KV, opts ...Option) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.openPath != nil && childMode(t, c.openPath) {
		return
	}
	h := &harness{open: open}
	t.Run("StaleArrivesAsStub", h.testStaleArrivesAsStub)
	t.Run("StubOnTopTakesItsBody", h.testStubOnTop)
	t.Run("RetainedNeverCut", h.testRetained)
	t.Run("ThousandEditsOneBody", h.testThousandEdits)
	t.Run("NewcomerAfterDelete", h.testNewcomerAfterDelete)
	t.Run("MangledCopyFirst", h.testMangledFirst)
	t.Run("OrderIndependence", h.testOrderIndependence)
	t.Run("WaitingChains", h.testWaitingChains)
	t.Run("WaitingBounded", h.testWaitingBounded)
	t.Run("WaitingBytes", h.testWaitingBytes)
	t.Run("WaitingExpires", h.testWaitingExpires)
	t.Run("Refusals", h.testRefusals)
	t.Run("Idempotent", h.testIdempotent)
	t.Run("Lines", h.testLines)
	t.Run("Outcomes", h.testOutcomes)
	t.Run("ChangeFacts", h.testChangeFacts)
	t.Run("Standing", h.testStanding)
	t.Run("Events", h.testEvents)
	t.Run("SyncOrderAndChanges", h.testSyncOrder)
	t.Run("FilesAndMeta", h.testFilesAndMeta)
	t.Run("FileStreams", h.testFileStreams)
	t.Run("FilesKeptAtOnce", h.testFilesKeptAtOnce)
	t.Run("FilesNamed", h.testFilesNamed)
	t.Run("CheckFindsDamage", h.testCheckFindsDamage)
	t.Run("KV", h.testKV)
	t.Run("Reverse", h.testReverse)
	t.Run("ChangesAcrossBatches", h.testChangesAcrossBatches)
	t.Run("ChangeSources", h.testChangeSources)
	t.Run("CallsAfterClose", h.testCallsAfterClose)
	t.Run("CloseUnderWrites", h.testCloseUnderWrites)
	t.Run("CloseUnderASlowExport", h.testCloseUnderASlowExport)
	t.Run("FilesIndex", func(t *testing.T) { h.testFilesIndex(t, c.openPath) })
	if c.openPath != nil {
		t.Run("Reopen", func(t *testing.T) { testReopen(t, c.openPath) })
		t.Run("WaitingReopen", func(t *testing.T) { testWaitingReopen(t, c.openPath) })
		t.Run("Lock", func(t *testing.T) { testLock(t, c.openPath) })
		t.Run("Crash", func(t *testing.T) { testCrash(t, c.openPath) })
	}
}

type harness struct {
	open func(t *testing.T) engine.KV
}

// store opens an engine with the suite's [Judge] (unless opts has one) on a new KV.
func (h *harness) store(t *testing.T, opts *engine.Options) *engine.Store {
	t.Helper()
	var o engine.Options
	if opts != nil {
		o = *opts
	}
	if o.Judge == nil {
		o.Judge = Judge{}
	}
	s, err := engine.Open(h.open(t), &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func admit(t *testing.T, s *engine.Store, from string, vs ...*record.Version) []engine.Outcome {
	t.Helper()
	outs, err := s.Admit(context.Background(), from, vs)
	if err != nil {
		t.Fatal(err)
	}
	return outs
}

func want(t *testing.T, o engine.Outcome, v engine.Verdict, st engine.Storage) {
	t.Helper()
	if o.Verdict != v || o.Stored != st {
		t.Fatalf("%s: got %v/%v (%v), want %v/%v", o.ID, o.Verdict, o.Stored, o.Refusal, v, st)
	}
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func storedAs(t *testing.T, s *engine.Store, v *record.Version) engine.Storage {
	t.Helper()
	_, st, err := s.Standing(context.Background(), Digest(v))
	if errors.Is(err, engine.ErrNotFound) {
		return engine.None
	}
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func clean(t *testing.T, s *engine.Store) {
	t.Helper()
	probs, err := s.Check(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Error("check:", p)
	}
}

func currentID(t *testing.T, s *engine.Store, space, key string) string {
	t.Helper()
	v, err := s.Current(context.Background(), space, key)
	if errors.Is(err, engine.ErrNotFound) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return v.ID
}

func writer(t *testing.T, space string) *Writer {
	t.Helper()
	return must[*Writer](t)(NewWriter(space))
}

// stats reads the store's counts.
func stats(t *testing.T, s *engine.Store) engine.Stats {
	t.Helper()
	return must[engine.Stats](t)(s.Stats(ctx))
}

// refusedLeavesNoTrace requires that a version the store refused is not
// stored and not passed on (02 §9; engine.Refused): not held by its id,
// not in its record's history, not exported, not in any space's sync
// order, not counted in the stats taken before it was admitted, and not
// in the change log after them. Only the (peer, id) refusal remains.
func refusedLeavesNoTrace(t *testing.T, s *engine.Store, before engine.Stats, v *record.Version) {
	t.Helper()
	if _, _, err := s.Standing(ctx, Digest(v)); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("refused %s has a standing (%v), want ErrNotFound", v.ID, err)
	}
	if _, err := s.Version(ctx, Digest(v)); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("refused %s reads by id (%v), want ErrNotFound", v.ID, err)
	}
	if v.HasSpace {
		hist, err := s.History(ctx, v.Space, v.Key)
		if err != nil && !errors.Is(err, engine.ErrNotFound) {
			t.Fatal(err)
		}
		for _, h := range hist {
			if h.Version.ID == v.ID {
				t.Errorf("refused %s is in its record's history", v.ID)
			}
		}
		if cur, err := s.Current(ctx, v.Space, v.Key); err == nil && cur.ID == v.ID {
			t.Errorf("refused %s reads as its record's current version", v.ID)
		}
	}
	for x, err := range s.Export(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		if x.ID == v.ID {
			t.Errorf("refused %s is exported", v.ID)
		}
	}
	if d, ok := v.Digest(); ok {
		for _, sp := range must[[]string](t)(s.Spaces(ctx)) {
			for it, err := range s.SyncOrder(ctx, sp, engine.SyncKey{}) {
				if err != nil {
					t.Fatal(err)
				}
				if it.Digest == d {
					t.Errorf("refused %s is in the sync order of %s", v.ID, sp)
				}
			}
		}
	}
	after := stats(t, s)
	if after.Versions != before.Versions || after.Whole != before.Whole || after.Stubs != before.Stubs ||
		after.Waiting != before.Waiting || after.BodyBytes != before.BodyBytes || after.EnvelopeBytes != before.EnvelopeBytes ||
		after.Changes != before.Changes || after.Spaces != before.Spaces {
		t.Errorf("refusing %s changed the counts: %+v → %+v", v.ID, before, after)
	}
	for c, err := range s.ChangeLog(ctx, uint64(before.Changes)) {
		if err != nil {
			t.Fatal(err)
		}
		if c.ID == Digest(v) {
			t.Errorf("refused %s is in the change log (%+v)", v.ID, c)
		}
	}
}
