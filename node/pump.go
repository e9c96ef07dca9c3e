package node

import (
	"context"
	"errors"
	"github.com/minca-go/minca/canonical"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
)

// pump makes the events as the store commits: each change's own event
// from the engine's event of it, which carries the change as the change
// log keeps it (eventOf); a change whose engine event it missed (the
// subscription dropped it) is read from the change log; a new waiting
// count is journaled. Nothing is read on a timer: every change is in the
// change log, and the engine tells of each batch it commits.
func (e *events) pump() {
	defer close(e.done)
	// evs is kept from one run to the next: a run of a busy store's
	// events is as long as a batch, and grown afresh each time it was a
	// kilobyte of garbage a write.
	var evs []engine.Event
	for {
		ev, ok := <-e.sub.Events()
		// Everything queued is taken at once.
		clear(evs) // no version is kept alive by a run taken already
		evs = append(evs[:0], ev)
		for ok && len(evs) < maxTake {
			select {
			case ev, ok = <-e.sub.Events():
				if ok {
					evs = append(evs, ev)
				}
				continue
			default:
			}
			break
		}
		if evs[0].Kind != 0 {
			e.take(evs)
		}
		if !ok {
			e.readChanges() // what committed last
			return
		}
		if d := e.sub.Dropped(); d > e.dropped {
			e.dropped = d
			e.n.o.Logger.Warn("the node's events fell behind the store's; the missed ones are read from the change log", "dropped", d)
			e.readChanges()
		}
	}
}

// take makes the node's events from a run of the engine's, in order.
func (e *events) take(evs []engine.Event) {
	ctx := context.Background()
	e.mu.Lock()
	last := e.at.seq // the pump alone moves it
	e.mu.Unlock()
	var out []Event
	flush := func() {
		e.publish(out)
		e.follow(ctx, out)
		out = nil
	}
	for _, ev := range evs {
		switch ev.Kind {
		case engine.EventAdmitted, engine.EventStanding, engine.EventLine:
			switch {
			case ev.Seq <= last:
				continue // made already, from the change log
			case ev.Seq != last+1 || ev.Version == nil:
				flush()
				e.readChanges()
				e.mu.Lock()
				last = e.at.seq
				e.mu.Unlock()
				continue
			}
			out = append(out, eventOf(ev.Change, ev.Version))
			last = ev.Seq
		case engine.EventWaiting:
			flush()
			e.logged(Event{Kind: EventWaiting, Count: ev.Count})
		}
	}
	flush()
}

// eventOf is a change's own event (index 0 of its change): what it says
// of the record is what the change's batch left, as the change log keeps
// it; v is the change's version (its space, key and collection).
func eventOf(c engine.Change, v *record.Version) Event {
	// The event's texts are its own, made in one piece: a version's are
	// cut from the bytes it was read from, and the ring keeps thousands
	// of events, each of which would keep its version's bytes (5.5 KB for
	// a version naming 64 files) where eventSize counts its texts alone.
	own := v.Space + v.Key + v.ID + v.Collection
	space, own := own[:len(v.Space)], own[len(v.Space):]
	key, own := own[:len(v.Key)], own[len(v.Key):]
	id, collection := own[:len(v.ID)], own[len(v.ID):]
	ev := Event{seq: c.Seq, Cursor: cursor{c.Seq, 0}.String(), Space: space, Key: key, ID: id, Collection: collection}
	switch {
	case c.Current == c.ID:
		ev.Current = id // its text at hand
	case !c.Current.IsZero():
		ev.Current = c.Current.String()
	}
	switch {
	case c.Kind == engine.Forked:
		ev.Kind, ev.Key, ev.Current, ev.Other = EventFork, "", "", c.Other.String()
	case c.Kind == engine.Withdrew:
		ev.Kind = EventWithdrawn
	case c.Kind == engine.Restood:
		ev.Kind = EventRestored
	case c.Current == c.ID && v.Deleted:
		ev.Kind = EventDeleted
	case c.Current == c.ID:
		ev.Kind = EventCurrent // what reads stands
	case c.Verdict == engine.Withdrawn:
		ev.Kind = EventWithdrawn
	default:
		ev.Kind = EventStored
	}
	return ev
}

// changeEvent is the event of a change read from the change log. A change
// an earlier layout logged without what its batch left is told with what
// the store holds now.
func (e *events) changeEvent(ctx context.Context, c engine.Change) (Event, error) {
	v, err := e.n.st.Version(ctx, c.ID)
	if err != nil {
		return Event{}, err
	}
	if !c.Facts {
		c.Current = canonical.ID{}
		if cur, err := e.n.st.Current(ctx, v.Space, v.Key); err == nil {
			c.Current, _ = cur.Digest()
		} else if !errors.Is(err, engine.ErrNotFound) {
			return Event{}, err
		}
		if c.Verdict, _, err = e.n.st.Standing(ctx, c.ID); err != nil {
			return Event{}, err
		}
	}
	return eventOf(c, v), nil
}
