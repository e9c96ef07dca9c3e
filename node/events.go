package node

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/minca-go/minca/engine"
)

// Kinds of [Event].
const (
	// EventCurrent: a version was stored and is its record's readable
	// current version now (02 §4.3, §9.5).
	EventCurrent = "current"
	// EventDeleted: a delete was stored and is its record's current
	// version now (02 §4.4).
	EventDeleted = "deleted"
	// EventStored: a version was stored that is not its record's current
	// version (an older one arriving, a stub, one superseded since).
	EventStored = "stored"
	// EventWithdrawn: a version is withdrawn (02 §9.5): stored so, or
	// taken away by an access change it had not seen.
	EventWithdrawn = "withdrawn"
	// EventRestored: a withdrawn version stands again.
	EventRestored = "restored"
	// EventFork: two versions of one key at one place of its line, or a
	// break (02 §4.10).
	EventFork = "fork"
	// EventWaiting: how many versions the store holds aside (02 §9.5)
	// changed; Count says how many, in every space.
	EventWaiting = "waiting"
)

// Event is something that happened in a space, in commit order (DESIGN.md:
// events are delivered in commit order with a resumable cursor). The
// cursor is "SEQ.I": SEQ the store's change log sequence (engine.Change)
// the event follows from, I its place among the events of that change (0
// is the change's own; a waiting count follows it). What an event says of
// a record (Kind, Current) is what the change's batch left: a subscriber
// resuming from an old cursor is told what it would have been told then.
type Event struct {
	Cursor     string `json:"cursor"`
	Kind       string `json:"kind"`
	Space      string `json:"space,omitempty"`
	Key        string `json:"key,omitempty"`
	ID         string `json:"id,omitempty"`
	Collection string `json:"collection,omitempty"`
	// Current is the record's readable current version's id after the
	// event, "" when none reads.
	Current string `json:"current,omitempty"`
	// Other is the fork's other version.
	Other string `json:"other,omitempty"`
	// Count is the number of versions waiting (EventWaiting).
	Count int64 `json:"count,omitempty"`

	seq uint64
	idx int
}

// place is where ev stands in the event stream.
func (ev *Event) place() cursor { return cursor{ev.seq, ev.idx} }

// Cursor is a place in the event stream: events after it are delivered.
type cursor struct {
	seq uint64
	idx int
}

func (c cursor) String() string { return strconv.FormatUint(c.seq, 10) + "." + strconv.Itoa(c.idx) }

func (c cursor) before(d cursor) bool { return c.seq < d.seq || c.seq == d.seq && c.idx < d.idx }

// parseCursor reads a cursor: "SEQ.I", or "SEQ" for SEQ.0.
func parseCursor(s string) (cursor, error) {
	a, b, ok := strings.Cut(s, ".")
	seq, err := strconv.ParseUint(a, 10, 64)
	if err != nil {
		return cursor{}, fmt.Errorf("minca/node: cursor %q: want SEQ.I", s)
	}
	c := cursor{seq: seq}
	if ok {
		if c.idx, err = strconv.Atoi(b); err != nil || c.idx < 0 {
			return cursor{}, fmt.Errorf("minca/node: cursor %q: want SEQ.I", s)
		}
	}
	return c, nil
}

// ErrSlow: a subscriber did not take events as fast as they came; it
// resumes from the cursor of the last event it took.
var ErrSlow = errors.New("minca/node: subscription dropped: its reader fell behind; subscribe again from the last cursor taken")

