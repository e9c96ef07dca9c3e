package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
)

// Forward is a payload another member of a room sent through the relay.
type Forward struct {
	Room    string
	From    string // the sender's key, as it proved it to the relay
	Payload json.RawMessage
}

// RelayClientOptions shape a [RelayClient]. nil means defaults.
type RelayClientOptions struct {
	// OnConn receives each direct connection opened with a peer introduced
	// in a room, on its own goroutine; the connection is closed when it
	// returns, and ctx is done when Run returns. nil: no direct
	// connections are opened.
	OnConn func(ctx context.Context, room string, c *Conn)
	// WebRTC shapes the direct connections.
	WebRTC *WebRTCOptions
	// Redial shapes reconnecting to the relay.
	Redial *RedialOptions
	// ForwardQueue is how many received forwards wait for Forwards' reader;
	// past it a forward is dropped (and counted), never waited for, so a
	// member that floods cannot stop the client reading the relay.
	// Default 64; -1 takes none: every forward is dropped, for a client
	// that never reads them.
	ForwardQueue int
	// Logger hears the relay's refusals and failed direct connections, at
	// debug level. nil: none.
	Logger *slog.Logger
}

// RelayClient is a member of a relay: it keeps a connection to it
// (reconnecting and joining its rooms again), opens a direct WebRTC
// connection to each peer the relay introduces, signalled through the
// relay, and passes forwards both ways. `minca serve --relay URL` runs one
// per relay. Its methods are safe for concurrent use.
type RelayClient struct {
	url  string
	o    *resolved
	opts RelayClientOptions
	rtc  *rtc
	log  *slog.Logger

	forwards chan Forward
	dropped  atomic.Int64 // forwards nobody took

	mu       sync.Mutex
	conn     *Conn
	rooms    map[string]bool            // room → intro, as asked
	present  map[sessionKey]bool        // peers introduced and not gone
	sessions map[sessionKey]*rtcSession // direct connections, open or opening
	wg       sync.WaitGroup
}

type sessionKey struct{ room, peer string }

type rtcSession struct {
	cancel  context.CancelFunc
	answers chan *signalPayload // offerer side: answers for this session
}

// NewRelayClient makes a client of the relay at url (ws:// or wss://,
// path included). Nothing happens until Run.
func NewRelayClient(url string, opts *Options, copts *RelayClientOptions) (*RelayClient, error) {
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	co := RelayClientOptions{}
	if copts != nil {
		co = *copts
	}
	if co.ForwardQueue == 0 {
		co.ForwardQueue = 64
	}
	if co.ForwardQueue < -1 {
		return nil, fmt.Errorf("minca/transport: relay client options: ForwardQueue %d is below -1", co.ForwardQueue)
	}
	if co.Logger == nil {
		co.Logger = slog.New(slog.DiscardHandler)
	}
	r, err := newRTC(co.WebRTC)
	if err != nil {
		return nil, err
	}
	return &RelayClient{
		url: url, o: o, opts: co, rtc: r, log: co.Logger,
		forwards: make(chan Forward, max(co.ForwardQueue, 0)),
		rooms:    map[string]bool{},
		present:  map[sessionKey]bool{},
		sessions: map[sessionKey]*rtcSession{},
	}, nil
}

// Forwards delivers what other members forward to this one. What arrives
// while ForwardQueue forwards wait for the reader is dropped
// ([RelayClient.DroppedForwards]): the client never stops reading the
// relay for them.
func (rc *RelayClient) Forwards() <-chan Forward { return rc.forwards }

// DroppedForwards is how many forwards arrived with nobody to take them.
func (rc *RelayClient) DroppedForwards() int64 { return rc.dropped.Load() }

