package engine

import (
	"sync"
	"sync/atomic"

	"github.com/minca-go/minca/record"
)

// EventKind is what an [Event] reports.
type EventKind uint8

const (
	// EventAdmitted: a version was stored (Verdict says stands or
	// withdrawn), or the body of a held stub was added.
	EventAdmitted EventKind = iota + 1
	// EventCurrent: a record's readable current version changed; ID is
	// the new one, "" when the record no longer reads (02 §9.5).
	EventCurrent
	// EventLine: a fork or break of a writer's line was found on arrival
	// (02 §4.10); Proof carries both versions.
	EventLine
	// EventStanding: the judge changed a held version's standing.
	EventStanding
	// EventWaiting: how many versions wait (02 §9.5) changed; Count says
	// how many, in every space (Space is "").
	EventWaiting
)

func (k EventKind) String() string {
	switch k {
	case EventAdmitted:
		return "admitted"
	case EventCurrent:
		return "current"
	case EventLine:
		return "line"
	case EventStanding:
		return "standing"
	case EventWaiting:
		return "waiting"
	}
	return "unknown"
}

// Event is one thing that happened in a space, published after the batch
// that made it is committed.
type Event struct {
	Kind    EventKind
	Space   string
	Key     string // the record's key (not for EventLine)
	ID      string // the version concerned
	Verdict Verdict
	Proof   *record.LineProof // EventLine only
	// Seq is the change log sequence of the change (EventAdmitted,
	// EventStanding, EventLine): a subscriber that sees a gap in it missed
	// events, and reads them from [Store.ChangeLog].
	Seq uint64
	// Change is the change as the change log keeps it, with what the
	// batch left (EventAdmitted, EventStanding, EventLine).
	Change Change
	// Version is the version stored or restood, or the line proof's
	// first, as the batch had it at hand (EventAdmitted, EventStanding,
	// EventLine; it may lack its body). It must not be changed.
	Version *record.Version
	// Count is how many versions wait after the batch (EventWaiting).
	Count int64
	// Indexed is what the store's Indexer returned for this change
	// (EventCurrent only; nil without an Indexer).
	Indexed any
}

// Subscription receives a space's events. Delivery never blocks the store:
// when the buffer is full the event is dropped and counted, and a
// subscriber catches up from [Store.Changes] or by reading the record.
type Subscription struct {
	c       chan Event
	space   string
	dropped atomic.Int64
	owner   *subscribers
}

// Events is the channel events arrive on; it is closed by Close or when
// the store closes.
func (s *Subscription) Events() <-chan Event { return s.c }

// Dropped is how many events were dropped because the buffer was full.
func (s *Subscription) Dropped() int64 { return s.dropped.Load() }

// Close stops the subscription and closes its channel.
func (s *Subscription) Close() { s.owner.remove(s) }

// Subscribe returns a subscription to the events of one space ("" for
// every space), buffering up to buffer events (default 1024).
func (s *Store) Subscribe(space string, buffer int) *Subscription {
	if buffer <= 0 {
		buffer = 1024
	}
	sub := &Subscription{c: make(chan Event, buffer), space: space, owner: &s.subs}
	s.subs.add(sub)
	return sub
}

type subscribers struct {
	mu     sync.Mutex
	set    map[*Subscription]struct{}
	closed bool
}

func (ss *subscribers) add(sub *Subscription) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed {
		close(sub.c)
		return
	}
	if ss.set == nil {
		ss.set = make(map[*Subscription]struct{})
	}
	ss.set[sub] = struct{}{}
}

func (ss *subscribers) remove(sub *Subscription) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if _, ok := ss.set[sub]; ok {
		delete(ss.set, sub)
		close(sub.c)
	}
}

func (ss *subscribers) closeAll() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for sub := range ss.set {
		close(sub.c)
	}
	ss.set = nil
	ss.closed = true
}

func (ss *subscribers) publish(evs []Event) {
	if len(evs) == 0 {
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for sub := range ss.set {
		for _, e := range evs {
			if sub.space != "" && sub.space != e.Space {
				continue
			}
			select {
			case sub.c <- e:
			default:
				sub.dropped.Add(1)
			}
		}
	}
}