// events turns the store's changes into the node's events: a pump takes
// the engine's events (each stored version, standing change and fork with
// its change as the change log keeps it, pump.go) and keeps the last ones
// in a ring; a change whose engine event it missed, and every change a
// resuming subscriber asks for, it reads from the engine's change log
// (durable, in commit order, standing changes and forks included, each
// with what its batch left: engine.Store.ChangeLog). Both make a change's
// event with eventOf, so an event read again is the event first told.
// What the change log does not hold (waiting counts) is written to a
// bounded journal as the pump makes it.
type events struct {
	n       *Node
	sub     *engine.Subscription
	journal *journal

	mu   sync.Mutex
	ring []Event
	// starts[i] is the bytes the ring took (eventSize) before ring[i]
	// since the node opened; total is the bytes after its last event.
	starts  []int64
	total   int64
	base    uint64 // position of ring[0]
	at      cursor // the last event made
	wake    chan struct{}
	closed  bool
	dropped int64

	done chan struct{}
	// serving counts the subscriptions' serve goroutines: close waits
	// for them before the journal and the store they read close.
	serving sync.WaitGroup
	// replaying is called before each page a subscription reads again
	// (tests).
	replaying func()

	// replayPage is how many changes' events a subscription reads again
	// from the change log at once: a reader resuming from far back is
	// served page by page, never the whole log in memory.
	replayPage int
}

// replayPage is events.replayPage's default.
const replayPage = 4096

// pumpBuffer is how many engine events the pump's subscription holds
// untaken. It is made whole (some 260 bytes an event, 2 MB here), so it
// costs the same on an idle node; the pump takes up to maxTake at once,
// and what a burst past it drops is read from the change log.
const pumpBuffer = 1 << 13

func openEvents(n *Node) (*events, error) {
	e := &events{n: n, wake: make(chan struct{}), done: make(chan struct{}), replayPage: replayPage}
	var err error
	if e.journal, err = openJournal(n.o.Dir, n.o.EventJournalBytes, n.o.EventJournalAge, n.o.Now); err != nil {
		return nil, err
	}
	e.sub = n.st.Subscribe("", pumpBuffer)
	st, err := n.st.Stats(context.Background())
	if err != nil {
		return nil, err
	}
	e.at = cursor{seq: uint64(st.Changes), idx: e.journal.lastIdx(uint64(st.Changes))}
	go e.pump()
	return e, nil
}

func (e *events) close() error {
	e.sub.Close()
	<-e.done
	e.mu.Lock()
	e.closed = true
	close(e.wake)
	e.mu.Unlock()
	// Each subscription ends at once now (done and wake are closed),
	// after the page it may be reading again.
	e.serving.Wait()
	return e.journal.close()
}

// maxTake bounds the engine events the pump takes at once.
const maxTake = 4096

// readChanges makes the events of every change committed since the last.
func (e *events) readChanges() {
	ctx := context.Background()
	e.mu.Lock()
	from := e.at.seq // publish moves it, under e.mu
	e.mu.Unlock()
	// Published a run at a time: after a burst the pump missed, the
	// change log since may be every version of a sync.
	var evs []Event
	flush := func() {
		e.publish(evs)
		e.follow(ctx, evs)
		evs = evs[:0]
	}
	for c, err := range e.n.st.ChangeLog(ctx, from) {
		if err != nil {
			if !errors.Is(err, engine.ErrClosed) {
				e.n.o.Logger.Error("reading the change log", "err", err)
			}
			break
		}
		ev, err := e.changeEvent(ctx, c)
		if err != nil {
			e.n.o.Logger.Error("reading a changed version", "id", c.ID, "err", err)
			continue
		}
		if evs = append(evs, ev); len(evs) == maxTake {
			flush()
		}
	}
	flush()
}

// follow keeps the genesis of spaces another device of the account listed
// in the registry (06 §1.3) as their sys.joined records arrive.
func (e *events) follow(ctx context.Context, evs []Event) {
	reg := e.n.Registry()
	if reg == "" {
		return
	}
	for _, ev := range evs {
		if ev.Space == reg && ev.Collection == JoinedCollection && ev.Kind == EventCurrent {
			if err := e.n.followRegistry(ctx); err != nil {
				e.n.o.Logger.Error("following the account registry", "err", err)
			}
			return
		}
	}
}

// logged journals an event the change log cannot make again, then
// publishes it.
func (e *events) logged(ev Event) {
	e.mu.Lock()
	ev.seq, ev.idx = e.at.seq, e.at.idx+1
	e.mu.Unlock()
	ev.Cursor = cursor{ev.seq, ev.idx}.String()
	if err := e.journal.append(ev); err != nil {
		e.n.o.Logger.Error("writing the event journal", "err", err)
	}
	e.publish([]Event{ev})
}

