package node

import (
	"context"

	"github.com/minca-go/minca/engine"
)

// take makes the node's events from a run of the engine's, in order.
// Each stored version's and each standing change's own event is made from
// what the engine's event carries (the change's sequence and the version
// at hand); what the run says of records afterwards — each one's last
// current version, each version's last standing — stands in for reading
// them back from the store, which is what [events.derive] does for a
// change read from the change log. A change whose engine event is missing
// (a gap in the sequence: the engine's subscription dropped events) is
// read from the change log instead.
func (e *events) take(evs []engine.Event) {
	ctx := context.Background()
	cur := map[string]string{}
	standing := map[string]engine.Verdict{}
	for _, ev := range evs {
		switch ev.Kind {
		case engine.EventCurrent:
			cur[ev.Space+"\n"+ev.Key] = ev.ID
		case engine.EventStanding:
			standing[ev.ID] = ev.Verdict
		}
	}
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
		case engine.EventAdmitted, engine.EventStanding:
			if ev.Seq == 0 { // a standing change outside the change log
				flush()
				e.handle(ev)
				continue
			}
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
			out = append(out, e.admitted(ev, cur, standing))
			last = ev.Seq
		case engine.EventLine:
			flush()
			e.handle(ev)
		}
	}
	flush()
}

// admitted is the event of a stored version or a standing change (index 0
// of its change), as [events.derive] would make it after the run of engine
// events it came in: cur and standing are what the run says of records
// and versions; a record the run did not change is read.
func (e *events) admitted(ev engine.Event, cur map[string]string, standing map[string]engine.Verdict) Event {
	v := ev.Version
	out := Event{seq: ev.Seq, Cursor: cursor{ev.Seq, 0}.String(), Space: v.Space, Key: v.Key, ID: v.ID, Collection: v.Collection}
	c, ok := cur[v.Space+"\n"+v.Key]
	if !ok {
		c = e.currentOf(v.Space, v.Key)
	}
	out.Current = c
	switch {
	case ev.Kind == engine.EventStanding && ev.Verdict == engine.Withdrawn:
		out.Kind = EventWithdrawn
	case ev.Kind == engine.EventStanding:
		out.Kind = EventRestored
	case c == v.ID && v.Deleted:
		out.Kind = EventDeleted
	case c == v.ID:
		out.Kind = EventCurrent
	default:
		verdict := ev.Verdict
		if s, ok := standing[v.ID]; ok {
			verdict = s
		}
		out.Kind = EventStored
		if verdict == engine.Withdrawn {
			out.Kind = EventWithdrawn
		}
	}
	return out
}
