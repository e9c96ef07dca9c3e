package engine

import (
	"sync"
	"sync/atomic"

	"github.com/minca-go/minca/canonical"
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
// when the buffer is full, or the versions its events carry untaken
// (Version, and what an Indexer returned) pass 2 MiB as stored
// (subscriptionBytes), the event is dropped and counted,
// and a subscriber catches up from [Store.Changes] or by reading the record.
type Subscription struct {
	c       chan Event
	space   string
	dropped atomic.Int64
	// holding, while set, counts the batches with events of the
	// subscription's space in passed rather than sending the events
	// (Hold).
	holding bool // guarded by the owner's mu
	passed  atomic.Int64
	owner   *subscribers
	// weights are the weights (weightOf) of the events sent and perhaps
	// not yet taken, oldest first, and held their sum (guarded by the
	// owner's mu): those sent before the last len(c) were taken.
	weights []int32
	held    int64
}

// subscriptionBytes bounds the versions a subscription holds untaken, by
// their bytes as stored: an event carries its version decoded, which
// weighs up to six times that (a version naming many files), and a
// subscriber that falls behind a burst of such versions would otherwise
// keep as many as its buffer holds in memory (8,192 of 30 KB: 240 MB).
// Past it an event is dropped and counted, as when the buffer is full.
// 2 MiB is some 4,000 versions of 500 bytes, 400 naming 64 files each.
const subscriptionBytes = 2 << 20

// weightOf is what an event costs its subscription past its place in the
// buffer: its version's bytes as stored, when it carries one, and as
// much again when what the Indexer returned rides on it (package index
// keeps the record's current version there, decoded and as JSON: an
// EventCurrent of a burst weighs what its EventAdmitted does).
func weightOf(e Event, weight map[canonical.ID]int) int32 {
	w := 0
	if e.Version != nil {
		w = versionWeight
		if d, ok := e.Version.Digest(); ok {
			if n, ok := weight[d]; ok {
				w = n
			}
		}
	}
	if e.Indexed != nil {
		n := versionWeight
		if d, ok := canonical.ParseExactID(e.ID); ok {
			if m, ok := weight[d]; ok {
				n = m
			}
		}
		w += n
	}
	return int32(min(w, 1<<30))
}

// versionWeight weighs a version whose bytes the batch did not note (a
// line proof's, a version whose standing changed): a typical version.
const versionWeight = 1 << 10

// Events is the channel events arrive on; it is closed by Close or when
// the store closes.
func (s *Subscription) Events() <-chan Event { return s.c }

// Dropped is how many events were dropped because the buffer was full.
func (s *Subscription) Dropped() int64 { return s.dropped.Load() }

// Hold stops sending the subscription's events, or (false) starts again:
// while held, each batch committed with events of its space is counted
// (Passed) and its events not sent, for a subscriber that at times needs
// to know only that its space changed, not what changed — the channel
// send and the subscriber's taking of each event cost more than a count
// a batch. A batch committed before Hold(false) returns is counted, one
// after it sent: none is both, none neither.
func (s *Subscription) Hold(on bool) {
	s.owner.mu.Lock()
	s.holding = on
	s.owner.mu.Unlock()
}

// Passed is how many batches with events of the subscription's space
// were counted, their events not sent, while it was held (Hold).
func (s *Subscription) Passed() int64 { return s.passed.Load() }

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

// publish sends a batch's events to the subscribers; weight is the
// batch's versions' bytes as stored, by digest. A held subscription
// (Hold) is counted once for the batch when it has events of its space:
// it asks only whether its space changed.
func (ss *subscribers) publish(evs []Event, weight map[canonical.ID]int) {
	if len(evs) == 0 {
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var ws []int32 // made for the first subscription sent to
	for sub := range ss.set {
		if sub.holding {
			for _, e := range evs {
				if sub.space == "" || sub.space == e.Space {
					sub.passed.Add(1)
					break
				}
			}
			continue
		}
		if ws == nil {
			ws = make([]int32, len(evs))
			for i, e := range evs {
				ws[i] = weightOf(e, weight)
			}
		}
		for i, e := range evs {
			if sub.space != "" && sub.space != e.Space {
				continue
			}
			sub.send(e, ws[i])
		}
	}
}

// send sends e unless the buffer is full or the versions held untaken
// would pass subscriptionBytes: then it is dropped and counted. The
// owner's mu is held: publish is the only sender, so events taken since
// are the oldest of those noted past the len(c) still queued.
func (sub *Subscription) send(e Event, w int32) {
	if taken := len(sub.weights) - len(sub.c); taken > 0 {
		for _, x := range sub.weights[:taken] {
			sub.held -= int64(x)
		}
		sub.weights = sub.weights[taken:]
		if len(sub.weights) == 0 {
			sub.weights = sub.weights[:0:0] // let the array go
		}
	}
	if w > 0 && sub.held > 0 && sub.held+int64(w) > subscriptionBytes {
		sub.dropped.Add(1)
		return
	}
	select {
	case sub.c <- e:
		sub.weights = append(sub.weights, w)
		sub.held += int64(w)
	default:
		sub.dropped.Add(1)
	}
}