// Join asks to be in room, introduced to its other members (intro) or not
// (06 §3: code rooms are joined with introductions off). It is remembered
// and asked again after every reconnection.
func (rc *RelayClient) Join(ctx context.Context, room string, intro bool) error {
	if !ValidRoom(room) {
		return fmt.Errorf("minca/transport: %q is not a room id", room)
	}
	rc.mu.Lock()
	rc.rooms[room] = intro
	c := rc.conn
	rc.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.Send(ctx, (&relayMsg{Type: relayJoin, Room: room, Intro: &intro}).encode())
}

// Leave leaves room; direct connections already open stay open.
func (rc *RelayClient) Leave(ctx context.Context, room string) error {
	rc.mu.Lock()
	delete(rc.rooms, room)
	for k := range rc.present {
		if k.room == room {
			delete(rc.present, k)
		}
	}
	c := rc.conn
	rc.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.Send(ctx, (&relayMsg{Type: relayLeave, Room: room}).encode())
}

// ErrNoRelay is returned by Forward while the client has no relay
// connection.
var ErrNoRelay = errors.New("minca/transport: not connected to the relay")

// Forward sends payload (a JSON object or string) to member to of room, or
// to every other member when to is "".
func (rc *RelayClient) Forward(ctx context.Context, room, to string, payload json.RawMessage) error {
	return rc.send(ctx, &relayMsg{Type: relayForward, Room: room, To: to, Payload: payload})
}

func (rc *RelayClient) send(ctx context.Context, m *relayMsg) error {
	rc.mu.Lock()
	c := rc.conn
	rc.mu.Unlock()
	if c == nil {
		return ErrNoRelay
	}
	return c.Send(ctx, m.encode())
}

// Run keeps the relay connection until ctx is done, and returns ctx's
// error after closing every direct connection.
func (rc *RelayClient) Run(ctx context.Context) error {
	err := Redial(ctx, func(ctx context.Context) (*Conn, error) { return Dial(ctx, rc.url, &rc.o.Options) }, rc.serve, rc.opts.Redial)
	rc.mu.Lock()
	for _, s := range rc.sessions {
		s.cancel()
	}
	rc.mu.Unlock()
	rc.wg.Wait()
	return err
}

// serve runs one relay connection: joins the rooms, then acts on what the
// relay sends.
func (rc *RelayClient) serve(ctx context.Context, c *Conn) {
	rc.mu.Lock()
	rc.conn = c
	rooms := make(map[string]bool, len(rc.rooms))
	for r, i := range rc.rooms {
		rooms[r] = i
	}
	rc.mu.Unlock()
	defer func() {
		rc.mu.Lock()
		if rc.conn == c {
			rc.conn = nil
		}
		// Introductions are the relay's; a new connection brings new ones.
		rc.present = map[sessionKey]bool{}
		rc.mu.Unlock()
	}()
	for room, intro := range rooms {
		if c.Send(ctx, (&relayMsg{Type: relayJoin, Room: room, Intro: &intro}).encode()) != nil {
			return
		}
	}
	for {
		b, err := c.Recv(ctx)
		if err != nil {
			return
		}
		m, err := decodeRelay(b)
		if err != nil {
			c.CloseWith(CodeRelayShape, err.(*Error).Message)
			return
		}
		switch m.Type {
		case relayIntro:
			rc.introduced(ctx, m.Room, m.Peer)
		case relayLeft:
			rc.mu.Lock()
			delete(rc.present, sessionKey{m.Room, m.Peer})
			rc.mu.Unlock()
		case relaySignal:
			rc.signalled(ctx, m)
		case relayForward:
			select {
			case rc.forwards <- Forward{Room: m.Room, From: m.From, Payload: m.Payload}:
			default:
				rc.dropped.Add(1)
			}
		case relayError:
			rc.log.Debug("the relay refused", "url", rc.url, "room", m.Room, "reason", m.Code, "message", m.Message)
		}
	}
}

