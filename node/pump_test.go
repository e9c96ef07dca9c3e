package node_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/node"
)

// Live events are made from the engine's own events, not read back: under
// concurrent writers (batches holding several versions of one record,
// deletes among them) every change has its event once, in sequence with no
// gap, each says what the batch made of its record, and the change log,
// read again from the start, names the same versions at the same cursors.
func TestLiveEventsMatchTheChangeLog(t *testing.T) {
	ctx := context.Background()
	tn := newNode(t, nil)
	g := tn.space("pump", nil)
	live, err := tn.Subscribe(g.ID, "", 1<<14)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	var mu sync.Mutex
	ids := map[string]bool{}
	full := map[string]string{} // the five records' keys
	for i := range 5 {
		v := put(t, tn, g.ID, "app.note", obj("first", true), &node.PutOptions{Key: "k" + strconv.Itoa(i)})
		full["k"+strconv.Itoa(i)] = v.Key
		ids[v.ID] = true
	}
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				key := "k" + strconv.Itoa((w+i)%5) // five records everyone writes
				var id string
				if i%7 == 6 {
					v, err := tn.Delete(ctx, g.ID, full[key])
					if err != nil {
						var we *node.WriteError
						if errors.As(err, &we) && we.Code == node.CodeNotFound {
							continue // deleted already by another writer
						}
						t.Error(err)
						return
					}
					id = v.ID
				} else {
					v, err := tn.Put(ctx, g.ID, "app.note", obj("w", float64(w), "i", float64(i)), &node.PutOptions{Key: key})
					if err != nil {
						t.Error(err)
						return
					}
					id = v.ID
				}
				mu.Lock()
				ids[id] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var got []node.Event
	seen := map[string]bool{}
	for len(seen) < len(ids) {
		ev := next(t, live)
		if ev.Kind == node.EventWaiting {
			continue
		}
		got = append(got, ev)
		if seen[ev.ID] {
			t.Fatalf("two events for %s", ev.ID)
		}
		seen[ev.ID] = true
		if !ids[ev.ID] {
			t.Fatalf("an event for %s, which was not written", ev.ID)
		}
		switch ev.Kind {
		case node.EventCurrent, node.EventDeleted:
			if ev.Current != ev.ID {
				t.Fatalf("%s event of %s says the current version is %s", ev.Kind, ev.ID, ev.Current)
			}
		case node.EventStored:
			if ev.Current == ev.ID {
				t.Fatalf("a stored event of the current version %s", ev.ID)
			}
		default:
			t.Fatalf("unexpected event %+v", ev)
		}
	}
	first, _, _ := strings.Cut(got[0].Cursor, ".")
	seq, _ := strconv.Atoi(first)
	for i, ev := range got {
		if want := fmt.Sprintf("%d.0", seq+i); ev.Cursor != want {
			t.Fatalf("event %d has cursor %s, want %s: a gap or a repeat", i, ev.Cursor, want)
		}
	}
	// The last event of each record says what it reads now.
	lastOf := map[string]node.Event{}
	for _, ev := range got {
		lastOf[ev.Key] = ev
	}
	for key, ev := range lastOf {
		want := ""
		if v, err := tn.Store().Current(ctx, g.ID, key); err == nil {
			want = v.ID
		}
		if ev.Current != want {
			t.Fatalf("the last event of %s says its current version is %q; the store reads %q", key, ev.Current, want)
		}
	}
	// The change log read again gives the same versions at the same cursors.
	again, err := tn.Subscribe(g.ID, fmt.Sprintf("%d.0", seq-1), 1<<14)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for i := 0; i < len(got); {
		ev := next(t, again)
		if ev.Kind == node.EventWaiting {
			continue
		}
		if ev.Cursor != got[i].Cursor || ev.ID != got[i].ID || ev.Key != got[i].Key || ev.Collection != got[i].Collection {
			t.Fatalf("read again, event %d is %+v; live it was %+v", i, ev, got[i])
		}
		i++
	}
}

// A subscriber resuming from far back, with more events to read again
// than its buffer holds, gets them all: what is read again waits for it.
func TestResumingFromFarBackIsNotDroppedAsSlow(t *testing.T) {
	tn := newNode(t, nil)
	g := tn.space("far", nil)
	start := lastCursor(t, tn)
	var ids []string
	for i := range 40 {
		ids = append(ids, put(t, tn, g.ID, "app.note", obj("i", float64(i)), nil).ID)
	}
	lastCursor(t, tn) // the events of those writes are made: all are read again
	s, err := tn.Subscribe(g.ID, start, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range ids {
		for {
			time.Sleep(time.Millisecond) // a slow reader
			ev := next(t, s)
			if ev.ID == id {
				break
			}
		}
	}
}
