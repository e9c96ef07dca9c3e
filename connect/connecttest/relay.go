// Package connecttest is a relay for testing connecting by code (06 §3):
// rooms in memory whose members are connected to each other, or a tap on
// rooms of a real relay (Relay.Over), with hooks to record, relabel, repeat
// and drop messages, as a relay sitting between the two sides could. It is
// for tests only; the minca binary never links it.
package connecttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/minca-go/minca/connect"
)

// QueueLen bounds each member's queue of undelivered events; a send to a
// member whose queue is full fails, as a slow peer's would.
const QueueLen = 1024

// ErrGone is returned for a send to a peer not in the room, and by Next
// once the member has left.
var ErrGone = errors.New("connecttest: no such peer in the room")

// Recorded is one message as the relay saw it.
type Recorded struct {
	Room, From, To string
	Message        []byte
}

// Relay is a relay in memory. The zero value is ready. Safe for
// concurrent use.
type Relay struct {
	// Over, when set, makes the Relay a tap on real rooms: each member
	// joins the room Over returns (on a transport relay, say) and the
	// Relay records, and passes through Tamper, what members send before
	// it goes there. nil: rooms in memory.
	Over func(ctx context.Context, room string) (Underlying, error)
	// Tamper, when set, decides what reaches to of each message from
	// sends: nothing (a drop), the message, changed copies, or several
	// (repeats). It is called under the relay's lock, in send order.
	Tamper func(room, from, to string, message []byte) [][]byte

	mu     sync.Mutex
	rooms  map[string]map[string]*Member
	next   int
	record []Recorded
}

// Peer is one side's place in a room of the Relay: a *Member in memory,
// or a *Tapped over a real room.
type Peer interface {
	connect.Room
	// ID is the peer's id in its room, as the other members see it.
	ID() string
	// Leave takes the peer out of its room.
	Leave()
}

// Underlying is a real room a Tapped member sends through.
type Underlying interface {
	connect.Hailer
	ID() string
	Close() error
}

// Tapped is one peer's place in a real room, its sends recorded and
// tampered with by the Relay: a connect.Hailer, as rooms whose peers do
// not see each other join are.
type Tapped struct {
	relay *Relay
	room  string
	u     Underlying
}

var _ connect.Hailer = (*Tapped)(nil)

// ID is the peer's id in the real room.
func (m *Tapped) ID() string { return m.u.ID() }

// Next returns the peer's next event in the real room.
func (m *Tapped) Next(ctx context.Context) (connect.RoomEvent, error) { return m.u.Next(ctx) }

// Send records message, and sends to peer what Tamper makes of it.
func (m *Tapped) Send(ctx context.Context, peer string, message []byte) error {
	for _, b := range m.relay.tap(m.room, m.u.ID(), peer, message) {
		if err := m.u.Send(ctx, peer, b); err != nil {
			return err
		}
	}
	return nil
}

// Hail records message (To ""), and sends the whole room what Tamper
// makes of it.
func (m *Tapped) Hail(ctx context.Context, message []byte) error {
	for _, b := range m.relay.tap(m.room, m.u.ID(), "", message) {
		if err := m.u.Hail(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// Leave leaves the real room.
func (m *Tapped) Leave() { m.u.Close() }

func (r *Relay) tap(room, from, to string, message []byte) [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	msg := slices.Clone(message)
	r.record = append(r.record, Recorded{Room: room, From: from, To: to, Message: msg})
	if r.Tamper != nil {
		return r.Tamper(room, from, to, slices.Clone(msg))
	}
	return [][]byte{msg}
}

// Member is one peer's place in a room in memory: a connect.Room.
type Member struct {
	relay *Relay
	room  string
	id    string
	seq   int
	queue chan connect.RoomEvent
	gone  chan struct{}
	once  sync.Once
}

var _ connect.Room = (*Member)(nil)

// Join puts a new peer in room. In memory, it and every member there are
// told the other connected; over real rooms, nobody is told.
func (r *Relay) Join(ctx context.Context, room string) (Peer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.Over != nil {
		u, err := r.Over(ctx, room)
		if err != nil {
			return nil, err
		}
		return &Tapped{relay: r, room: room, u: u}, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rooms == nil {
		r.rooms = map[string]map[string]*Member{}
	}
	if r.rooms[room] == nil {
		r.rooms[room] = map[string]*Member{}
	}
	r.next++
	m := &Member{relay: r, room: room, id: fmt.Sprintf("peer%d", r.next), seq: r.next, queue: make(chan connect.RoomEvent, QueueLen), gone: make(chan struct{})}
	for _, other := range r.sorted(room) {
		other.deliver(connect.RoomEvent{Peer: m.id})
		m.deliver(connect.RoomEvent{Peer: other.id})
	}
	r.rooms[room][m.id] = m
	return m, nil
}

// sorted is the room's members in the order they joined.
func (r *Relay) sorted(room string) []*Member {
	var out []*Member
	for _, m := range r.rooms[room] {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *Member) int { return a.seq - b.seq })
	return out
}

// Recording returns every message sent through the relay, in order.
func (r *Relay) Recording() []Recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.record)
}

// ID is the member's peer id in its room.
func (m *Member) ID() string { return m.id }

func (m *Member) deliver(ev connect.RoomEvent) bool {
	select {
	case m.queue <- ev:
		return true
	default:
		return false
	}
}

// Next returns the member's next event.
func (m *Member) Next(ctx context.Context) (connect.RoomEvent, error) {
	select {
	case ev := <-m.queue:
		return ev, nil
	case <-m.gone:
		return connect.RoomEvent{}, ErrGone
	case <-ctx.Done():
		return connect.RoomEvent{}, ctx.Err()
	}
}

// Send sends message to peer through the relay (and its Tamper).
func (m *Member) Send(ctx context.Context, peer string, message []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := m.relay
	r.mu.Lock()
	defer r.mu.Unlock()
	to, ok := r.rooms[m.room][peer]
	if !ok {
		return ErrGone
	}
	msg := slices.Clone(message)
	r.record = append(r.record, Recorded{Room: m.room, From: m.id, To: peer, Message: msg})
	out := [][]byte{msg}
	if r.Tamper != nil {
		out = r.Tamper(m.room, m.id, peer, slices.Clone(msg))
	}
	for _, b := range out {
		if !to.deliver(connect.RoomEvent{Peer: m.id, Message: b}) {
			return fmt.Errorf("connecttest: %s's queue is full", peer)
		}
	}
	return nil
}

// Leave takes the member out of its room; its Next returns ErrGone.
func (m *Member) Leave() {
	m.once.Do(func() {
		r := m.relay
		r.mu.Lock()
		delete(r.rooms[m.room], m.id)
		r.mu.Unlock()
		close(m.gone)
	})
}
