package peers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minca-go/minca/transport"
)

// Options shape a node's peers. nil means defaults; Transport.Self is
// required.
type Options struct {
	// Transport is how connections are proven and kept (Self: the node's
	// session signer, or transport.Carrier for a keyless carrier). Its
	// Revoked, when nil, is answered from the host's spaces.
	Transport *transport.Options
	// Peers are ws:// or wss:// URLs (path /minca) to keep a connection
	// with, as the opener, redialled with backoff.
	Peers []string
	// Relays are relays (path /minca/relay) to join: a room per space
	// held, and a direct WebRTC connection to each peer introduced there.
	Relays []string
	// Collections are partial holds: for a space named here, only these
	// collections (and the access history) are synced (02 §4.10).
	Collections map[string][]string
	// Redial shapes redialling peers and relays.
	Redial *transport.RedialOptions
	// WebRTC shapes the direct connections opened through relays.
	WebRTC *transport.WebRTCOptions
	// Reopen is how long an opener waits before opening again a session
	// that ended for a moment's reason (the sync order changed, events
	// fell behind). Default 500 ms.
	Reopen time.Duration
	// Rescan is how often an opener looks for spaces newly held, and asks
	// again for spaces the peer did not hold. Default 10 s.
	Rescan time.Duration
	// Limits bound what one peer may cost (docs/sync.md, Limits). nil:
	// the defaults.
	Limits *Limits
	// Logger hears connections and sessions ending. nil: none.
	Logger *slog.Logger
	// Files says which files the versions held whole name are fetched
	// from peers unasked (docs/sync.md §7.7). Default: all.
	Files FilePolicy
	// DrainFor is how long a connection Serve runs waits, once its ctx
	// ends (the node is closing), for the peer to acknowledge the
	// versions pushed to it and those waiting to be pushed, before it
	// closes. Default 2 s; negative: it closes at once.
	DrainFor time.Duration
}

// Peers keeps a node's connections to its peers and the sync sessions on
// them (docs/sync.md §7–§9). Its methods are safe for concurrent use.
type Peers struct {
	host  Host
	o     Options
	lim   Limits
	topt  *transport.Options
	log   *slog.Logger
	guard *guard
	feeds feeds

	// life ends with Close (end); closed, under mu, refuses Run and
	// Serve after it, and running counts Run and the connections served,
	// for Close to wait on.
	life    context.Context
	end     context.CancelFunc
	closed  bool
	running sync.WaitGroup

	mu        sync.Mutex
	dials     map[string]*dialState
	conns     map[*conn]struct{}
	roomSpace map[string]string          // relay room → space
	totals    Stats                      // of every session that ended
	trace     func(out bool, msg []byte) // tests: every message, as it is sent (just before) or received; msg is valid during the call
	// beforeFileWrite, in tests, is called before each write of a
	// fetched file's bytes: it may wait, as a slow disk does, or fail
	// the write, as a full one does.
	beforeFileWrite func() error
	// beforeNegOpen, in tests, is called as an opener's session is about
	// to send its NEG-OPEN, its other goroutines running.
	beforeNegOpen func(space string)
	recheck       time.Duration // how often a sending session asks MayRead again
	// fileStall, fileRetry and fileStopWait are fileStallAfter,
	// fileRetryAfter and fileStopWait but in tests (nanoseconds), set
	// while sessions run.
	fileStall, fileRetry, fileStopWait atomic.Int64
	// loseFileWant, in tests, is asked at each FILE-WANT received: true
	// drops it unread, as a holder that never got it.
	loseFileWant func() bool
	// idle holds the live sessions whose file fetchers ended with
	// nothing to fetch, until something may be.
	idle fileWaker
}

// Totals counts what every session carried, those running included.
func (p *Peers) Totals() Stats {
	p.mu.Lock()
	t := p.totals
	conns := make([]*conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		for _, s := range c.list() {
			t.add(s.status().Stats)
		}
	}
	return t
}

type dialState struct {
	state   string
	lastErr string
}

