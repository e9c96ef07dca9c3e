package peers

import (
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
		var ok bool
		ids, wake, ok = s.cur.read(ids[:0])
		if !ok {
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

// remember notes a version the peer sent, so it is not pushed back.
func (s *session) remember(v *record.Version) {
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
