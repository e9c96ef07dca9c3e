package transport

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// RelayOptions bound what a relay takes on (docs/sync.md, "Relay limits").
// nil means defaults.
type RelayOptions struct {
	// MaxRooms is how many rooms one connection may be in. Default 64.
	MaxRooms int
	// MaxMembers is how many members a room holds. Default 64.
	MaxMembers int
	// Rate is how many bytes a second a connection may send, counting
	// each message as at least 256 bytes; Burst is how far ahead of the
	// rate it may run. A connection that outruns both is a flood, and is
	// ended with relay/rate. Defaults 256 KiB/s and 1 MiB.
	Rate, Burst int
	// QueueBytes is how much may wait to be sent to one member. Past it,
	// a message for the member is refused to its sender (relay/busy) while
	// the member still takes messages; a member that has taken none for
	// SlowAfter does not read, and is ended with relay/slow. Default 1 MiB.
	QueueBytes int
	// SlowAfter: see QueueBytes. Default 10 s.
	SlowAfter time.Duration
	// MaxRoomQueue is how many messages may wait across a room's members;
	// past it the room refuses more (relay/busy) until they drain.
	// Default 1024.
	MaxRoomQueue int
	// Server bounds connections and handshakes as for any [Server]; its
	// Origins default to any, since pages in browsers meet at relays.
	Server *ServerOptions
}

// messageFloor is the least a message costs against Rate, so a flood of
// tiny messages is a flood too.
const messageFloor = 256

// Relay lets members that each reach it meet in rooms (06 §3; docs/sync.md,
// "Relay"). It forwards signals and payloads between members of a room and
// introduces those that asked for introductions to each other; it never
// reads what it forwards. It is an http.Handler (mounted at [PathRelay] by
// `minca serve`); each member connection opens with who, in which the
// relay shows from: null.
type Relay struct {
	o      RelayOptions
	server *Server
	clock  clock // judges rates and slowness

	mu    sync.Mutex
	rooms map[string]*room

	stats struct{ flooded, slow atomic.Int64 }
}

type room struct {
	id      string
	members map[string]*member // by DID
	queued  atomic.Int64       // messages waiting across members
}

type member struct {
	c      *Conn
	did    string
	rooms  map[string]bool // room → intro; guarded by Relay.mu
	tokens float64
	last   time.Time

	mu       sync.Mutex
	queue    []queued
	qbytes   int
	progress time.Time // when the queue was last empty or a message last sent
	dropped  bool
	wake     chan struct{}
}

type queued struct {
	msg  []byte
	room *room
}

// NewRelay makes a relay. opts.Self is the relay's own key, shown as
// from: null; opts.MaxFrame defaults to 64 KiB here, the most one relay
// message may be.
func NewRelay(opts *Options, ropts *RelayOptions) (*Relay, error) {
	if opts == nil {
		return nil, fmt.Errorf("minca/transport: a relay needs Options with its Self")
	}
	o := *opts
	if o.MaxFrame == 0 {
		o.MaxFrame = MinFrame
	}
	ro := RelayOptions{}
	if ropts != nil {
		ro = *ropts
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"MaxRooms", &ro.MaxRooms, 64}, {"MaxMembers", &ro.MaxMembers, 64},
		{"Rate", &ro.Rate, 256 << 10}, {"Burst", &ro.Burst, 1 << 20},
		{"QueueBytes", &ro.QueueBytes, 1 << 20}, {"MaxRoomQueue", &ro.MaxRoomQueue, 1024},
	} {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < 0 {
			return nil, fmt.Errorf("minca/transport: relay options: %s %d is negative", f.name, *f.v)
		}
	}
	if ro.SlowAfter == 0 {
		ro.SlowAfter = 10 * time.Second
	}
	if ro.SlowAfter < 0 {
		return nil, fmt.Errorf("minca/transport: relay options: SlowAfter %v is negative", ro.SlowAfter)
	}
	if ro.Burst < o.MaxFrame {
		return nil, fmt.Errorf("minca/transport: relay options: Burst %d is less than one message (%d bytes)", ro.Burst, o.MaxFrame)
	}
	r := &Relay{o: ro, rooms: map[string]*room{}}
	so := ServerOptions{}
	if ro.Server != nil {
		so = *ro.Server
	}
	if so.Origins == nil {
		// Pages meet at relays (06 §3: the account home, carriers in a
		// browser); a relay forwards, and reads nothing of a node's.
		so.Origins = []string{"*"}
	}
	s, err := NewServer(&o, &so, r.serve)
	if err != nil {
		return nil, err
	}
	r.server, r.clock = s, s.o.clock
	return r, nil
}

// ServeHTTP accepts a member's connection.
func (r *Relay) ServeHTTP(w http.ResponseWriter, req *http.Request) { r.server.ServeHTTP(w, req) }