// eventSize is what an event takes in memory, near enough: the struct
// and the text its fields name (Kind's is a constant's).
func eventSize(ev *Event) int64 {
	return int64(unsafe.Sizeof(*ev)) + int64(len(ev.Cursor)+len(ev.Space)+len(ev.Key)+len(ev.ID)+len(ev.Collection)+len(ev.Current)+len(ev.Other))
}

// first is the position of the oldest event the ring serves: of the last
// EventRing, and of those that take EventRingBytes at most (the newest
// always). Called with e.mu held.
func (e *events) first() uint64 {
	i := max(0, len(e.ring)-e.n.o.EventRing)
	floor := e.total - e.n.o.EventRingBytes
	j := sort.Search(len(e.starts), func(k int) bool { return e.starts[k] >= floor })
	return e.base + uint64(max(i, min(j, len(e.ring)-1)))
}

// publish adds events to the ring and wakes the subscribers.
func (e *events) publish(evs []Event) {
	if len(evs) == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range evs {
		e.at = cursor{ev.seq, ev.idx}
		e.ring = append(e.ring, ev)
		e.starts = append(e.starts, e.total)
		e.total += eventSize(&ev)
	}
	// The ring is cut back to what it serves only once it holds twice its
	// bound, in count or in bytes, in place: cutting at every publish
	// would copy the whole ring (and grow it again) at every batch. Events
	// past the bounds are not served meanwhile (first).
	if len(e.ring) >= 2*e.n.o.EventRing || e.total-e.starts[0] >= 2*e.n.o.EventRingBytes {
		over := int(e.first() - e.base)
		kept := copy(e.ring, e.ring[over:])
		copy(e.starts, e.starts[over:])
		clear(e.ring[kept:])
		e.ring, e.starts = e.ring[:kept], e.starts[:kept]
		e.base += uint64(over)
	}
	if !e.closed {
		close(e.wake)
		e.wake = make(chan struct{})
	}
}

// Subscription is a subscriber's events of one space, in commit order,
// each once. Its channel is closed when it ends: Err says why.
type Subscription struct {
	c    chan Event
	stop chan struct{}
	once sync.Once
	mu   sync.Mutex
	err  error
}

// Events is the channel events arrive on.
func (s *Subscription) Events() <-chan Event { return s.c }

// Err is why the subscription ended: nil after Close, ErrSlow, ErrClosed.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close ends the subscription.
func (s *Subscription) Close() { s.once.Do(func() { close(s.stop) }) }

// Subscribe delivers the events of a space ("" for every space) after
// cursor after: "" for those from now on, "0" for every event since the
// store began, or the cursor of the last event taken, to resume without a
// gap or a repeat across restarts. buffer bounds the events held for the
// reader (default 1024); one that lets it fill with events as they come
// is dropped with ErrSlow. Events read again from before the subscription
// wait for the reader, however many there are.
func (n *Node) Subscribe(space, after string, buffer int) (*Subscription, error) {
	if buffer <= 0 {
		buffer = 1024
	}
	if space != "" {
		// A space the node does not keep has no events to wait for.
		if err := n.keeps(n.ctx, space); err != nil {
			return nil, err
		}
	}
	e := n.ev
	var c cursor
	if after != "" {
		var err error
		if c, err = parseCursor(after); err != nil {
			return nil, err
		}
	}
	if f := e.journal.dropped(); after != "" && c.before(f) {
		return nil, &CursorGoneError{Cursor: c.String(), Dropped: f.String()}
	}
	if after != "" {
		st, err := n.st.Stats(context.Background())
		if err != nil {
			return nil, err
		}
		if c.seq > uint64(st.Changes) {
			return nil, fmt.Errorf("minca/node: cursor %s is ahead of the store's change log (%d)", after, st.Changes)
		}
	}
	// The pump may be a moment behind the store: wait for it to pass a
	// cursor it made before.
	deadline := time.Now().Add(5 * time.Second)
	var live cursor
	var pos uint64
	for {
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			return nil, ErrClosed
		}
		live, pos = e.at, e.base+uint64(len(e.ring))
		wake := e.wake
		e.mu.Unlock()
		if !live.before(c) {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("minca/node: cursor %s is ahead of the node's events (%s)", after, live)
		}
		select {
		case <-wake:
		case <-time.After(50 * time.Millisecond):
		}
	}
	from := live
	if after != "" {
		from = c
	}
	s := &Subscription{c: make(chan Event, buffer), stop: make(chan struct{})}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, ErrClosed
	}
	e.serving.Add(1) // before close can wait for the serving
	e.mu.Unlock()
	go e.serve(s, space, from, live, pos)
	return s, nil
}