// introduced starts a direct connection to peer when this end offers:
// the one whose key sorts first, so two peers never offer at once.
func (rc *RelayClient) introduced(ctx context.Context, room, peer string) {
	self := rc.o.Self.DID()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.opts.OnConn == nil || peer == self || !rc.rooms[room] {
		return
	}
	k := sessionKey{room, peer}
	rc.present[k] = true
	if self > peer || rc.sessions[k] != nil || len(rc.sessions) >= rc.rtc.o.MaxSessions {
		return
	}
	sctx, cancel := context.WithCancel(ctx)
	s := &rtcSession{cancel: cancel, answers: make(chan *signalPayload, 1)}
	rc.sessions[k] = s
	rc.wg.Add(1)
	go rc.offerLoop(sctx, k, s)
}

// offerLoop keeps a direct connection to an introduced peer while it is
// in the room, offering again with backoff when one fails or ends.
func (rc *RelayClient) offerLoop(ctx context.Context, k sessionKey, s *rtcSession) {
	defer rc.wg.Done()
	defer func() {
		rc.mu.Lock()
		if rc.sessions[k] == s {
			delete(rc.sessions, k)
		}
		rc.mu.Unlock()
		s.cancel()
	}()
	send := func(ctx context.Context, p *signalPayload) error {
		return rc.send(ctx, &relayMsg{Type: relaySignal, Room: k.room, To: k.peer, Payload: encodeSignal(p)})
	}
	Redial(ctx, func(ctx context.Context) (*Conn, error) {
		rc.mu.Lock()
		here := rc.present[k]
		rc.mu.Unlock()
		if !here {
			s.cancel()
			return nil, ctx.Err()
		}
		c, err := rc.rtc.offer(ctx, rc.o, k.peer, send, s.answers)
		if err != nil {
			rc.log.Debug("no direct connection", "room", k.room, "peer", k.peer, "err", err)
		}
		return c, err
	}, func(ctx context.Context, c *Conn) {
		rc.opts.OnConn(ctx, k.room, c)
	}, rc.opts.Redial)
}

// signalled acts on a signal: an answer goes to the offer waiting for it;
// an offer replaces any direct connection with that peer in that room.
func (rc *RelayClient) signalled(ctx context.Context, m *relayMsg) {
	p, err := decodeSignal(m.Payload)
	if err != nil || rc.opts.OnConn == nil {
		rc.log.Debug("a signal ignored", "room", m.Room, "from", m.From, "err", err)
		return
	}
	k := sessionKey{m.Room, m.From}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if p.Kind == "answer" {
		if s := rc.sessions[k]; s != nil {
			select {
			case s.answers <- p:
			default:
			}
		}
		return
	}
	if _, in := rc.rooms[m.Room]; !in || rc.o.Self.DID() < m.From {
		return // not our room, or we are the one who offers
	}
	if old := rc.sessions[k]; old != nil {
		old.cancel()
	} else if len(rc.sessions) >= rc.rtc.o.MaxSessions {
		return
	}
	sctx, cancel := context.WithCancel(ctx)
	s := &rtcSession{cancel: cancel}
	rc.sessions[k] = s
	rc.wg.Add(1)
	go func() {
		defer rc.wg.Done()
		defer func() {
			rc.mu.Lock()
			if rc.sessions[k] == s {
				delete(rc.sessions, k)
			}
			rc.mu.Unlock()
			cancel()
		}()
		send := func(ctx context.Context, a *signalPayload) error {
			return rc.send(ctx, &relayMsg{Type: relaySignal, Room: k.room, To: k.peer, Payload: encodeSignal(a)})
		}
		c, err := rc.rtc.answer(sctx, rc.o, k.peer, p, send)
		if err != nil {
			rc.log.Debug("no direct connection", "room", k.room, "peer", k.peer, "err", err)
			return
		}
		stop := context.AfterFunc(sctx, func() { c.Close() })
		defer stop()
		rc.opts.OnConn(sctx, k.room, c)
		c.Close()
	}()
}

// Connected reports whether the client holds a relay connection now.
func (rc *RelayClient) Connected() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.conn != nil
}