// Close ends every member's connection.
func (r *Relay) Close() error { return r.server.Close() }

// RelayStats is what a relay holds now, and how many members it ended.
type RelayStats struct {
	Rooms, Members int
	QueuedBytes    int
	Flooded, Slow  int64
}

// Stats returns the relay's counts.
func (r *Relay) Stats() RelayStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := RelayStats{Rooms: len(r.rooms), Flooded: r.stats.flooded.Load(), Slow: r.stats.slow.Load()}
	seen := map[*member]bool{}
	for _, rm := range r.rooms {
		for _, m := range rm.members {
			if !seen[m] {
				seen[m] = true
				s.Members++
				m.mu.Lock()
				s.QueuedBytes += m.qbytes
				m.mu.Unlock()
			}
		}
	}
	return s
}

func (r *Relay) serve(ctx context.Context, c *Conn) {
	m := &member{c: c, did: c.Peer().DID, rooms: map[string]bool{}, tokens: float64(r.o.Burst), last: r.clock.Now(), wake: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() { defer close(done); m.writeLoop(ctx, r.clock) }()
	defer func() {
		r.leaveAll(m)
		c.Close()
		<-done
	}()
	for {
		b, err := c.Recv(ctx)
		if err != nil {
			return
		}
		if !m.spend(len(b), r.o, r.clock.Now()) {
			r.stats.flooded.Add(1)
			c.CloseWith(CodeRelayRate, fmt.Sprintf("more than %d bytes a second, beyond a burst of %d", r.o.Rate, r.o.Burst))
			return
		}
		msg, err := decodeRelay(b)
		if err != nil {
			c.CloseWith(CodeRelayShape, err.(*Error).Message)
			return
		}
		if e := r.handle(m, msg); e != nil {
			if e.Code == CodeRelayShape {
				c.CloseWith(e.Code, e.Message)
				return
			}
			m.push(nil, (&relayMsg{Type: relayError, Room: msg.Room, Code: e.Code, Message: e.Message}).encode(), r)
		}
	}
}

// spend takes a message's cost from the member's token bucket.
func (m *member) spend(n int, o RelayOptions, now time.Time) bool {
	m.tokens += now.Sub(m.last).Seconds() * float64(o.Rate)
	if m.tokens > float64(o.Burst) {
		m.tokens = float64(o.Burst)
	}
	m.last = now
	cost := float64(max(n, messageFloor))
	if m.tokens < cost {
		return false
	}
	m.tokens -= cost
	return true
}

// handle acts on one message from m. A refusal is returned: relay/shape
// ends the connection, any other is sent back as an error message.
func (r *Relay) handle(m *member, msg *relayMsg) *Error {
	switch msg.Type {
	case relayJoin:
		return r.join(m, msg.Room, *msg.Intro)
	case relayLeave:
		r.mu.Lock()
		r.leaveLocked(m, msg.Room)
		r.mu.Unlock()
		return nil
	case relaySignal, relayForward:
		return r.pass(m, msg)
	}
	return errorf(CodeRelayShape, "a member does not send %s", msg.Type)
}

func (r *Relay) join(m *member, id string, intro bool) *Error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, in := m.rooms[id]; in {
		m.push(nil, (&relayMsg{Type: relayJoined, Room: id}).encode(), r)
		return nil
	}
	if len(m.rooms) >= r.o.MaxRooms {
		return errorf(CodeRelayRooms, "already in %d rooms, the most one connection may be in", r.o.MaxRooms)
	}
	rm := r.rooms[id]
	if rm == nil {
		rm = &room{id: id, members: map[string]*member{}}
		r.rooms[id] = rm
	}
	if old := rm.members[m.did]; old != nil {
		// The same key again, on a new connection: the newer wins, so a
		// node that reconnects before the relay noticed is not locked out.
		r.leaveLocked(old, id)
		old.push(nil, (&relayMsg{Type: relayError, Room: id, Code: CodeRelayReplace, Message: "the same key joined this room on another connection"}).encode(), r)
		if rm = r.rooms[id]; rm == nil {
			rm = &room{id: id, members: map[string]*member{}}
			r.rooms[id] = rm
		}
	}
	if len(rm.members) >= r.o.MaxMembers {
		return errorf(CodeRelayFull, "room %s has %d members, the most it holds", id, r.o.MaxMembers)
	}
	rm.members[m.did] = m
	m.rooms[id] = intro
	m.push(nil, (&relayMsg{Type: relayJoined, Room: id}).encode(), r)
	if !intro {
		return nil
	}
	for did, other := range rm.members {
		if other == m || !other.rooms[id] {
			continue
		}
		m.push(nil, (&relayMsg{Type: relayIntro, Room: id, Peer: did}).encode(), r)
		other.push(nil, (&relayMsg{Type: relayIntro, Room: id, Peer: m.did}).encode(), r)
	}
	return nil
}

