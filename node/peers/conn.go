package peers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/minca-go/minca/negentropy/enginestore"
	"github.com/minca-go/minca/transport"
)

// Connection limits (docs/sync.md §7.3).
const (
	// MaxSessions is how many sessions one connection carries at once.
	MaxSessions = 256
	// maxStray is how many messages for sessions that are not open a
	// connection takes before it ends.
	maxStray = 1024
	// recheckEvery is how often a session asks again whether its peer may
	// still read the space.
	recheckEvery = 5 * time.Second
)

// conn runs the sessions of one connection: the opener opens one per
// space, the responder answers (docs/sync.md §7.2).
type conn struct {
	p      *Peers
	host   Host
	c      *transport.Conn
	peer   transport.Peer
	opener bool
	live   bool
	only   []string // the spaces to sync; nil: every space held
	via    string
	url    string // the peer dialled, "" for any other connection
	addr   string // the source address a Server counted it under; "" otherwise

	files connFiles // file transfers each way (files.go)

	out *budget // bytes built and not yet written (Limits.SendQueue)
	in  *budget // bytes received and not yet handled (Limits.RecvQueue)
	// listedRoom bounds what the sessions' Listed remember of the ids
	// they listed (listedBytes).
	listedRoom *enginestore.Room

	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	sessions map[uint64]*session
	nextSID  uint64
	stray    int
	narrow   map[string][]string // space → the collections the responder said it holds
	ended    []SessionStatus     // sessions that ended, newest last, at most 64
	totals   Stats
	since    time.Time
}

func newConn(ctx context.Context, p *Peers, c *transport.Conn, opener, live bool, via string) *conn {
	cc := &conn{p: p, host: p.host, c: c, peer: c.Peer(), opener: opener, live: live, via: via, addr: c.Addr(),
		out: newBudget(p.lim.SendQueue), in: newBudget(p.lim.RecvQueue), listedRoom: enginestore.NewRoom(listedBytes),
		sessions: map[uint64]*session{}, narrow: map[string][]string{}, since: time.Now()}
	cc.ctx, cc.cancel = context.WithCancel(ctx)
	return cc
}

// send sends one message, counting its bytes to s.
func (c *conn) send(ctx context.Context, s *session, msg []byte) error {
	if c.p.trace != nil {
		// Before it goes: an answer to it may be traced as soon as it has.
		c.p.trace(true, msg)
	}
	err := c.c.Send(ctx, msg)
	if err == nil && s != nil {
		s.mu.Lock()
		s.stats.BytesSent += int64(len(msg) + 1)
		s.mu.Unlock()
	}
	return err
}

// sendFrame is send for a message built one byte in (transport's
// SendFrame): f[1:] is the message, and f is the caller's again after.
func (c *conn) sendFrame(ctx context.Context, s *session, f []byte) error {
	if c.p.trace != nil {
		c.p.trace(true, f[1:])
	}
	err := c.c.SendFrame(ctx, f)
	if err == nil && s != nil {
		s.mu.Lock()
		s.stats.BytesSent += int64(len(f))
		s.mu.Unlock()
	}
	return err
}

// collections is the scope this end syncs of a space with this peer: what
// it holds (nil: all of it), narrowed to what the responder holds when it
// said so (sync/scope).
func (c *conn) collections(spaceID string) []string {
	own := c.p.o.Collections[spaceID]
	c.mu.Lock()
	theirs, ok := c.narrow[spaceID]
	c.mu.Unlock()
	if !ok {
		return own
	}
	if own == nil {
		return theirs
	}
	var both []string
	for _, x := range own {
		if slices.Contains(theirs, x) {
			both = append(both, x)
		}
	}
	if len(both) == 0 {
		// Nothing in common but the access history, which every scope
		// holds.
		both = []string{"sys.role"}
	}
	return both
}

// scoped reads a responder's sync/scope answer: the collections it holds.
func (c *conn) scoped(spaceID, msg string) {
	cs := strings.Fields(msg)
	if len(cs) == 0 || len(cs) > MaxCollections {
		return
	}
	for _, x := range cs {
		if !collName.MatchString(x) {
			return
		}
	}
	c.mu.Lock()
	c.narrow[spaceID] = cs
	c.mu.Unlock()
}

// covers reports whether a scope asked for is within the collections
// held (nil: everything).
func covers(held, asked []string) bool {
	if held == nil {
		return true
	}
	if asked == nil {
		return false
	}
	sc := scopeOf("", held)
	for _, a := range asked {
		if !slices.Contains(sc.Collections, a) {
			return false
		}
	}
	return true
}

