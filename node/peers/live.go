package peers

import (
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

// pushLive queues the versions the store admits for the peer, until the
// session ends; a cursor that fell behind the space's feed, or a queue
// past its bound, ends the session as behind, and the opener opens it
// again.
func (s *session) pushLive() {
	var ids []canonical.ID
	for {
		var wake <-chan struct{}
		var state readState
		ids, wake, state = s.cur.read(ids[:0])
		switch state {
		case readClosed:
			s.finish(ended(CodeClosed, "the store is closing"))
			return
		case readBehind:
			s.finish(ended(CodeBehind, "live events were dropped"))
			return
		}
		if len(ids) > 0 {
			s.mu.Lock()
			for _, d := range ids {
				if _, echo := s.recent[d]; !echo {
					s.pushQ = append(s.pushQ, d)
				}
			}
			n := len(s.pushQ)
			s.mu.Unlock()
			if n > maxLiveQueue {
				s.finish(ended(CodeBehind, "more than %d versions waiting to be pushed", maxLiveQueue))
				return
			}
			s.wake()
			continue
		}
		select {
		case <-s.ctx.Done():
			return
		case <-wake:
		}
	}
}

// remember notes a version the peer sent, so it is not pushed back; a
// session that is not live pushes nothing, so notes nothing.
func (s *session) remember(v *record.Version) {
	if !s.live {
		return
	}
	d, ok := v.Digest()
	if !ok {
		return
	}
	s.mu.Lock()
	if len(s.recent) >= recentSize {
		clear(s.recent)
	}
	s.recent[d] = struct{}{}
	s.mu.Unlock()
}

// drainPushes waits, at most d, until no session of the connection has a
// version to push or a push unacknowledged: the node is closing, and what
// it pushed is held by the peer once acknowledged. The state must hold at
// two looks a tick apart, so an event the space's feed took and has not
// yet filed counts too.
func (c *conn) drainPushes(d time.Duration) {
	if d <= 0 {
		return
	}
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for settled := 0; settled < 2; {
		if c.pushesSettled() {
			settled++
		} else {
			settled = 0
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return
		case <-c.ctx.Done():
			return
		}
	}
}

// pushesSettled reports whether every live session has pushed what its
// feed brought and had it acknowledged.
func (c *conn) pushesSettled() bool {
	for _, s := range c.list() {
		s.mu.Lock()
		cur, busy := s.cur, len(s.pushQ) > 0 || s.pushOut > 0
		s.mu.Unlock()
		if cur == nil || s.ctx.Err() != nil {
			continue
		}
		if busy || cur.behind() {
			return false
		}
	}
	return true
}