// serve delivers a subscription: what happened in (from, live] read again
// from the change log and the journal, then the ring from pos on.
func (e *events) serve(s *Subscription, space string, from, live cursor, pos uint64) {
	defer e.serving.Done()
	end := func(err error) {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(s.c)
	}
	send := func(ev Event) bool {
		if space != "" && ev.Space != space && ev.Kind != EventWaiting {
			return true
		}
		select {
		case s.c <- ev:
			return true
		case <-s.stop:
			end(nil)
			return false
		default:
			end(ErrSlow)
			return false
		}
	}
	for from.before(live) {
		if e.replaying != nil {
			e.replaying()
		}
		evs, reached, err := e.replay(from, live, e.replayPage)
		if err != nil {
			e.mu.Lock()
			if e.closed {
				err = ErrClosed // the store and journal closed under the replay
			}
			e.mu.Unlock()
			end(err)
			return
		}
		// What is read again waits for its reader: it holds up no write,
		// and a reader resuming from far back would otherwise be dropped
		// as slow before it could catch up.
		for _, ev := range evs {
			if space != "" && ev.Space != space && ev.Kind != EventWaiting {
				continue
			}
			select {
			case s.c <- ev:
			case <-s.stop:
				end(nil)
				return
			case <-e.done:
				end(ErrClosed)
				return
			}
		}
		from = reached
	}
	for {
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			end(ErrClosed)
			return
		}
		if pos < e.first() {
			e.mu.Unlock()
			end(ErrSlow)
			return
		}
		evs := append([]Event(nil), e.ring[pos-e.base:]...)
		wake := e.wake
		e.mu.Unlock()
		for _, ev := range evs {
			pos++
			if !send(ev) {
				return
			}
		}
		select {
		case <-wake:
		case <-s.stop:
			end(nil)
			return
		}
	}
}

// replay makes again the events in (from, to], of limit changes at most
// (and the journal's among them): each change's own from the change log,
// the rest from the journal, merged in cursor order. It returns them and
// the cursor they reach, to when they are all.
func (e *events) replay(from, to cursor, limit int) ([]Event, cursor, error) {
	ctx := context.Background()
	limit = max(limit, 1)
	var own []Event
	reached := to
	// A change's own event is at idx 0: from has taken from.seq's.
	for c, err := range e.n.st.ChangeLog(ctx, from.seq) {
		if err != nil {
			return nil, from, err
		}
		if c.Seq > to.seq {
			break
		}
		cc := cursor{c.Seq, 0}
		if !from.before(cc) {
			continue
		}
		if len(own) == limit {
			reached = cursor{c.Seq - 1, math.MaxInt} // every event of the changes before c
			break
		}
		ev, err := e.changeEvent(ctx, c)
		if err != nil {
			return nil, from, err
		}
		own = append(own, ev)
	}
	logged, err := e.journal.read(from, reached)
	if err != nil {
		return nil, from, err
	}
	out := make([]Event, 0, len(own)+len(logged))
	for len(own) > 0 || len(logged) > 0 {
		if len(logged) == 0 || len(own) > 0 && own[0].place().before(logged[0].place()) {
			out, own = append(out, own[0]), own[1:]
		} else {
			out, logged = append(out, logged[0]), logged[1:]
		}
	}
	return out, reached, nil
}