// New makes the peers of host. Nothing happens until Run, Handler or
// Serve; Close ends what they started.
func New(host Host, o *Options) (*Peers, error) {
	if o == nil || o.Transport == nil || o.Transport.Self == nil {
		return nil, errors.New("minca/peers: Options.Transport.Self is required")
	}
	if host == nil {
		return nil, errors.New("minca/peers: a host is required")
	}
	oo := *o
	if oo.Reopen == 0 {
		oo.Reopen = 500 * time.Millisecond
	}
	if oo.Rescan == 0 {
		oo.Rescan = 10 * time.Second
	}
	if oo.DrainFor == 0 {
		oo.DrainFor = 2 * time.Second
	}
	if oo.Reopen < 0 || oo.Rescan < 0 {
		return nil, fmt.Errorf("minca/peers: Reopen %v and Rescan %v must not be negative", oo.Reopen, oo.Rescan)
	}
	if oo.Logger == nil {
		oo.Logger = slog.New(slog.DiscardHandler)
	}
	for sp, cs := range oo.Collections {
		if len(cs) == 0 || len(cs) > MaxCollections {
			return nil, fmt.Errorf("minca/peers: Collections[%s]: 1 to %d collections", sp, MaxCollections)
		}
		for _, c := range cs {
			if !collName.MatchString(c) {
				return nil, fmt.Errorf("minca/peers: Collections[%s]: %q is not a collection name", sp, c)
			}
		}
	}
	var lim Limits
	if oo.Limits != nil {
		lim = *oo.Limits
	}
	if err := lim.resolve(); err != nil {
		return nil, err
	}
	topt := *oo.Transport
	if topt.PlaceData == nil {
		topt.PlaceData = fileDataAt
	}
	if topt.Revoked == nil {
		if hs, ok := host.(interface{ histories() Histories }); ok {
			topt.Revoked = revocations{hs: hs.histories(), spaces: host.Spaces}
		}
	}
	p := &Peers{host: host, o: oo, lim: lim, guard: newGuard(lim), topt: &topt, log: oo.Logger, recheck: recheckEvery,
		dials: map[string]*dialState{}, conns: map[*conn]struct{}{}, roomSpace: map[string]string{}}
	p.life, p.end = context.WithCancel(context.Background())
	p.fileStall.Store(int64(fileStallAfter))
	p.fileRetry.Store(int64(fileRetryAfter))
	p.fileStopWait.Store(int64(fileStopWait))
	return p, nil
}

func (h nodeHost) histories() Histories { return h.n.Judge() }

// TransportOptions are the options connections of these peers are made
// with.
func (p *Peers) TransportOptions() *transport.Options { return p.topt }

// Handler is the WebSocket endpoint peers dial (transport.PathPeer):
// each connection it accepts runs as the responder. An address refused
// for forgeries (Limits.Forgeries) is turned away before the upgrade.
// Close the returned server when done.
func (p *Peers) Handler(ctx context.Context, so *transport.ServerOptions) (*transport.Server, error) {
	o := transport.ServerOptions{}
	if so != nil {
		o = *so
	}
	refuse := o.Refuse
	o.Refuse = func(addr string) string {
		if until := p.guard.refusedUntil("", addr, time.Now()); !until.IsZero() {
			return fmt.Sprintf("%s: this address sent forged versions; refused until %s", CodeForged, until.UTC().Format(time.RFC3339))
		}
		if refuse != nil {
			return refuse(addr)
		}
		return ""
	}
	return transport.NewServer(p.topt, &o, func(_ context.Context, c *transport.Conn) {
		p.Serve(ctx, c, false, "accept")
	})
}

// forged ends every connection of the key or the address: they sent
// versions that fail the crypto gate, and are refused until then.
func (p *Peers) forged(key, addr string, until time.Time) {
	p.log.Info("refusing a peer that sent forged versions", "peer", key, "addr", addr, "until", until)
	p.mu.Lock()
	var ends []*conn
	for c := range p.conns {
		if c.peer.DID == key || addr != "" && c.addr == addr {
			ends = append(ends, c)
		}
	}
	p.mu.Unlock()
	msg := "versions that fail the crypto gate; refused until " + until.UTC().Format(time.RFC3339)
	for _, c := range ends {
		go c.c.CloseWith(CodeForged, msg)
	}
}

