package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/record"
)

// A subscriber that falls behind a burst of versions naming many files
// holds at most engine.SubscriptionBytes of them untaken, by their bytes
// as JSON (a little more than as stored): past it, events are dropped and
// counted, as when the buffer is full; once it catches up, events come
// again.
func TestSubscriptionBoundedInBytes(t *testing.T) {
	ctx := context.Background()
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}, Files: engine.NewMemoryFiles()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sp := enginetest.SpaceID("subscription bytes")
	w, err := enginetest.NewWriter(sp)
	if err != nil {
		t.Fatal(err)
	}
	sub := s.Subscribe("", 1<<16) // room in number for every event below
	defer sub.Close()
	admit := func(round, n int) (size int) {
		for i := range n {
			_, b := admitNamingFiles(t, ctx, s, w, fmt.Sprintf("round %d version %d", round, i), i)
			size = max(size, b)
		}
		return size
	}
	// take takes what is queued: the versions' bytes as JSON, and how
	// many events.
	take := func() (bytes, events int) {
		for {
			select {
			case e := <-sub.Events():
				events++
				if e.Version != nil {
					b, err := e.Version.MarshalJSON()
					if err != nil {
						t.Fatal(err)
					}
					bytes += len(b)
				}
			default:
				return bytes, events
			}
		}
	}
	const n = 1000 // some 5 MB of versions as JSON
	size := admit(0, n)
	if n*size < 2*engine.SubscriptionBytes {
		t.Fatalf("the burst is %d bytes: too little to test a bound of %d", n*size, engine.SubscriptionBytes)
	}
	bytes, events := take()
	if sub.Dropped() == 0 {
		t.Fatalf("%d events of %d versions of up to %d bytes, none dropped", events, n, size)
	}
	// Each version's bytes as stored are a little under its JSON.
	if bytes > engine.SubscriptionBytes+engine.SubscriptionBytes/4 || bytes < engine.SubscriptionBytes/2 {
		t.Fatalf("%d bytes of versions held untaken; the bound is %d", bytes, engine.SubscriptionBytes)
	}
	// Caught up: the next events come whole.
	dropped := sub.Dropped()
	admit(1, 10)
	if _, events := take(); events == 0 || sub.Dropped() != dropped {
		t.Fatalf("after catching up: %d events, %d more dropped", events, sub.Dropped()-dropped)
	}
}

// carryIndexer is an Indexer that writes nothing and returns the
// record's new current version, as package index returns a change
// holding it (decoded and as JSON), to ride on the EventCurrent.
type carryIndexer struct{}

func (carryIndexer) Layout() string { return "carry-the-version" }
func (carryIndexer) Current(b engine.IndexBatch, c engine.CurrentChange) (any, error) {
	return c.New, nil
}

// What an Indexer returned rides on an EventCurrent, and weighs in the
// subscription's bound as the version it holds: a subscriber that falls
// behind a burst holds at most engine.SubscriptionBytes of versions
// through its events, those the EventCurrents keep included.
func TestSubscriptionBoundWeighsWhatIndexersReturn(t *testing.T) {
	ctx := context.Background()
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}, Files: engine.NewMemoryFiles(), Indexer: carryIndexer{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sp := enginetest.SpaceID("indexed bytes")
	w, err := enginetest.NewWriter(sp)
	if err != nil {
		t.Fatal(err)
	}
	sub := s.Subscribe("", 1<<16) // room in number for every event below
	defer sub.Close()
	const n = 1000
	size := 0
	for i := range n {
		_, b := admitNamingFiles(t, ctx, s, w, fmt.Sprintf("version %d", i), i)
		size = max(size, b)
	}
	// The versions the queued events keep, each once, by their bytes as
	// JSON (a little more than as stored), and how many rode on an
	// EventCurrent.
	held := map[string]int{}
	indexed := 0
	for len(sub.Events()) > 0 {
		e := <-sub.Events()
		for _, v := range []*record.Version{e.Version, func() *record.Version { v, _ := e.Indexed.(*record.Version); return v }()} {
			if v == nil {
				continue
			}
			b, err := v.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			held[v.ID] = len(b)
		}
		if e.Indexed != nil {
			indexed++
		}
	}
	bytes := 0
	for _, b := range held {
		bytes += b
	}
	if indexed == 0 || sub.Dropped() == 0 {
		t.Fatalf("%d events carried what the indexer returned, %d dropped, of %d versions of up to %d bytes", indexed, sub.Dropped(), n, size)
	}
	if bytes > engine.SubscriptionBytes+engine.SubscriptionBytes/4 {
		t.Fatalf("%d versions (%d bytes) kept by the events held untaken; the bound is %d", len(held), bytes, engine.SubscriptionBytes)
	}
}
