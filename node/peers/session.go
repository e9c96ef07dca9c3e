package peers

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/negentropy"
	"github.com/minca-go/minca/negentropy/enginestore"
	"github.com/minca-go/minca/space"
)

// Session limits past the wire's (docs/sync.md §7.3).
const (
	inboxSize    = 4       // messages waiting for a session's reader
	maxRounds    = 4096    // negentropy rounds in one reconciliation
	maxDiff      = 1 << 21 // ids one reconciliation may find missing on either side
	maxLiveQueue = 8192    // versions waiting to be pushed live before the session is behind
	maxBodyQueue = 1024    // stubs whose bodies wait to be asked for
	recentSize   = 8192    // ids received from the peer, not pushed back to it
	maxRefused   = 256     // refusals before a session is ended, when more than it stored
	maxUseless   = 4096    // versions that brought nothing before a session is ended
	// negReserve is what of a connection's SendQueue answers and pushes
	// leave free for negentropy's answers, so a reconciliation goes on in
	// messages of a useful size while versions flow.
	negReserve = 1 << 20
)

// Stats count what one session, or several, carried.
type Stats struct {
	Sent     int64 `json:"sent"`     // versions sent (answers and pushes)
	Received int64 `json:"received"` // versions received that the store took in new
	Later    int64 `json:"later"`    // versions received that wait (02 §9.5)
	Refused  int64 `json:"refused"`  // versions received that the judge refused
	Held     int64 `json:"held"`     // versions received already held, or outside the scope
	// PeerRefused is how many of the versions pushed the peer refused.
	PeerRefused   int64 `json:"peerRefused"`
	BytesSent     int64 `json:"bytesSent"`     // session messages, as framed
	BytesReceived int64 `json:"bytesReceived"` // session messages, as framed
	NegBytes      int64 `json:"negentropyBytes"`
	Rounds        int64 `json:"rounds"` // negentropy rounds
}

func (s *Stats) add(o Stats) {
	s.Sent += o.Sent
	s.Received += o.Received
	s.Later += o.Later
	s.Refused += o.Refused
	s.Held += o.Held
	s.PeerRefused += o.PeerRefused
	s.BytesSent += o.BytesSent
	s.BytesReceived += o.BytesReceived
	s.NegBytes += o.NegBytes
	s.Rounds += o.Rounds
}

// Phases of a session.
const (
	PhaseOpening     = "opening"
	PhaseReconciling = "reconciling"
	PhaseLive        = "live"
	PhaseEnded       = "ended"
)

// endError is why a session ended.
type endError struct {
	code, msg string
	remote    bool
}

func (e *endError) Error() string {
	if e.remote {
		return "the peer ended the session: " + e.code + ": " + e.msg
	}
	return e.code + ": " + e.msg
}

func ended(code, format string, args ...any) *endError {
	return &endError{code: code, msg: fmt.Sprintf(format, args...)}
}

// wantJob is a WANT the peer sent, waiting for its answer.
type wantJob struct {
	flag byte
	ids  []canonical.ID
}

// session syncs one space over one connection (docs/sync.md §7). Two
// goroutines: run reads the inbox (negentropy, admitting, bookkeeping) and
// never waits on the network beyond posting a bounded number of small
// messages; write sends, in order of priority, small messages, answers,
// pushes and wants, each within the peer's credit. So neither side's
// reader waits on its own sends, and two sessions cannot deadlock.
type session struct {
	c      *conn
	sid    uint64
	opener bool
	space  string
	scope  enginestore.Scope
	live   bool

	inbox  chan *message
	opened chan struct{} // closed once the NEG-OPEN is queued first (an opener's), or came (a responder's)
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	running atomic.Int32 // the session's goroutines not yet ended
	onEnd   func()       // run once done is closed: the connection forgets the session

	counted bool    // a live session counted in the peer's share (guard)
	feed    *feed   // the space's events and sync-order index
	cur     *cursor // live: this session's place in the feed

	mu         sync.Mutex
	kick       chan struct{} // wakes write
	drained    chan struct{} // told when a message of ctrl went out
	ctrl       [][]byte      // small messages, sent first; their bytes are in the connection's SendQueue
	unsentNeg  int           // NEG-OPEN and NEG-MSG in ctrl, or being written
	unsentAdm  int           // ADMITTED in ctrl, or being written
	serve      []wantJob     // the peer's WANTs, answered in order
	pushQ      []canonical.ID
	pushOut    int // pushes not yet acknowledged by the peer
	pushIn     int // the peer's pushes not yet acknowledged by us
	committing int // VERSIONS received and not yet committed
	wantQ      []canonical.ID
	bodyQ      []canonical.ID
	wantsOut   int
	recent     map[canonical.ID]struct{}
	phase      string
	negDone    bool
	answerCap  int           // the allowance of the last negentropy answer (responder)
	settled    chan struct{} // closed when a reconciliation has nothing left in flight
	settledOK  bool
	stats      Stats
	end        *endError

	admit *engine.Pipeline[*admission] // the VERSIONS received (receive.go)

	// The versions received that wait, for admit's Done alone, one batch
	// at a time (unresolved.go).
	unresolved      []later
	unresolvedBytes int64
	resolved        int64
	recheckAt       int
	recheckBytes    int64

	neg    *negentropy.Client // opener
	negSrv *negentropy.Server // responder
	// listed: where the ids the responder listed are held, so that the
	// peer's WANTs of them read no id entries (send.go answer); within
	// the connection's listedRoom.
	listed *enginestore.Listed

	files sessionFiles // file transfers (files.go)
}