// leaveLocked takes m out of room id, telling the members it was
// introduced to.
func (r *Relay) leaveLocked(m *member, id string) {
	rm := r.rooms[id]
	intro, in := m.rooms[id]
	if rm == nil || !in || rm.members[m.did] != m {
		delete(m.rooms, id)
		return
	}
	delete(m.rooms, id)
	delete(rm.members, m.did)
	if intro {
		for _, other := range rm.members {
			if other.rooms[id] {
				other.push(nil, (&relayMsg{Type: relayLeft, Room: id, Peer: m.did}).encode(), r)
			}
		}
	}
	if len(rm.members) == 0 {
		delete(r.rooms, id)
	}
}

func (r *Relay) leaveAll(m *member) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id := range m.rooms {
		r.leaveLocked(m, id)
	}
}

// pass forwards a signal or a payload to one member of the room, or a
// payload to all the others.
func (r *Relay) pass(m *member, msg *relayMsg) *Error {
	r.mu.Lock()
	defer r.mu.Unlock()
	rm := r.rooms[msg.Room]
	if _, in := m.rooms[msg.Room]; !in || rm == nil {
		return errorf(CodeRelayNoRoom, "not in room %s", msg.Room)
	}
	out := (&relayMsg{Type: msg.Type, Room: msg.Room, From: m.did, Payload: msg.Payload}).encode()
	if msg.To == "" {
		if msg.Type == relaySignal {
			return errorf(CodeRelayShape, "a signal names its recipient in to")
		}
		missed := 0
		for _, other := range rm.members {
			if other != m && !other.push(rm, out, r) {
				missed++
			}
		}
		if missed > 0 {
			return errorf(CodeRelayBusy, "in room %s too much waits to be sent: %d of %d members did not get this; try again later", msg.Room, missed, len(rm.members)-1)
		}
		return nil
	}
	to := rm.members[msg.To]
	if to == nil {
		return errorf(CodeRelayNoPeer, "%s is not in room %s", truncate(msg.To, 80), msg.Room)
	}
	if !to.push(rm, out, r) {
		return errorf(CodeRelayBusy, "in room %s too much waits to be sent; try again later", msg.Room)
	}
	return nil
}

// push queues msg for m. rm is the room of a signal or forward, which
// counts against the room's MaxRoomQueue; nil for the relay's own
// messages. It returns false when the room is full of waiting messages. A member whose queue would pass QueueBytes is ended
// with relay/slow instead: it, not the sender, is the one at fault.
func (m *member) push(rm *room, msg []byte, r *Relay) bool {
	if rm != nil && rm.queued.Load() >= int64(r.o.MaxRoomQueue) {
		return false
	}
	m.mu.Lock()
	if m.dropped {
		m.mu.Unlock()
		return true
	}
	if m.qbytes+len(msg) > r.o.QueueBytes {
		if r.clock.Now().Sub(m.progress) < r.o.SlowAfter {
			m.mu.Unlock()
			return false
		}
		m.releaseLocked()
		m.mu.Unlock()
		r.stats.slow.Add(1)
		go m.c.CloseWith(CodeRelaySlow, fmt.Sprintf("more than %d bytes waited to be sent to this member", r.o.QueueBytes))
		return true
	}
	if rm != nil {
		rm.queued.Add(1)
	}
	if len(m.queue) == 0 {
		m.progress = r.clock.Now()
	}
	m.queue = append(m.queue, queued{msg: msg, room: rm})
	m.qbytes += len(msg)
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
	return true
}

func (m *member) writeLoop(ctx context.Context, clk clock) {
	defer m.drop()
	for {
		select {
		case <-m.wake:
		case <-m.c.Done():
			return
		}
		for {
			m.mu.Lock()
			if len(m.queue) == 0 || m.dropped {
				m.mu.Unlock()
				break
			}
			q := m.queue[0]
			m.queue[0] = queued{}
			m.queue = m.queue[1:]
			m.mu.Unlock()
			err := m.c.Send(ctx, q.msg)
			m.mu.Lock()
			if !m.dropped {
				m.qbytes -= len(q.msg)
				m.progress = clk.Now()
			}
			m.mu.Unlock()
			if q.room != nil {
				q.room.queued.Add(-1)
			}
			if err != nil {
				return
			}
		}
	}
}

// drop releases what m still has queued.
func (m *member) drop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.releaseLocked()
}

func (m *member) releaseLocked() {
	for _, q := range m.queue {
		if q.room != nil {
			q.room.queued.Add(-1)
		}
	}
	m.queue, m.qbytes, m.dropped = nil, 0, true
}