// Serve runs one proven connection until it ends: as the opener it keeps
// a session for every space both may read; as the responder it answers.
// via names the connection in Status ("dial", "accept", "webrtc").
func (p *Peers) Serve(ctx context.Context, c *transport.Conn, opener bool, via string) {
	p.serve(ctx, c, opener, via, "")
}

func (p *Peers) serve(ctx context.Context, c *transport.Conn, opener bool, via, url string) {
	if until := p.guard.refusedUntil(c.Peer().DID, c.Addr(), time.Now()); !until.IsZero() {
		c.CloseWith(CodeForged, "this peer sent versions that fail the crypto gate; refused until "+until.UTC().Format(time.RFC3339))
		return
	}
	// The connection outlives ctx by the drain: what was pushed is
	// acknowledged before it closes.
	cc := newConn(context.WithoutCancel(ctx), p, c, opener, true, via)
	cc.url = url
	if !p.track(cc, c) {
		return
	}
	defer p.untrack(cc)
	closing := sync.OnceFunc(func() {
		cc.drainPushes(p.o.DrainFor)
		c.CloseWith(CodeClosed, "the node is closing")
	})
	stop := context.AfterFunc(ctx, closing)
	defer stop()
	stopLife := context.AfterFunc(p.life, closing)
	defer stopLife()
	cc.run()
	p.log.Debug("peer connection ended", "peer", cc.peer.DID, "via", via, "reason", transport.Code(c.Err()), "err", c.Err())
}

// track counts cc among the connections Close ends and waits for; false,
// with c closed, once p is closing. Each true is ended by untrack once
// cc has run.
func (p *Peers) track(cc *conn, c *transport.Conn) bool {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		cc.cancel()
		c.CloseWith(CodeClosed, "the node is closing")
		return false
	}
	p.running.Add(1)
	p.conns[cc] = struct{}{}
	p.mu.Unlock()
	return true
}

// untrack ends what track began: cc is no longer one of p's connections.
func (p *Peers) untrack(cc *conn) {
	p.mu.Lock()
	delete(p.conns, cc)
	p.mu.Unlock()
	p.running.Done()
}

// Run keeps the connections to Options.Peers and Relays until ctx is
// done or p is closed (ErrClosed).
func (p *Peers) Run(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	p.running.Add(1)
	defer p.running.Done()
	p.mu.Unlock()
	outer := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(p.life, cancel)()
	var wg sync.WaitGroup
	for _, u := range p.o.Peers {
		p.mu.Lock()
		ds := &dialState{state: "connecting"}
		p.dials[u] = ds
		p.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			ro := transport.RedialOptions{}
			if p.o.Redial != nil {
				ro = *p.o.Redial
			}
			ro.OnError = func(err error, wait time.Duration) {
				p.mu.Lock()
				ds.state = "waiting"
				if err != nil {
					ds.lastErr = err.Error()
				}
				p.mu.Unlock()
				p.log.Debug("peer unreachable or gone", "url", u, "err", err, "retry", wait)
			}
			transport.Redial(ctx, func(ctx context.Context) (*transport.Conn, error) {
				p.mu.Lock()
				ds.state = "connecting"
				p.mu.Unlock()
				return transport.Dial(ctx, u, p.topt)
			}, func(ctx context.Context, c *transport.Conn) {
				p.mu.Lock()
				ds.state = "connected"
				p.mu.Unlock()
				p.serve(ctx, c, true, "dial "+u, u)
			}, &ro)
		}()
	}
	for _, u := range p.o.Relays {
		rc, err := p.relayClient(u)
		if err != nil {
			return err
		}
		wg.Add(2)
		go func() { defer wg.Done(); rc.Run(ctx) }()
		go func() { defer wg.Done(); p.joinRooms(ctx, rc) }()
	}
	<-ctx.Done()
	wg.Wait()
	if outer.Err() == nil {
		return ErrClosed
	}
	return outer.Err()
}