func newSession(c *conn, sid uint64, opener bool, p *openParams) *session {
	ctx, cancel := context.WithCancel(c.ctx)
	s := &session{
		c: c, sid: sid, opener: opener, space: p.Space, live: p.Live,
		scope: scopeOf(p.Space, p.Collections),
		inbox: make(chan *message, inboxSize), ctx: ctx, cancel: cancel, done: make(chan struct{}),
		kick: make(chan struct{}, 1), drained: make(chan struct{}, 1), recent: map[canonical.ID]struct{}{},
		phase: PhaseOpening, settled: make(chan struct{}),
	}
	s.files.init()
	s.listed = enginestore.NewListed(c.listedRoom)
	s.opened = make(chan struct{})
	if !opener {
		close(s.opened)
	}
	return s
}

// scopeOf is what a session over collections holds: those collections and
// the access history, without which nothing in them can be judged
// (02 §9.4; 06 §1.3).
func scopeOf(spaceID string, colls []string) enginestore.Scope {
	sc := enginestore.Scope{Space: spaceID}
	if len(colls) == 0 {
		return sc
	}
	sc.Collections = slices.Clone(colls)
	for k := space.KindRole; k <= space.KindSucceed; k++ {
		sc.Collections = append(sc.Collections, k.Collection())
	}
	// A private space's keys and boxes are read wherever its records are.
	sc.Collections = append(sc.Collections, "sys.box", "sys.memberkey", "sys.profile")
	slices.Sort(sc.Collections)
	sc.Collections = slices.Compact(sc.Collections)
	return sc
}

func (s *session) inScope(coll string) bool {
	return len(s.scope.Collections) == 0 || slices.Contains(s.scope.Collections, coll)
}

func (s *session) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// post queues a small message for write.
func (s *session) post(m []byte) {
	s.mu.Lock()
	s.queueLocked(m)
	s.mu.Unlock()
	s.wake()
}

// queueLocked adds m to ctrl, counting its bytes against the connection's
// SendQueue without waiting: what the reader posts is bounded by the
// peer's credit (awaitCredit), and the reader never waits on its own
// sends. s.mu is held.
func (s *session) queueLocked(m []byte) {
	s.c.out.force(len(m))
	switch m[0] {
	case msgNegOpen, msgNegMsg:
		s.unsentNeg++
	case msgAdmitted:
		s.unsentAdm++
	}
	s.ctrl = append(s.ctrl, m)
}

// queueOpen queues an opener's NEG-OPEN ahead of whatever its other
// goroutines queued meanwhile (FILE-WANTs, while the sync order is
// built), and lets write send: anything of the session sent before its
// NEG-OPEN is for a session the peer has not opened, and dropped there
// (§7.2), and what waits on its answer would wait for ever.
func (s *session) queueOpen(m []byte) {
	s.mu.Lock()
	s.queueLocked(m)
	copy(s.ctrl[1:], s.ctrl[:len(s.ctrl)-1])
	s.ctrl[0] = m
	s.mu.Unlock()
	close(s.opened)
	// A transfer asked for meanwhile has waited on the NEG-OPEN, not on
	// the peer: its stall wait starts now.
	now := time.Now()
	s.files.mu.Lock()
	for _, x := range s.files.fetching {
		x.lastData = now
	}
	s.files.mu.Unlock()
	s.wake()
}

// sentCtrl is told that a message of ctrl went out (or never will).
func (s *session) sentCtrl(m []byte) {
	s.c.out.give(len(m))
	s.mu.Lock()
	switch m[0] {
	case msgNegOpen, msgNegMsg:
		s.unsentNeg--
	case msgAdmitted:
		s.unsentAdm--
	}
	s.mu.Unlock()
	select {
	case s.drained <- struct{}{}:
	default:
	}
}

