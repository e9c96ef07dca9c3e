package mirror_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/engine/mirror"
)

// logBuffer collects log lines from goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// waitFor waits up to ten seconds for every one of want on the log: a
// line is written after the step it tells of, so a counter read by the
// test can move before its line is there.
func (l *logBuffer) waitFor(t *testing.T, why string, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, missing := l.String(), ""
		for _, w := range want {
			if !strings.Contains(out, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q not on the log:\n%s", why, missing, out)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Case 9 (issue 12): the folder vanishes for two seconds under a running
// mirror (a sync service remounting). Run waits, says so, writes nothing
// meanwhile, and carries on when it is back; it stops when asked, or —
// gone for longer than GoneGrace — with the error.
func TestRunWaitsForFolder(t *testing.T) {
	m, b := sharedFolder(t)
	space := enginetest.SpaceID("vanish")
	var logs logBuffer
	opts := &mirror.Options{BatchDelay: 5 * time.Millisecond, ImportEvery: 50 * time.Millisecond, GoneGrace: time.Minute, Logger: logs.logger()}
	a := newDevice(t, space, b, 1, opts)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.m.Run(rctx) }()
	a.create(0)
	exported := func(n int64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for a.m.Stats().Exported < n {
			if time.Now().After(deadline) {
				t.Fatalf("exported %d, want %d", a.m.Stats().Exported, n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	exported(1)

	// Gone: everything under the root moved away for two seconds.
	saved := map[string][]byte{}
	for _, f := range m.Files() {
		saved[f], _ = m.ReadFile(f)
	}
	m.RemoveAll("/sync/minca")
	a.create(1)
	a.create(2)
	time.Sleep(2 * time.Second)
	if len(m.Files()) != 0 {
		t.Fatalf("the mirror wrote into a vanished folder: %v", m.Files())
	}
	select {
	case err := <-done:
		t.Fatalf("Run stopped while the folder was gone for 2 s: %v", err)
	default:
	}
	for f, data := range saved {
		m.WriteFile(f, data)
	}
	exported(3)
	n := newDevice(t, space, b, 2, nil)
	if err := n.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	sameHeld(t, a.s, n.s, "after the folder came back")
	logs.waitFor(t, "the wait was not said", "waiting for it", "the blob store is back")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run asked to stop: %v", err)
	}

	// Gone for longer than the grace: Run stops with the error.
	c := newDevice(t, space, b, 3, &mirror.Options{BatchDelay: 5 * time.Millisecond, ImportEvery: 20 * time.Millisecond, GoneGrace: 300 * time.Millisecond})
	go func() { done <- c.m.Run(ctx) }()
	time.Sleep(50 * time.Millisecond)
	m.RemoveAll("/sync/minca")
	select {
	case err := <-done:
		// The wait shown is the time waited, at least the grace: how far past it
		// depends on how long the last round took on a loaded machine.
		if !errors.Is(err, engine.ErrBlobStoreGone) {
			t.Fatalf("Run after the grace: %v", err)
		}
		_, rest, _ := strings.Cut(err.Error(), "gave up after waiting ")
		shown, _, _ := strings.Cut(rest, " ")
		if waited, perr := time.ParseDuration(shown); perr != nil || waited < 300*time.Millisecond {
			t.Fatalf("Run after the grace: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not stop after its grace")
	}
}

// A bad segment does not stop Run: it is logged, and what else is there
// is read and written.
func TestRunGoesOnPastBadSegment(t *testing.T) {
	m, b := sharedFolder(t)
	space := enginetest.SpaceID("run bad")
	a := newDevice(t, space, b, 1, nil)
	seg := writeAndExport(t, a, 0, 3)
	data, _ := b.Get(ctx, seg)
	data[len(data)/3] ^= 0x10
	m.WriteFile(root+seg, data)
	var logs logBuffer
	c := newDevice(t, space, b, 2, &mirror.Options{BatchDelay: 5 * time.Millisecond, ImportEvery: 20 * time.Millisecond, Reread: time.Millisecond, Logger: logs.logger()})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.m.Run(rctx) }()
	c.create(5)
	deadline := time.Now().Add(10 * time.Second)
	for c.m.Stats().Exported < 1 || c.m.Stats().Bad < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v", c.m.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, "the bad segment is not named", seg)
}