// run reads the connection until it ends, then ends its sessions.
func (c *conn) run() {
	opening := make(chan struct{})
	defer func() {
		c.cancel()
		<-opening // no session is opened past here
		for _, s := range c.list() {
			<-s.done
		}
	}()
	if c.opener && c.live {
		go func() {
			defer close(opening)
			c.openLoop()
		}()
	} else {
		close(opening)
	}
	for {
		fr, err := c.c.RecvFrame(c.ctx)
		if err != nil {
			return
		}
		b := fr.Msg()
		if c.p.trace != nil {
			c.p.trace(false, b)
		}
		m, err := decode(b)
		if err != nil {
			c.c.CloseWith(CodeMalformed, err.Error())
			return
		}
		// What waits to be handled is bounded in bytes, counting the
		// memory each message holds (a large one, its whole read
		// buffer): past the bound nothing more is read, and the peer's
		// sends wait on the link.
		m.size, m.frame = fr.Held(), fr
		if c.in.take(c.ctx, m.size, 0) != nil {
			return
		}
		c.mu.Lock()
		s := c.sessions[m.sid]
		c.mu.Unlock()
		if s == nil {
			if m.typ == msgNegOpen && !c.opener {
				c.accept(m, len(b)+1)
				continue
			}
			c.in.give(m.size)
			c.mu.Lock()
			c.stray++
			stray := c.stray
			c.mu.Unlock()
			if stray > maxStray {
				c.c.CloseWith(CodeUnexpected, "too many messages for sessions that are not open")
				return
			}
			continue
		}
		if m.typ == msgNegOpen {
			c.c.CloseWith(CodeMalformed, fmt.Sprintf("NEG-OPEN for session %d, which is open", m.sid))
			return
		}
		s.mu.Lock()
		s.stats.BytesReceived += int64(len(b) + 1)
		s.mu.Unlock()
		if m.typ == msgFileData && s.takeFileData(m) {
			continue
		}
		select {
		case s.inbox <- m:
			if s.ctx.Err() != nil {
				// Ended meanwhile: nobody else may take what is left, and
				// its bytes go back to the connection.
				s.dropInbox()
			}
		case <-s.ctx.Done(): // ended: what was in flight is dropped
			c.in.give(m.size)
		case <-c.ctx.Done():
			return
		}
	}
}

func (c *conn) list() []*session {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*session, 0, len(c.sessions))
	for _, s := range c.sessions {
		out = append(out, s)
	}
	return out
}

// accept answers a NEG-OPEN: a session when the peer may read the space,
// else NEG-ERR sync/not-held, the same whether the space is not held or
// not the peer's to read. Opens past the peer's rate, and live sessions
// past its share, are refused first.
func (c *conn) accept(m *message, size int) {
	// Answered here, or handed whole to the session: not waiting.
	c.in.give(m.size)
	m.size = 0
	refuse := func(code, msg string) { c.send(c.ctx, nil, encodeNegErr(m.sid, code, msg)) }
	c.mu.Lock()
	full := len(c.sessions) >= MaxSessions
	c.mu.Unlock()
	if full {
		refuse(CodeTooMany, "too many sessions on this connection")
		return
	}
	if !c.p.guard.open(c.peer.DID, c.addr, time.Now()) {
		refuse(CodeRate, fmt.Sprintf("more than %g NEG-OPENs a second from this peer, beyond a burst of %d", c.p.lim.OpenRate, c.p.lim.OpenBurst))
		return
	}
	ok, err := c.host.MayRead(c.ctx, m.open.Space, c.peer)
	if err != nil {
		refuse(CodeInternal, "this node could not read its store")
		return
	}
	if !ok {
		refuse(CodeNotHeld, notHeld)
		return
	}
	if own := c.p.o.Collections[m.open.Space]; !covers(own, m.open.Collections) {
		refuse(CodeScope, strings.Join(own, " "))
		return
	}
	if m.open.Live {
		if why := c.p.guard.takeLive(c.peer.DID, c.addr); why != "" {
			refuse(CodeTooMany, why)
			return
		}
	}
	s := newSession(c, m.sid, false, m.open)
	s.counted = m.open.Live
	s.stats.BytesReceived = int64(size)
	c.add(s)
	s.start(m)
}

const notHeld = "the space is not held here"

func (c *conn) add(s *session) {
	c.mu.Lock()
	c.sessions[s.sid] = s
	c.mu.Unlock()
	s.onEnd = func() {
		c.mu.Lock()
		delete(c.sessions, s.sid)
		st := s.status()
		c.totals.add(st.Stats)
		c.ended = append(c.ended, st)
		if len(c.ended) > 64 {
			c.ended = c.ended[1:]
		}
		c.mu.Unlock()
		c.p.mu.Lock()
		c.p.totals.add(st.Stats)
		c.p.mu.Unlock()
	}
}

// open starts a session for a space as the opener.
func (c *conn) open(spaceID string) *session {
	c.mu.Lock()
	c.nextSID++
	sid := c.nextSID
	c.mu.Unlock()
	s := newSession(c, sid, true, &openParams{Space: spaceID, Collections: c.collections(spaceID), Live: c.live})
	c.add(s)
	s.start(nil)
	return s
}

// openLoop keeps a session open for every space the peer may read, as
// the opener: opening again a session that ended for a moment's reason
// (changed, behind) after Reopen, and looking for spaces newly held, or
// newly held by the peer, every Rescan.
func (c *conn) openLoop() {
	open := map[string]*session{}
	retryAt := map[string]time.Time{}
	t := time.NewTicker(min(c.p.o.Reopen, c.p.o.Rescan))
	defer t.Stop()
	lastScan := time.Time{}
	var spaces []string
	for {
		if time.Since(lastScan) >= c.p.o.Rescan || lastScan.IsZero() {
			lastScan = time.Now()
			ids, err := c.host.Spaces(c.ctx)
			if err == nil {
				spaces = ids
			}
		}
		for _, id := range spaces {
			if c.only != nil && !slices.Contains(c.only, id) {
				continue
			}
			if s := open[id]; s != nil {
				e := s.Err()
				if e == nil {
					continue
				}
				delete(open, id)
				if e.code == CodeScope && e.remote {
					c.scoped(id, e.msg)
				}
				wait := c.p.o.Reopen
				if !retryable(e.code) {
					wait = c.p.o.Rescan
				}
				retryAt[id] = time.Now().Add(wait)
			}
			if time.Now().Before(retryAt[id]) {
				continue
			}
			ok, err := c.host.MayRead(c.ctx, id, c.peer)
			if err != nil || !ok {
				retryAt[id] = time.Now().Add(c.p.o.Rescan)
				continue
			}
			open[id] = c.open(id)
		}
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (c *conn) narrowed(spaceID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.narrow[spaceID]
	return ok
}