// awaitCredit waits, before m is handled, while the peer sends more than
// its credit lets it before it has read what it asked for: a NEG-MSG while
// the answer to its last is unwritten, a push while as many ADMITTED as it
// may have pushes unacknowledged are. An honest peer never does (it waits
// for the answer), so only the moment of writing is waited for; a peer
// that does not read is not answered further, and since this session's
// reader waits, so does the connection's: nothing more of the peer's is
// read. Past SlowAfter the connection ends with sync/slow.
func (s *session) awaitCredit(m *message) *endError {
	over := func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		switch {
		case m.typ == msgNegMsg:
			return s.unsentNeg > 0
		case m.typ == msgVersions && m.flag == versPush:
			return s.pushIn < MaxPushesOut && s.pushIn+s.unsentAdm >= MaxPushesOut
		}
		return false
	}
	if !over() {
		return nil
	}
	t := time.NewTimer(s.c.p.lim.SlowAfter)
	defer t.Stop()
	for over() {
		select {
		case <-s.drained:
		case <-t.C:
			msg := fmt.Sprintf("the peer sent more needing an answer without reading the answers for %v", s.c.p.lim.SlowAfter)
			s.c.c.CloseWith(CodeSlow, msg)
			return ended(CodeSlow, "%s", msg)
		case <-s.ctx.Done():
			return ended(CodeClosed, "the session was closed")
		}
	}
	return nil
}

