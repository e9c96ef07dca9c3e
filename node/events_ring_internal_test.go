package node

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// The ring holds at most twice EventRingBytes of events, however small
// they are in count, and serves the newest EventRingBytes' worth of them:
// a node's memory for events does not grow with a burst of long keys.
func TestEventRingBoundedInBytes(t *testing.T) {
	const bound = 4096
	e := &events{n: &Node{o: Options{EventRing: 1 << 16, EventRingBytes: bound}}, wake: make(chan struct{})}
	key := strings.Repeat("k", 200)
	var size int64
	for i := range 2000 {
		ev := Event{Kind: EventCurrent, Key: key, seq: uint64(i + 1), Cursor: cursor{uint64(i + 1), 0}.String()}
		size = eventSize(&ev)
		e.publish([]Event{ev})
		e.mu.Lock()
		held := e.total - e.starts[0]
		first := e.first()
		served := e.total - e.starts[first-e.base]
		last := e.ring[len(e.ring)-1].seq
		e.mu.Unlock()
		if held >= 2*bound+size {
			t.Fatalf("after %d events the ring holds %d bytes, bound %d", i+1, held, bound)
		}
		if served > bound || served <= min(held, bound)-size {
			t.Fatalf("after %d events the ring serves %d bytes of events, want the newest %d's worth", i+1, served, bound)
		}
		if last != uint64(i+1) {
			t.Fatalf("the newest event held is %d, want %d", last, i+1)
		}
	}
	if size < 200 || size > 400 {
		t.Fatalf("an event with a 200-byte key is counted as %d bytes", size)
	}
}

// A subscriber resuming from far back is served the change log a page at
// a time, the journal's events merged in their places across the pages:
// every event once, in cursor order, as one read of it all would give.
func TestReplayInPages(t *testing.T) {
	ctx := context.Background()
	n, g := openWithSpace(t, "pages")
	for i := range 11 {
		if _, err := n.Put(ctx, g.ID, "app.note", canonical.NewObject("i", float64(i)), &PutOptions{Key: "k" + strconv.Itoa(i%4)}); err != nil {
			t.Fatal(err)
		}
		st, err := n.st.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		waitEventsAt(t, n.ev, uint64(st.Changes))
		if i%3 == 0 { // a journaled event after this change's own
			n.ev.logged(Event{Kind: EventWaiting, Count: int64(i)})
		}
	}
	n.ev.mu.Lock()
	live := n.ev.at
	n.ev.mu.Unlock()
	whole, reached, err := n.ev.replay(cursor{}, live, 1<<20)
	if err != nil || reached != live {
		t.Fatalf("replay of it all: %v, reached %s of %s", err, reached, live)
	}
	if len(whole) < 15 {
		t.Fatalf("replay of it all made %d events, want the changes' and four journaled", len(whole))
	}
	n.ev.replayPage = 3
	s, err := n.Subscribe("", "0", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, want := range whole {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				t.Fatalf("the subscription ended at event %d: %v", i, s.Err())
			}
			if ev.Cursor != want.Cursor || ev.Kind != want.Kind || ev.ID != want.ID || ev.Count != want.Count {
				t.Fatalf("event %d served in pages: %+v, want %+v", i, ev, want)
			}
		case <-time.After(time.Minute): // a guard against a hang, not a measure
			t.Fatalf("no event %d in a minute", i)
		}
	}
}

// waitEventsAt waits until the pump has made the events of change seq.
func waitEventsAt(t *testing.T, e *events, seq uint64) {
	t.Helper()
	deadline := time.After(time.Minute) // a guard against a hang, not a measure
	for {
		e.mu.Lock()
		at, wake := e.at, e.wake
		e.mu.Unlock()
		if at.seq >= seq {
			return
		}
		select {
		case <-wake:
		case <-deadline:
			t.Fatalf("the node's events reached change %d, not %d, in a minute", at.seq, seq)
		}
	}
}

// openWithSpace opens a node of a new account in a temporary directory,
// closed when t ends, with a new space of that name.
func openWithSpace(t *testing.T, name string) (*Node, *space.Genesis) {
	t.Helper()
	acc, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	n, err := Open(context.Background(), &Options{Dir: t.TempDir(), Account: acc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	g, err := n.CreateSpace(context.Background(), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return n, g
}

// An event's texts are its own, not cut from the bytes its version was
// read from: the ring keeps tens of thousands of events and counts each
// by its own texts (eventSize), so one that kept its version's bytes
// would keep all of them (a version naming 64 files: 5.5 KB).
func TestEventHoldsItsOwnTexts(t *testing.T) {
	w, err := enginetest.NewWriter(enginetest.SpaceID("own texts"))
	if err != nil {
		t.Fatal(err)
	}
	made, err := w.First("app.note", canonical.NewObject("text", "hello"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := made.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	v, err := record.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := v.Digest()
	ev := eventOf(engine.Change{Seq: 1, ID: d, Current: d, Facts: true, Verdict: engine.Stands}, v)
	if ev.Space != v.Space || ev.Key != v.Key || ev.ID != v.ID || ev.Collection != v.Collection || ev.Current != v.ID || ev.Kind != EventCurrent {
		t.Fatalf("the event of %s: %+v", v.ID, ev)
	}
	for _, p := range []struct{ name, ev, v string }{{"space", ev.Space, v.Space}, {"key", ev.Key, v.Key}, {"id", ev.ID, v.ID}, {"collection", ev.Collection, v.Collection}, {"current", ev.Current, v.ID}} {
		if unsafe.StringData(p.ev) == unsafe.StringData(p.v) {
			t.Errorf("the event's %s is the version's own text, cut from the bytes it was read from", p.name)
		}
	}
}