// ErrClosed is what Run returns when Close ended it, or was called
// before it.
var ErrClosed = errors.New("minca/peers: closed")

// Close ends p: every connection Run, Serve and Handler run is closed
// with sync/closed once what was pushed on it is acknowledged (at most
// Options.DrainFor), Run returns ErrClosed, and the goroutines p started
// have ended, and its feeds let go, when Close returns. A connection
// given to Serve later is closed at once. Connections of Sync are the
// caller's, ended by its ctx. Close may be called more than once; it
// returns nil.
func (p *Peers) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.end()
	p.running.Wait()
	p.idle.watchers.Wait()
	p.feeds.closeIdle()
	return nil
}

// Status is what a node tells of one connection and its sessions
// (minca peers).
type Status struct {
	// Via is how it was made: "dial URL", "accept", "webrtc ROOM".
	Via string `json:"via"`
	// State: connected, or for a dialled peer connecting or waiting (to
	// dial again after a failure).
	State   string `json:"state"`
	Peer    string `json:"peer,omitempty"`    // the key it proved
	Account string `json:"account,omitempty"` // its note's issuer; "" for a carrier
	Since   string `json:"since,omitempty"`
	// LastError is why the last connection to a dialled peer ended.
	LastError string          `json:"lastError,omitempty"`
	Sessions  []SessionStatus `json:"sessions"`
	// Totals count the sessions that ended on this connection.
	Totals Stats `json:"totals"`
}

// SessionStatus is one session's state.
type SessionStatus struct {
	Space  string `json:"space"`
	Opener bool   `json:"opener"`
	Phase  string `json:"phase"`
	// Ended is why it ended, "" while it runs.
	Ended string `json:"ended,omitempty"`
	Stats
	// Transfers are the session's file transfers in hand (docs/sync.md
	// §7.7), so a file never fetched shows where its transfer stands.
	Transfers []TransferStatus `json:"transfers,omitempty"`
}

func (s *session) status() SessionStatus {
	s.mu.Lock()
	st := SessionStatus{Space: s.space, Opener: s.opener, Phase: s.phase, Stats: s.stats}
	if s.end != nil {
		st.Ended = s.end.code
	}
	s.mu.Unlock()
	// Not under s.mu: a transfer's writer posts (s.mu) under s.files.mu.
	st.Transfers = s.transfers()
	return st
}

func (c *conn) status() Status {
	st := Status{Via: c.via, State: "connected", Peer: c.peer.DID, Account: c.peer.Root,
		Since: c.since.UTC().Format(time.RFC3339), Sessions: []SessionStatus{}}
	for _, s := range c.list() {
		st.Sessions = append(st.Sessions, s.status())
	}
	sort.Slice(st.Sessions, func(i, j int) bool { return st.Sessions[i].Space < st.Sessions[j].Space })
	c.mu.Lock()
	st.Totals = c.totals
	c.mu.Unlock()
	return st
}

// Status lists the dialled peers (connected or not) and every other
// connection, with their sessions.
func (p *Peers) Status() []Status {
	p.mu.Lock()
	conns := make([]*conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	dials := map[string]dialState{}
	for u, d := range p.dials {
		dials[u] = *d
	}
	p.mu.Unlock()
	out := []Status{}
	seen := map[string]bool{}
	for _, c := range conns {
		st := c.status()
		if d, ok := dials[c.url]; ok && c.url != "" {
			st.LastError = d.lastErr
			seen[c.url] = true
		}
		out = append(out, st)
	}
	for u, d := range dials {
		if !seen[u] {
			out = append(out, Status{Via: "dial " + u, State: d.state, LastError: d.lastErr, Sessions: []SessionStatus{}})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Via < out[j].Via || out[i].Via == out[j].Via && out[i].Peer < out[j].Peer
	})
	return out
}