// finish ends the session once, telling the peer unless it told us. A
// peer ended for what it did is told even behind what it has not read
// (a flood of asks while not reading is what ends it): it has SlowAfter
// to read, as for any answer, and past that its connection ends with
// sync/slow, so a session never ends unsaid on a connection that goes
// on. A session closed with the node or its connection is told for a
// second at most.
func (s *session) finish(e *endError) {
	s.mu.Lock()
	if s.end != nil {
		s.mu.Unlock()
		return
	}
	s.end = e
	s.phase = PhaseEnded
	s.mu.Unlock()
	s.c.p.log.Debug("session ended", "space", s.space, "sid", s.sid, "code", e.code, "msg", e.msg, "remote", e.remote, "peer", s.c.peer.DID)
	if !e.remote && s.c.c.Err() == nil {
		wait := s.c.p.lim.SlowAfter
		if e.code == CodeClosed {
			wait = time.Second
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		slow := func() {
			s.c.c.CloseWith(CodeSlow, fmt.Sprintf("the peer did not read, for %v, why its session ended (%s)", wait, e.code))
		}
		// The wait bounds the write too: a write under way is not cut
		// short by ctx, and would otherwise wait the transport's
		// WriteTimeout.
		var closing *time.Timer
		if e.code != CodeClosed {
			closing = time.AfterFunc(wait, slow)
		}
		err := s.c.send(ctx, s, encodeNegErr(s.sid, e.code, e.msg))
		cancel()
		if closing != nil && closing.Stop() && err != nil && s.c.c.Err() == nil {
			slow()
		}
	}
	s.cancel()
}

// Err is why the session ended, nil while it runs.
func (s *session) Err() *endError {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.end
}

// start runs the session's goroutines; for an opener it sends NEG-OPEN.
// first, for a responder, is its NEG-OPEN.
func (s *session) start(first *message) {
	s.c.p.log.Debug("session started", "space", s.space, "sid", s.sid, "peer", s.c.peer.DID)
	s.feed = s.c.p.feeds.acquire(s.c.host.Store(), s.space)
	if s.live {
		// Followed before the reconciliation reads the order, so nothing
		// admitted in between is missed. (Under s.mu: a closing node's
		// drain reads it; the session is listed already.)
		cur := s.feed.follow()
		s.mu.Lock()
		s.cur = cur
		s.mu.Unlock()
	}
	// The session's goroutines; the last to end releases it, so that no
	// goroutine of its own only waits for the others (a live session's
	// cost is mostly its goroutines' stacks).
	jobs := []func(){s.write, func() { s.run(first) }}
	if s.live {
		// Files move over live sessions (docs/sync.md §7.7).
		jobs = append(jobs, s.fetchFiles)
	}
	if s.cur != nil {
		jobs = append(jobs, s.pushLive)
	}
	if s.opener && !s.live {
		jobs = append(jobs, func() {
			select {
			case <-s.settled:
				s.finish(ended(CodeDone, "reconciled"))
			case <-s.ctx.Done():
			}
		})
	}
	s.running.Store(int32(len(jobs)))
	for _, job := range jobs {
		go func() {
			defer s.exit()
			job()
		}()
	}
}

// exit is the end of one of the session's goroutines; the last one gives
// back what the session held, marks it done, and tells its connection.
func (s *session) exit() {
	if s.running.Add(-1) != 0 {
		return
	}
	s.release()
	close(s.done)
	if s.onEnd != nil {
		s.onEnd()
	}
}

// release gives back what the ended session held: its feed, its live
// share, and its queued bytes, sent and received.
func (s *session) release() {
	s.c.p.idle.unpark(s)
	s.endFiles()
	s.listed.Close()
	s.mu.Lock()
	cur := s.cur
	s.mu.Unlock()
	if cur != nil {
		cur.f.unfollow()
	}
	s.c.p.feeds.release(s.feed)
	if s.counted {
		s.c.p.guard.giveLive(s.c.peer.DID, s.c.addr)
	}
	s.mu.Lock()
	ctrl := s.ctrl
	s.ctrl = nil
	s.mu.Unlock()
	for _, m := range ctrl {
		s.sentCtrl(m)
	}
	s.dropInbox()
}

// dropInbox takes what waits in the inbox of an ended session, giving
// its bytes back to the connection.
func (s *session) dropInbox() {
	for {
		select {
		case m := <-s.inbox:
			s.c.in.give(m.size)
		default:
			return
		}
	}
}

// run reads the inbox until the session ends.
func (s *session) run(first *message) {
	s.admit = s.newAdmit()
	defer func() {
		s.cancel()
		s.admit.Close() // what is committing is counted before the session is released
	}()
	if s.opener {
		if e := s.openNeg(); e != nil {
			s.finish(e)
			return
		}
	} else if e := s.handle(first); e != nil {
		s.fail(e)
		return
	}
	for {
		var m *message
		select {
		case m = <-s.inbox:
		case <-s.ctx.Done():
			s.admitInbox()
			s.finish(ended(CodeClosed, "the session was closed"))
			return
		}
		if m.typ != msgVersions {
			// Anything else acts on what is held: the batches before it land first.
			if e := s.flush(); e != nil {
				s.c.in.give(m.size)
				s.finish(e)
				return
			}
		}
		e := s.awaitCredit(m)
		if e == nil {
			e = s.handle(m)
		}
		s.c.in.give(m.size)
		if e != nil {
			s.fail(e)
			return
		}
	}
}

// admitInbox admits the VERSIONS an ending session read and did not
// handle yet: they arrived whole, and are admitted as those already in
// the pipeline are. Anything else there is dropped.
func (s *session) admitInbox() {
	for {
		select {
		case m := <-s.inbox:
			if m.typ == msgVersions {
				s.received(m) // the session is over: what it would end is moot
			}
			s.c.in.give(m.size)
		default:
			return
		}
	}
}

// fail ends the session for what a message did, once the VERSIONS received
// before it are acted on: what the peer sent before it misbehaved is still
// judged, and its forgeries count against it (Limits.Forgeries), as they
// would not if ending the session cut their checks short.
func (s *session) fail(e *endError) {
	s.admit.Flush() // a batch that ends the session itself ends it first
	s.finish(e)
}

// handle acts on one message from the peer.
func (s *session) handle(m *message) *endError {
	switch m.typ {
	case msgNegOpen:
		if s.opener {
			return ended(CodeUnexpected, "NEG-OPEN from the responder")
		}
		st, e := s.build()
		if e != nil {
			return e
		}
		srv, err := negentropy.NewServer(st, s.negLimit())
		if err != nil {
			return ended(CodeInternal, "negentropy: %v", err)
		}
		st.List(s.listed) // where each id listed is held, for the WANTs that follow
		s.mu.Lock()
		s.negSrv, s.phase = srv, PhaseReconciling
		s.mu.Unlock()
		return s.serverRound(m.body)
	case msgNegMsg:
		if s.opener {
			return s.clientRound(m.body)
		}
		if s.negSrv == nil {
			return ended(CodeUnexpected, "NEG-MSG after NEG-CLOSE")
		}
		return s.serverRound(m.body)
	case msgNegClose:
		if s.opener || s.negSrv == nil {
			return ended(CodeUnexpected, "NEG-CLOSE with no reconciliation open")
		}
		s.mu.Lock()
		s.negSrv, s.phase = nil, PhaseLive
		s.mu.Unlock()
		return nil
	case msgNegErr:
		return &endError{code: m.code, msg: m.text, remote: true}
	case msgWant:
		s.mu.Lock()
		if len(s.serve) >= MaxWantsOut {
			s.mu.Unlock()
			return ended(CodeWantFlood, "a WANT with %d unanswered; at most %d", len(s.serve), MaxWantsOut)
		}
		s.serve = append(s.serve, wantJob{flag: m.flag, ids: m.ids})
		s.mu.Unlock()
		s.wake()
		return nil
	case msgVersions:
		return s.received(m)
	case msgFileWant, msgFileData, msgFileCredit, msgFileStop:
		return s.handleFile(m)
	case msgAdmitted:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.pushOut == 0 {
			return ended(CodeUnexpected, "ADMITTED with no push unacknowledged")
		}
		s.pushOut--
		s.stats.PeerRefused += int64(m.counts.Refused)
		s.checkSettled()
		s.wake()
		return nil
	}
	return ended(CodeUnexpected, "message type 0x%02x", m.typ)
}
