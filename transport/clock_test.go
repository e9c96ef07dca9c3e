package transport

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock that moves only when a test advances it, so a test
// of timeouts decides exactly when each one is due.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*fakeTimer
	changed chan struct{} // closed, and replaced, whenever timers change
}

type fakeTimer struct {
	c  *fakeClock
	d  time.Duration
	at time.Time
	f  func()
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Unix(1_700_000_000, 0), changed: make(chan struct{})}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) stopper {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, d: d, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	c.notifyLocked()
	return t
}

func (t *fakeTimer) Stop() bool {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.timers, t)
	if i < 0 {
		return false
	}
	c.timers = slices.Delete(c.timers, i, i+1)
	c.notifyLocked()
	return true
}

func (c *fakeClock) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Advance moves the clock on by d and fires, each on its own goroutine as
// time.AfterFunc does, every timer that is then due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	c.timers = slices.DeleteFunc(c.timers, func(t *fakeTimer) bool {
		if t.at.After(c.now) {
			return false
		}
		due = append(due, t)
		return true
	})
	c.notifyLocked()
	c.mu.Unlock()
	for _, t := range due {
		go t.f()
	}
}

// waitTimers waits until the timers set are exactly those of the
// durations given (in any order): the goroutines that set them have done
// what the last Advance made them do. It fails the test if quit is
// closed first (nil: never).
func (c *fakeClock) waitTimers(t testing.TB, quit <-chan struct{}, ds ...time.Duration) {
	t.Helper()
	want := slices.Sorted(slices.Values(ds))
	for {
		c.mu.Lock()
		var have []time.Duration
		for _, tm := range c.timers {
			have = append(have, tm.d)
		}
		changed := c.changed
		c.mu.Unlock()
		slices.Sort(have)
		if slices.Equal(have, want) {
			return
		}
		select {
		case <-changed:
		case <-quit:
			t.Fatalf("waiting for timers of %v (%v are set): the connection ended", want, have)
		case <-time.After(time.Minute):
			t.Fatalf("waiting for timers of %v: %v are set, and nothing changed within a minute", want, have)
		}
	}
}
