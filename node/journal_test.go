package node

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/minca-go/minca/identity"
)

// clock is a clock the journal tests move by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func journaled(t *testing.T, j *journal, seq uint64, idx int) {
	t.Helper()
	ev := Event{Kind: EventWaiting, Count: int64(seq), seq: seq, idx: idx, Cursor: cursor{seq, idx}.String()}
	if err := j.append(ev); err != nil {
		t.Fatal(err)
	}
}

// The journal stays under its size bound; what it dropped is named, and a
// reader from before it gets ErrCursorGone, not a gap; a reader from the
// floor on gets every event kept; the floor outlives a reopen.
func TestTheJournalIsBoundedBySize(t *testing.T) {
	dir := t.TempDir()
	c := &clock{time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	j, err := openJournal(dir, 4096, 0, c.now)
	if err != nil {
		t.Fatal(err)
	}
	const n = 400
	for i := 1; i <= n; i++ {
		journaled(t, j, uint64(i), 1)
		if fi, err := os.Stat(filepath.Join(dir, journalName)); err != nil || fi.Size() > 4096 {
			t.Fatalf("after %d events the journal is %d bytes (bound 4096), %v", i, fi.Size(), err)
		}
	}
	floor := j.dropped()
	if floor == (cursor{}) || floor.seq >= n {
		t.Fatalf("the floor is %v after %d events in 4 KiB", floor, n)
	}
	_, err = j.read(cursor{}, cursor{seq: n, idx: 1})
	var ge *CursorGoneError
	if !errors.Is(err, ErrCursorGone) || !errors.As(err, &ge) || ge.Dropped != floor.String() {
		t.Fatalf("reading from the start: %v, want ErrCursorGone naming %s", err, floor)
	}
	evs, err := j.read(floor, cursor{seq: n, idx: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := n - int(floor.seq); len(evs) != want {
		t.Fatalf("%d events after the floor %s, want %d", len(evs), floor, want)
	}
	for i, ev := range evs {
		if ev.seq != floor.seq+uint64(i)+1 {
			t.Fatalf("event %d is at %d: a gap after the floor %s", i, ev.seq, floor)
		}
	}
	if err := j.close(); err != nil {
		t.Fatal(err)
	}
	j, err = openJournal(dir, 4096, 0, c.now)
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	if j.dropped() != floor || j.lastIdx(n) != 1 {
		t.Fatalf("reopened: floor %v, last idx %d; want %v, 1", j.dropped(), j.lastIdx(n), floor)
	}
	if _, err := j.read(cursor{seq: floor.seq - 1, idx: 5}, cursor{seq: n, idx: 1}); !errors.Is(err, ErrCursorGone) {
		t.Fatalf("reopened, reading from before the floor: %v", err)
	}
}

// Events older than the age bound are dropped, as events come and when
// the journal is opened again.
func TestTheJournalIsBoundedByAge(t *testing.T) {
	dir := t.TempDir()
	c := &clock{time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	j, err := openJournal(dir, 1<<20, time.Hour, c.now)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 10; i++ {
		journaled(t, j, uint64(i), 1)
		c.t = c.t.Add(time.Minute)
	}
	if j.dropped() != (cursor{}) {
		t.Fatalf("dropped %v within the hour", j.dropped())
	}
	c.t = c.t.Add(70 * time.Minute) // the first five are over 1 h 8 min old at the next
	journaled(t, j, 11, 1)
	evs, err := j.read(j.dropped(), cursor{seq: 11, idx: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 || len(evs) == 11 {
		t.Fatalf("%d events kept after an hour and more", len(evs))
	}
	for _, ev := range evs {
		if ev.seq < 11 && c.t.Sub(time.Date(2026, 12, 1, 0, int(ev.seq-1), 0, 0, time.UTC)) > time.Hour {
			t.Fatalf("event %d, older than an hour, is kept", ev.seq)
		}
	}
	j.close()
	c.t = c.t.Add(3 * time.Hour)
	if j, err = openJournal(dir, 1<<20, time.Hour, c.now); err != nil {
		t.Fatal(err)
	}
	defer j.close()
	if got := j.dropped(); got != (cursor{11, 1}) {
		t.Fatalf("opened three hours on, the floor is %v; want 11.1", got)
	}
	if _, err := j.read(cursor{10, 0}, cursor{11, 1}); !errors.Is(err, ErrCursorGone) {
		t.Fatalf("reading dropped events: %v", err)
	}
}

// A subscriber resuming from before what the journal keeps is refused
// with ErrCursorGone, at once; one resuming from the floor gets what is
// kept.
func TestSubscribingFromADroppedCursor(t *testing.T) {
	ctx := context.Background()
	acc, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	n, err := Open(ctx, &Options{Dir: t.TempDir(), Account: acc, EventJournalBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for i := range 200 {
		n.ev.logged(Event{Kind: EventWaiting, Count: int64(i)})
	}
	floor := n.ev.journal.dropped()
	if floor == (cursor{}) {
		t.Fatal("nothing dropped from a 4 KiB journal after 200 events")
	}
	if _, err := n.Subscribe("", "0", 0); !errors.Is(err, ErrCursorGone) {
		t.Fatalf("subscribing from 0: %v, want ErrCursorGone", err)
	}
	s, err := n.Subscribe("", floor.String(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := floor.idx + 1; i <= 200; i++ {
		select {
		case ev := <-s.Events():
			if want := (cursor{floor.seq, i}).String(); ev.Cursor != want {
				t.Fatalf("after the floor %s: event %s, want %s", floor, ev.Cursor, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("no event %d.%d: %v", floor.seq, i, s.Err())
		}
	}
}

// A line a crash cut short is cut off when the journal opens, so the
// events journaled after it are read.
func TestATornJournalLineIsCutOff(t *testing.T) {
	dir := t.TempDir()
	c := &clock{time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	j, err := openJournal(dir, 1<<20, 0, c.now)
	if err != nil {
		t.Fatal(err)
	}
	journaled(t, j, 1, 1)
	j.close()
	f, err := os.OpenFile(filepath.Join(dir, journalName), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"cursor":"2.1","kind":"wait`)
	f.Close()
	if j, err = openJournal(dir, 1<<20, 0, c.now); err != nil {
		t.Fatal(err)
	}
	defer j.close()
	journaled(t, j, 3, 1)
	evs, err := j.read(cursor{}, cursor{seq: 3, idx: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].seq != 1 || evs[1].seq != 3 {
		t.Fatalf("after a torn line: %+v, want the events at 1 and 3", evs)
	}
}
